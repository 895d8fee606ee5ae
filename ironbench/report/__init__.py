"""The HTML report: one self-contained page per run (and per comparison), from the store.

gather (SQL, read-only, into the typed records of `records`) → listing (what a large run's
page lists) → verdict (sentences) → sections (markup per section, SVG from `svg`) → page
(the whole file, its style and script from `static/`). All but gather are pure.
"""

from dataclasses import dataclass
from pathlib import Path

from ironbench.core.files import write_atomic
from ironbench.report.records import Verdict
from ironbench.report.verdict import console_text, verdicts


def default_output(out_dir: Path, run_id: str, compare_base: str | None = None) -> Path:
    name = "report.html" if compare_base is None else f"compare_{compare_base}.html"
    return Path(out_dir) / run_id / name


@dataclass(frozen=True)
class Report:
    """What writing a report did: where the page is (None: not written), and what it says."""

    path: Path | None
    verdicts: list[Verdict]
    warnings: tuple[str, ...] = ()  # a comparison's, as `ironbench compare` gives them

    def console(self, width: int = 100, only: tuple[str, ...] | None = None) -> str:
        """The verdicts as console lines (`only`: those about these modes, e.g. the gate's)."""
        return console_text([v for v in self.verdicts if only is None or v.mode in only], width)


def write_report(
    store_path: Path,
    out_dir: Path,
    run_id: str,
    compare_base: str | None = None,
    output: Path | None = None,
    alpha: float = 0.05,
    write: bool = True,
) -> Report:
    """Gather the run's data, judge it, and (with `write`) write the page; returns where
    and what it said. The page is written whole or not at all. The run's own report, in its
    folder, is a fact of the run: recorded in the store first, so that a rebuild of the
    folder writes it again."""
    from ironbench.report.gather import gather
    from ironbench.report.page import render

    data = gather(Path(store_path), run_id, compare_base, alpha)
    items = verdicts(data)
    warnings = tuple(data.compare.comparison.warnings) if data.compare else ()
    if not write:
        return Report(None, items, warnings)
    default = default_output(out_dir, run_id, compare_base)
    path = Path(output) if output is not None else default
    if compare_base is None and path == default:
        _record(Path(store_path), Path(out_dir), run_id)
    write_atomic(path, render(data, items), "the report's folder")
    return Report(path, items, warnings)


def _record(store_path: Path, out_dir: Path, run_id: str) -> None:
    """The `report_written` fact, once per run. A store this process cannot write is left as it
    is (it cannot be rebuilt from either); a full one stops here, naming the run."""
    from ironbench.core.errors import StoreFull, StoreUnwritable
    from ironbench.core.events import ReportWritten
    from ironbench.run.guards import resume_command
    from ironbench.run.session import stopped_on_full_disk
    from ironbench.store import EventStore, Pending

    try:
        with EventStore(store_path) as store:  # gather checked its schema: nothing to migrate
            if any(store.read(run_id, types=("report_written",), limit=1)):
                return
            try:
                store.append(run_id, [Pending("report", ReportWritten(), idempotency_key=f"report:{run_id}")])
            except StoreFull as full:
                raise stopped_on_full_disk(full, store, run_id, resume_command(run_id, out_dir, store_path)) from None
    except StoreUnwritable:
        pass
