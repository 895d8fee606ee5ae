"""The viewer: a read-only local web app over the event store, live as events are appended.

reader (SQLite, read-only) and report.gather (DuckDB, read-only) → pages (markup; the
report's own sections for a run) and live (the events tail, server-sent events) → app
(routes, behind guard) → server (uvicorn). `ironbench view` calls `serve`.
"""

from typing import TYPE_CHECKING

from ironbench import lazy_exports

if TYPE_CHECKING:
    from ironbench.view.server import Address as Address
    from ironbench.view.server import serve as serve

__getattr__ = lazy_exports(__name__, {"serve": "server", "Address": "server"})
__all__ = ["Address", "serve"]
