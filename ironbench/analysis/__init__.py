"""Questions asked of the store, read-only through DuckDB: queries, runs, logs, exports, comparisons.

The names below load on first use, so the pure comparison (`compare.decide`) can be used
without DuckDB.
"""

from typing import TYPE_CHECKING

from ironbench import lazy_exports

if TYPE_CHECKING:
    from ironbench.analysis.compare import (
        Comparison as Comparison,
    )
    from ironbench.analysis.compare import (
        compare_runs as compare_runs,
    )
    from ironbench.analysis.compare import (
        decide as decide,
    )
    from ironbench.analysis.compare import (
        format_comparison as format_comparison,
    )
    from ironbench.analysis.export import export_views as export_views
    from ironbench.analysis.junit import junit_xml as junit_xml
    from ironbench.analysis.junit import write_junit as write_junit
    from ironbench.analysis.query import (
        QueryResult as QueryResult,
    )
    from ironbench.analysis.query import (
        connect as connect,
    )
    from ironbench.analysis.query import (
        format_result as format_result,
    )
    from ironbench.analysis.query import (
        run_query as run_query,
    )
    from ironbench.analysis.query import (
        run_sql as run_sql,
    )
    from ironbench.analysis.show import (
        invocation_logs as invocation_logs,
    )
    from ironbench.analysis.show import (
        list_runs as list_runs,
    )
    from ironbench.analysis.show import (
        show_json as show_json,
    )
    from ironbench.analysis.show import (
        show_run as show_run,
    )
    from ironbench.analysis.show import (
        show_text as show_text,
    )

_EXPORTS = {
    **dict.fromkeys(("Comparison", "compare_runs", "decide", "format_comparison"), "compare"),
    **dict.fromkeys(("export_views",), "export"),
    **dict.fromkeys(("junit_xml", "write_junit"), "junit"),
    **dict.fromkeys(("QueryResult", "connect", "format_result", "run_query", "run_sql"), "query"),
    **dict.fromkeys(("invocation_logs", "list_runs", "show_json", "show_run", "show_text"), "show"),
}
__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
