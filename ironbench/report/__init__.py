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

    def console(self, width: int = 100) -> str:
        return console_text(self.verdicts, width)


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
    and what it said. The page is written whole or not at all."""
    from ironbench.report.gather import gather
    from ironbench.report.page import render

    data = gather(Path(store_path), run_id, compare_base, alpha)
    items = verdicts(data)
    if not write:
        return Report(None, items)
    path = Path(output) if output is not None else default_output(out_dir, run_id, compare_base)
    write_atomic(path, render(data, items), "the report's folder")
    return Report(path, items)
