"""What the viewer reads from the store, through one read-only SQLite connection per reader.

The store is opened `mode=ro` (SQLite refuses any write on it) and never migrated. The
report's own data comes through DuckDB (report.gather, read-only too); this module holds
the small, frequent reads: the event tail, each run's counts and status, one case's
invocations, one invocation, one conversation.
"""

import threading
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ironbench.analysis.recorded import FenceSeen, fences_of, started_event
from ironbench.analysis.show import logs_in, run_status
from ironbench.core.errors import RunNotFound, StoreError
from ironbench.core.events import (
    EventType,
    InvocationCompleted,
    ModelCalled,
    ModelCallPriced,
    RecordedEvent,
    VariantGenerated,
)
from ironbench.core.labels import group_path_sql, natural_key
from ironbench.core.model_calls import held, resolved
from ironbench.report.records import Score, Thread, Turn
from ironbench.store import EventStore, Holder, Lease, open_read_only, sqlite_failure
from ironbench.suite import Suite, suite_of_run
from ironbench.view.facts import ai_rewrite

# Each run's counts as `ironbench runs` counts them: infrastructure errors (the backend
# failed, and the attempts a re-run superseded) apart, in no rate. `{where}` narrows every
# part to one run, so a live update reads only that run's rows.
_RUNS = """
SELECT r.run_id, r.suite_id, r.mode, r.status, r.label, r.started_utc, r.finished_utc,
       coalesce(i.invocations, 0), coalesce(i.successes, 0), coalesce(i.infra_errors, 0) + coalesce(s.superseded, 0),
       coalesce(t.turns, 0), r.imported, c.cost, c.unpriced
FROM runs r
LEFT JOIN (SELECT run_id, count(*) FILTER (WHERE infra_error IS NULL) AS invocations,
                  count(*) FILTER (WHERE infra_error IS NULL AND success) AS successes,
                  count(*) FILTER (WHERE infra_error IS NOT NULL) AS infra_errors
           FROM invocations {where} GROUP BY run_id) i ON i.run_id = r.run_id
LEFT JOIN (SELECT run_id, count(*) AS superseded FROM superseded_invocations {where} GROUP BY run_id) s
       ON s.run_id = r.run_id
LEFT JOIN (SELECT run_id, count(*) AS turns FROM turns {where} GROUP BY run_id) t ON t.run_id = r.run_id
LEFT JOIN (SELECT run_id, sum(cost_usd) AS cost, count(*) FILTER (WHERE pricing = 'unpriced') AS unpriced
           FROM call_costs {where} GROUP BY run_id) c ON c.run_id = r.run_id
{run_where}
ORDER BY r.started_utc, r.run_id
"""


@dataclass(frozen=True, slots=True)
class RunRow:
    """A run as the runs page lists it: `_RUNS`'s columns, in their order."""

    run_id: str
    suite_id: str
    mode: str
    status: str  # as `ironbench runs` derives it (Reader.runs)
    label: str | None
    started_utc: str | None
    finished_utc: str | None
    invocations: int  # infrastructure errors apart
    successes: int
    infra_errors: int  # and the attempts a re-run superseded
    turns: int
    imported: str | None  # where an imported run came from: outputs or store
    cost_usd: float | None = None  # what its priced model calls cost (None: none was priced)
    unpriced_calls: int | None = None  # its calls no price counted

    @property
    def gauntlet(self) -> bool:
        return self.mode == "gauntlet"


@dataclass(frozen=True, slots=True)
class CaseRow:
    """A case of a run, as its drill-down lists it (`Reader.cases`'s columns, in their order)."""

    case_id: str
    mode: str
    groups: int
    attempts: int
    successes: int


# Decisions per run, mode and kind: the runs page's one-line verdict.
_TALLIES = """
SELECT run_id, coalesce(case_mode, mode), decision, count(*) FROM decisions {where} GROUP BY 1, 2, 3
"""
# Gauntlet runs decide nothing: per engine, conversations in which the scorer saw a violation.
_VIOLATIONS = """
SELECT run_id, engine, count(DISTINCT scenario || '/' || conversation),
       count(DISTINCT CASE WHEN violated THEN scenario || '/' || conversation END)
FROM turn_scores WHERE scorer = ? {and_where} GROUP BY 1, 2 ORDER BY 1, 2
"""


_FENCED_OUT = "SELECT count(*) FROM invocations WHERE run_id = ? AND failure_cause = 'fence'"


@dataclass(frozen=True, slots=True)
class Decided:
    """A run's decisions as the runs table sums them up: per mode, how many of each kind; and, of
    a gauntlet (which decides nothing), per engine, its conversations and those the primary scorer
    saw violated (`Reader.tallies`, `Reader.violations`)."""

    tallies: dict[str, dict[str, int]]  # mode -> decision -> how many
    engines: Sequence[tuple[str, int, int]] = ()  # (engine, conversations, conversations violated)
    below_full: str | None = None  # the fence its targets ran in, when below full (its level or "unfenced")
    fenced_out: int = 0  # its invocations that failed for what their fence withheld (failure_cause fence)

    @property
    def decisions(self) -> int:
        return sum(sum(counts.values()) for counts in self.tallies.values())


class Reader:
    """A read-only connection to the store, safe to share between threads (one statement at a time)."""

    def __init__(self, store_path: Path) -> None:
        self.store_path = Path(store_path)
        self.store: EventStore = open_read_only(self.store_path)
        self.lock = threading.Lock()

    def close(self) -> None:
        with self.lock:
            self.store.close()

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        import sqlite3

        with self.lock:
            try:
                return self.store.conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise sqlite_failure(self.store_path, "cannot read the store", exc) from exc

    # -- the event tail ----------------------------------------------------------------

    def last_seq(self, run_id: str | None = None) -> int:
        if run_id is None:
            return self.rows("SELECT coalesce(max(seq), 0) FROM events")[0][0]
        return self.rows("SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?", (run_id,))[0][0]

    def events(
        self,
        after: int,
        until: int | None = None,
        run_id: str | None = None,
        limit: int | None = 2000,
        newest: bool = False,
        **only: Any,
    ) -> list[RecordedEvent]:
        """Events with after < seq <= until, in the store's order (`newest`: the last `limit` of
        them); `only` narrows them as `EventStore.read` does (types, case_id)."""
        with self.lock:
            return list(self.store.read(run_id, after, until=until, limit=limit, newest=newest, **only))

    def event(self, run_id: str, seq: int) -> RecordedEvent:
        found = self.events(seq - 1, seq, run_id)
        if not found:
            raise RunNotFound(f"run {run_id}: no event {seq}")
        return found[0]

    # -- runs ----------------------------------------------------------------------------

    def runs(self, run_id: str | None = None) -> list[RunRow]:
        """Every run (or one) with its counts and its status as `ironbench runs` derives it:
        `running` only while its coordinator's lease is alive, else `interrupted` (an imported
        run's as it was recorded); `imported`: where an imported run came from (outputs, store)."""
        params: tuple = ()
        if run_id is None:
            sql = _RUNS.format(where="", run_where="")
        else:
            sql = _RUNS.format(where="WHERE run_id = ?", run_where="WHERE r.run_id = ?")
            params = (run_id,) * 5
        rows = [RunRow(*row) for row in self.rows(sql, params)]
        leases = self._leases(run_id)
        # an imported run's status is as recorded: no coordinator here held it
        return [
            row if row.imported else replace(row, status=run_status(row.run_id, row.status, leases)) for row in rows
        ]

    def run(self, run_id: str) -> RunRow:
        found = self.runs(run_id)
        if not found:
            raise RunNotFound(f"run {run_id!r} not found in {self.store_path}")
        return found[0]

    def _leases(self, run_id: str | None) -> dict[str, Lease]:
        sql = "SELECT run_id, host, pid, process_started, acquired_utc, heartbeat_utc FROM run_leases"
        rows = self.rows(sql + " WHERE run_id = ?", (run_id,)) if run_id else self.rows(sql)
        return {r[0]: Lease(r[0], Holder(r[1], r[2], r[3]), r[4], r[5]) for r in rows}

    def tallies(self, run_id: str | None = None) -> dict[str, dict[str, dict[str, int]]]:
        """run -> mode -> decision -> how many."""
        where = "WHERE run_id = ?" if run_id else ""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for run, mode, decision, count in self.rows(_TALLIES.format(where=where), (run_id,) if run_id else ()):
            out.setdefault(run, {}).setdefault(mode, {})[decision] = count
        return out

    def fenced_out(self, run_id: str) -> int:
        """The run's invocations that failed for what their fence withheld."""
        return int(self.rows(_FENCED_OUT, (run_id,))[0][0])

    def violations(self, scorer: str, run_id: str | None = None) -> dict[str, list[tuple[str, int, int]]]:
        """run -> [(engine, conversations, conversations with a violation)]."""
        and_where = "AND run_id = ?" if run_id else ""
        out: dict[str, list[tuple[str, int, int]]] = {}
        for run, engine, total, violated in self.rows(
            _VIOLATIONS.format(and_where=and_where), (scorer, run_id) if run_id else (scorer,)
        ):
            out.setdefault(run, []).append((engine, total, violated))
        return out

    def suite(self, run_id: str) -> Suite:
        """The suite the run recorded, typed (read once per run: `suite_of_run`)."""
        with self.lock:
            first = started_event(self.store, run_id)
        return suite_of_run(first)

    def fence(self, run_id: str) -> FenceSeen:
        """The fences the run's targets ran in (`analysis.recorded.fences_of`)."""
        with self.lock:
            return fences_of(self.store, run_id)

    # -- progress ------------------------------------------------------------------------

    def group_counts(self, run_id: str) -> dict[str, int]:
        """Invocations recorded per group (infrastructure errors left out: their slots run again)."""
        return dict(
            self.rows(
                f"SELECT {group_path_sql()}, count(*) FROM invocations "
                "WHERE run_id = ? AND infra_error IS NULL GROUP BY 1",
                (run_id,),
            )
        )

    def decided_groups(self, run_id: str) -> set[str]:
        """Groups (and stress ladders: their track's path) that reached their decision."""
        return {
            r[0]
            for r in self.rows(
                f"SELECT DISTINCT {group_path_sql()} FROM decisions WHERE run_id = ?",
                (run_id,),
            )
        }

    def ai_variants(self, run_id: str) -> list[VariantGenerated]:
        """The AI rewrites the run accepted (made before its invocations start)."""
        found = self.events(0, None, run_id, None, types=("variant_generated",))
        return [f.event for f in found if isinstance(f.event, VariantGenerated) and ai_rewrite(f.event)]

    def recent_completions(self, run_id: str, count: int = 20) -> list[str]:
        """When the run's last `count` invocations (or turns) were recorded, oldest first."""
        rows = self.rows(
            "SELECT timestamp_utc FROM (SELECT seq, timestamp_utc FROM events WHERE run_id = ? "
            "AND type IN ('invocation_completed', 'turn_answered') ORDER BY seq DESC LIMIT ?) ORDER BY seq",
            (run_id, count),
        )
        return [r[0] for r in rows]

    # -- drill-down ----------------------------------------------------------------------

    def case_logs(self, run_id: str, case_id: str) -> list[tuple[RecordedEvent, bool, bool]]:
        """Every attempt of a case's invocations, as `ironbench log` finds them."""
        with self.lock:
            return logs_in(self.store, run_id, case_id)

    def cases(self, run_id: str) -> list[CaseRow]:
        """The run's cases by id as people count them (humaneval_2 before humaneval_12): mode,
        groups, invocations."""
        rows = self.rows(
            "SELECT case_id, coalesce(case_mode, mode), count(DISTINCT group_path), count(*), "
            "count(*) FILTER (WHERE infra_error IS NULL AND success), min(seq) "
            "FROM (SELECT case_id, case_mode, mode, group_path, infra_error, success, seq FROM invocations "
            "      WHERE run_id = ? UNION ALL "
            "      SELECT case_id, case_mode, mode, group_path, infra_error, success, seq FROM superseded_invocations "
            "      WHERE run_id = ?) GROUP BY 1, 2 ORDER BY min(seq)",
            (run_id, run_id),
        )
        return sorted((CaseRow(*r[:5]) for r in rows), key=lambda case: natural_key(case.case_id))

    def of_case(self, run_id: str, case_id: str, *types: EventType) -> list[RecordedEvent]:
        """A case's events of these types (its decisions, its variants, its rejected rewrites), in order."""
        return self.events(0, None, run_id, None, types=types, case_id=case_id)

    def invocation(self, run_id: str, seq: int) -> tuple[RecordedEvent, bool, bool]:
        """One recorded invocation attempt, with whether a re-run superseded it and whether
        it lies past its group's decision (surplus), as `ironbench log` says."""
        recorded = self.event(run_id, seq)
        if not isinstance(recorded.event, InvocationCompleted):
            raise RunNotFound(f"run {run_id}: event {seq} is a {recorded.type}, not an invocation")
        for logged, superseded, surplus in self.case_logs(run_id, recorded.event.case_id):
            if logged.seq == seq:
                return recorded, superseded, surplus
        return recorded, False, False

    def model_calls(self, recorded: RecordedEvent, invocation: InvocationCompleted) -> list[ModelCalled]:
        """The calls one attempt of an invocation made to the run's model gateway (each an event on
        the invocation's stream), in the order the gateway received them, every text held by hash
        in place (from `gateway_texts`)."""
        found = self.events(0, None, recorded.run_id, None, types=("model_called",), stream_prefix=recorded.stream)
        calls = [
            f.event
            for f in found
            if isinstance(f.event, ModelCalled) and (f.event.key, f.event.rerun) == (invocation.key, invocation.rerun)
        ]
        hashes = set().union(*map(held, calls))
        texts = dict(
            self.rows(
                f"SELECT sha256, text FROM gateway_texts WHERE run_id = ? AND sha256 IN ({','.join('?' * len(hashes))})",
                (recorded.run_id, *hashes),
            )
            if hashes
            else ()
        )
        made = [ModelCalled.from_dict(resolved(call.to_dict(), texts)) for call in calls]
        return sorted(made, key=lambda call: call.index)

    def call_prices(self, recorded: RecordedEvent, invocation: InvocationCompleted) -> dict[int, ModelCallPriced]:
        """What each call of one attempt of an invocation cost, by the call's index."""
        found = self.events(0, None, recorded.run_id, None, types=("model_call_priced",), stream_prefix=recorded.stream)
        return {
            f.event.index: f.event
            for f in found
            if isinstance(f.event, ModelCallPriced)
            and f.event.index is not None
            and (f.event.key, f.event.rerun) == (invocation.key, invocation.rerun)
        }

    def conversation(self, run_id: str, engine: str, scenario: str, conversation: int) -> Thread:
        """One gauntlet conversation turn by turn with every scorer's verdict (the report's record)."""
        turns = self.rows(
            "SELECT turn, prompt, answer, duration_ms, domain FROM turns "
            "WHERE run_id = ? AND engine = ? AND scenario = ? AND conversation = ? ORDER BY turn",
            (run_id, engine, scenario, conversation),
        )
        if not turns:
            raise RunNotFound(f"run {run_id}: no conversation {conversation} of {engine} in {scenario}")
        scores: dict[int, list[Score]] = {}
        for turn, scorer, violated, detail in self.rows(
            "SELECT turn, scorer, violated, detail FROM turn_scores "
            "WHERE run_id = ? AND engine = ? AND scenario = ? AND conversation = ? ORDER BY turn, scorer",
            (run_id, engine, scenario, conversation),
        ):
            scores.setdefault(turn, []).append(Score(scorer, bool(violated), detail))
        return Thread(
            engine,
            scenario,
            turns[0][4],
            conversation,
            [Turn(t, p, a, d, scores.get(t, [])) for t, p, a, d, _ in turns],
        )

    def conversations(self, run_id: str) -> list[tuple[str, str, int, int]]:
        """(engine, scenario, conversation, turns) of every gauntlet conversation, in recorded order."""
        return [
            (r[0], r[1], r[2], r[3])
            for r in self.rows(
                "SELECT engine, scenario, conversation, count(*) FROM turns WHERE run_id = ? "
                "GROUP BY 1, 2, 3 ORDER BY min(seq)",
                (run_id,),
            )
        ]


def check_store(store_path: Path) -> None:
    """The store exists and its schema is the one this ironbench reads (checked read-only:
    the viewer never migrates)."""
    import sqlite3

    from ironbench.store import SCHEMA_HEAD

    path = Path(store_path)
    if not path.is_file():
        raise StoreError(f"{path}: no store here (run something first, or pass --store)")
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not an ironbench store ({exc})") from None
    revision = row[0] if row else None
    if revision != SCHEMA_HEAD:
        raise StoreError(
            f"{path}: store schema is at revision {revision}, this ironbench needs {SCHEMA_HEAD}: "
            "run `ironbench db upgrade`"
        )
