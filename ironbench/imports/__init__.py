"""History recorded elsewhere, as runs of this store: another harness's outputs tree (in the
spec's layout or the shapes found in the wild), or another ironbench store."""

import os
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ironbench.core.errors import ImportRefused
from ironbench.core.events import InvocationCompleted, RunImported
from ironbench.core.outcome import DEFAULT_RULES, load_rules
from ironbench.imports.outputs import Damaged, ReadRun, read_run, recorded_summaries, run_events
from ironbench.imports.placement import NotATree, Unplaced, find_runs
from ironbench.imports.stores import (
    ChainRefused,
    Forked,
    Merge,
    NotAStore,
    SourceEvent,
    is_sqlite,
    read_source,
    select_run,
)
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.store import EventStore, Foreign, open_store


class _AlreadyHere(Exception):
    """A run this store already holds, as recorded here or from elsewhere: left as it is."""


@dataclass
class RunImport:
    """What importing one run did."""

    run_id: str
    status: str  # imported | extended | unchanged | skipped | refused
    detail: str = ""
    invocations: int = 0
    disagreements: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        if self.status in ("imported", "extended"):
            counts = ", ".join(f"{k} {v}" for k, v in self.disagreements.items())
            against = f"; the record disagrees with its output on {counts}" if counts else ""
            what = "imported" if self.status == "imported" else "added to"
            return f"{self.run_id}: {what}, {self.invocations} invocation(s){against}{self.detail}"
        return f"{self.run_id}: {self.status}{': ' + self.detail if self.detail else ''}"


@dataclass
class ImportReport:
    source: str
    format: str  # outputs | store
    runs: list[RunImport] = field(default_factory=list)

    @property
    def disagreements(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for run in self.runs:
            total.update(run.disagreements)
        return dict(sorted(total.items()))

    @property
    def invocations(self) -> int:
        return sum(r.invocations for r in self.runs)

    def summary(self) -> str:
        counts = Counter(r.status for r in self.runs)
        parts = [f"{n} {status}" for status, n in sorted(counts.items())]
        line = f"{self.source}: {len(self.runs)} run(s) ({', '.join(parts)}), {self.invocations} invocation(s) added"
        if self.disagreements:
            line += "; recorded fields the re-derived facts contradict: " + ", ".join(
                f"{k} {v}" for k, v in self.disagreements.items()
            )
        return line

    def check(self) -> None:
        """Refused runs are bad input: one line naming the first, exit 2 (the rest came in)."""
        refused = [r for r in self.runs if r.status == "refused"]
        if refused:
            more = f" (and {len(refused) - 1} more run(s))" if len(refused) > 1 else ""
            raise ImportRefused(f"{refused[0].detail}{more}")


def _added(events: list, run_id: str, status: str, detail: str = "") -> RunImport:
    marker = next((e.event for e in events if isinstance(e.event, RunImported)), None)
    invocations = sum(1 for e in events if isinstance(e.event, InvocationCompleted))
    disagreements = dict(marker.disagreements) if marker is not None else {}
    return RunImport(run_id, status, detail, invocations, disagreements)


def _outputs_select(
    run: ReadRun, source: str, state: dict[str, str]
) -> Callable[[sqlite3.Connection], tuple[str, list[Foreign]]]:
    def select(conn: sqlite3.Connection) -> tuple[str, list[Foreign]]:
        here = conn.execute("SELECT 1 FROM events WHERE run_id = ? LIMIT 1", (run.run_id,)).fetchone()
        if here is None:
            if conn.execute("SELECT 1 FROM run_leases WHERE run_id = ?", (run.run_id,)).fetchone():
                raise _AlreadyHere("a run of that id is being started in this store")
            state["status"] = "imported"
            return run.run_id, run_events(run, source, None)
        row = conn.execute("SELECT imported FROM runs WHERE run_id = ?", (run.run_id,)).fetchone()
        if row is None or row[0] != "outputs":
            raise _AlreadyHere("already in this store" + (" (imported from a store)" if row and row[0] else ""))
        payloads = conn.execute(
            "SELECT payload FROM events WHERE run_id = ? AND type = 'invocation_completed'", (run.run_id,)
        ).fetchall()
        state["status"] = "extended"
        return run.run_id, run_events(run, source, recorded_summaries(payloads))

    return select


def _from_outputs(
    path: Path, folders: list[Path], store: EventStore, rules: str | None, note: Callable[[str], None]
) -> ImportReport:
    ruleset = load_rules(rules or DEFAULT_RULES)
    report = ImportReport(str(path), "outputs")
    for folder in folders:
        try:
            run = read_run(folder, ruleset, str(path))
            state: dict[str, str] = {}
            added = store.append_foreign(_outputs_select(run, str(path), state))
            result = _added(added, run.run_id, state["status"]) if added else RunImport(folder.name, "unchanged")
        except (Damaged, Unplaced) as exc:
            result = RunImport(folder.name, "refused", str(exc))
        except _AlreadyHere as exc:
            result = RunImport(folder.name, "skipped", str(exc))
        report.runs.append(result)
        note(result.line())
    return report


def _from_store(
    path: Path, runs: dict[str, list[SourceEvent]], store: EventStore, note: Callable[[str], None]
) -> ImportReport:
    report = ImportReport(str(path), "store")
    for run_id, events in runs.items():
        merge = Merge()
        try:
            added = store.append_foreign(select_run(events, str(path), merge))
        except Forked as exc:
            result = RunImport(run_id, "refused", str(exc))
        else:
            if not added:
                result = RunImport(merge.run_id or run_id, "unchanged")
            else:
                renamed = f" (as {merge.run_id}: this store has another run {run_id})" if merge.renamed_from else ""
                status = "imported" if added[0].event.event == "run_started" else "extended"
                result = _added(added, merge.run_id or run_id, status, renamed)
        report.runs.append(result)
        note(result.line())
    return report


def import_history(
    path: Path,
    store_path: Path,
    out_dir: Path,
    rules: str | None = None,
    note: Callable[[str], None] = lambda line: None,
) -> ImportReport:
    """Import `path` (an outputs tree or a run folder of one, or an ironbench store) into the
    store at `store_path`, one transaction per run, and bring the output tree up to date.
    Importing the same history twice adds nothing; a run that cannot be read is named in
    the report and nothing of it is written. `rules` re-derive outcomes (outputs only)."""
    # What the path is, before anything is written (a refused path leaves no store behind).
    runs: dict[str, list[SourceEvent]] = {}
    folders: list[Path] = []
    try:
        if not path.exists():
            raise ImportRefused(f"{path}: no such file or folder")
        if path.is_file():
            if not is_sqlite(path):
                raise ImportRefused(f"{path}: neither an outputs folder nor an ironbench store")
            if store_path.exists() and os.path.samefile(path, store_path):
                raise ImportRefused(f"{path}: is the store it would be imported into")
            runs = read_source(path)
        else:
            folders = find_runs(path)
        load_rules(rules or DEFAULT_RULES)
    except (NotATree, NotAStore, ChainRefused) as exc:
        raise ImportRefused(str(exc)) from None
    store = open_store(store_path, [ReadModel()])
    with store:
        tree = OutputTree(store, out_dir)
        tree.catch_up()
        if path.is_file():
            report = _from_store(path, runs, store, note)
        else:
            report = _from_outputs(path, folders, store, rules, note)
        tree.catch_up()
    return report
