"""Questions asked of the store, read-only through DuckDB: queries, runs, logs, exports, comparisons."""

from ironbench.analysis.compare import Comparison, compare_runs, decide, format_comparison
from ironbench.analysis.export import export_views
from ironbench.analysis.junit import junit_xml, write_junit
from ironbench.analysis.query import QueryResult, connect, format_result, run_query, run_sql
from ironbench.analysis.show import invocation_logs, list_runs, show_json, show_run, show_text

__all__ = [
    "Comparison",
    "QueryResult",
    "compare_runs",
    "connect",
    "decide",
    "export_views",
    "format_comparison",
    "format_result",
    "invocation_logs",
    "junit_xml",
    "list_runs",
    "run_query",
    "run_sql",
    "show_json",
    "show_run",
    "show_text",
    "write_junit",
]
