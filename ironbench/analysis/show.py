"""Listing and showing runs from the read models (through DuckDB, read-only)."""

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ironbench.analysis.costs import run_cost
from ironbench.analysis.model_traffic import model_traffic
from ironbench.analysis.query import QueryResult, connect, run_sql, shipped_queries
from ironbench.analysis.recorded import run_fences, run_proofs
from ironbench.console.numbers import percent
from ironbench.console.printable import printable
from ironbench.core.errors import RunNotFound
from ironbench.core.events import InvocationCompleted, RecordedEvent
from ironbench.core.labels import group_of, natural_key
from ironbench.core.sentences import ladder_verdict
from ironbench.stats import wilson_interval
from ironbench.store import EventStore, Holder, Lease, open_store

if TYPE_CHECKING:
    from ironbench.projections.gauntlet_summary import GauntletSummary

_RUNS = """
SELECT r.run_id, r.suite_id, r.mode, r.status, r.label, r.imported, r.started_utc, r.finished_utc,
       count(i.invocation_key) FILTER (WHERE i.infra_error IS NULL) AS invocations,
       count(i.invocation_key) FILTER (WHERE i.infra_error IS NULL AND i.success::BOOLEAN) AS successes,
       count(i.invocation_key) FILTER (WHERE i.infra_error IS NOT NULL) + coalesce(any_value(s.superseded), 0)
         AS infra_errors,
       r.ironclad_version
FROM store.runs r
LEFT JOIN store.invocations i USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS superseded FROM store.superseded_invocations GROUP BY 1) s USING (run_id)
GROUP BY r.run_id, r.suite_id, r.mode, r.status, r.label, r.imported, r.started_utc, r.finished_utc, r.ironclad_version
ORDER BY r.started_utc
"""

# Infrastructure errors (the backend failed) are counted apart and in no rate.
_CASES = """
SELECT i.case_id, i.variant_id, count(*) FILTER (WHERE i.infra_error IS NULL) AS runs,
       count(*) FILTER (WHERE i.infra_error IS NULL AND i.success::BOOLEAN) AS successes,
       round(count(*) FILTER (WHERE i.infra_error IS NULL AND i.success::BOOLEAN)
             / nullif(count(*) FILTER (WHERE i.infra_error IS NULL), 0), 3) AS success_rate,
       count(*) FILTER (WHERE i.infra_error IS NULL AND i.timed_out::BOOLEAN) AS timeouts,
       count(*) FILTER (WHERE i.infra_error IS NOT NULL) AS infra_errors,
       any_value(d.decision) AS decision,
       round(any_value(d.wilson_low), 3) AS wilson_low,
       round(any_value(d.wilson_high), 3) AS wilson_high,
       round(any_value(d.chance_agreement), 3) AS chance_agreement,
       round(any_value(d.reproduce_lower_95), 3) AS reproduce_lower_95,
       round(any_value(d.success_upper_95), 3) AS success_upper_95,
       any_value(d.direction) AS direction,
       round(avg(i.attempts) FILTER (WHERE i.infra_error IS NULL), 2) AS mean_attempts,
       round(quantile_cont(i.duration_ms, 0.95) FILTER (WHERE i.infra_error IS NULL), 1) AS p95_duration_ms,
       any_value(x.surplus) AS surplus,
       any_value(i.complexity) AS complexity
FROM store.invocations i
LEFT JOIN store.decisions d ON d.run_id = i.run_id AND d.case_id = i.case_id AND d.variant_id = i.variant_id
-- runs past the decision (--speculate): shown, counted in nothing above
LEFT JOIN (SELECT case_id, variant_id, count(*) AS surplus FROM store.surplus_invocations WHERE run_id = ?
           GROUP BY 1, 2) x ON x.case_id = i.case_id AND x.variant_id = i.variant_id
WHERE i.run_id = ?
GROUP BY 1, 2
UNION ALL
-- a stress ladder's own verdict (boundary, tentative, ...) has no runs of its own
SELECT case_id, variant_id, n, successes, round(success_rate, 3), NULL, NULL,
       decision || coalesce(' at level ' || level, '') || coalesce(', p=' || round(p_value, 4), ''),
       round(wilson_low, 3), round(wilson_high, 3), round(chance_agreement, 3), NULL,
       round(success_upper_95, 3), NULL, NULL, NULL, NULL, NULL
FROM store.decisions WHERE run_id = ? AND variant_id = 'ladder'
"""

# Which baseline each adversarial case was judged against, and each stress ladder's verdict.
_VERDICTS = """
SELECT case_id, decision, level, reference_source, reason
FROM store.decisions
WHERE run_id = ? AND (decision = 'reference' OR (case_mode = 'stress' AND variant_id = 'ladder'))
ORDER BY case_id, seq
"""


# Per adversarial case and generator: variants judged, and those that changed the outcome
# materially (as sensitivity_by_generator.sql counts them).
_SENSITIVITY = """
SELECT case_id, generator, count(*) AS variants, count(*) FILTER (WHERE material) AS material
FROM store.decisions JOIN decision_kinds USING (decision)
WHERE run_id = ? AND case_mode = 'adversarial' AND judged
GROUP BY 1, 2
"""


_GAUNTLET = """
SELECT s.engine, s.scenario, any_value(s.domain) AS domain, count(DISTINCT s.conversation) AS conversations,
       count(DISTINCT (s.conversation, s.turn)) AS turns,
       count(*) FILTER (WHERE s.scorer = 'literal' AND s.violated::BOOLEAN) AS literal_violations,
       count(*) FILTER (WHERE s.scorer = 'negation_aware' AND s.violated::BOOLEAN) AS negation_aware_violations
FROM store.turn_scores s
WHERE s.run_id = ?
GROUP BY 1, 2 ORDER BY 2, 1
"""


def list_runs(store_path: Path) -> QueryResult:
    con = connect(store_path)
    try:
        cursor = con.execute(_RUNS)
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        coordinators = _coordinators(con)
    finally:
        con.close()
    status, imported = columns.index("status"), columns.index("imported")
    return QueryResult(
        columns,
        [
            # an imported run's status is as recorded: no coordinator here ever held it
            (*r[:status], r[status] if r[imported] else run_status(r[0], r[status], coordinators), *r[status + 1 :])
            for r in rows
        ],
    )


def _coordinators(con: Any) -> dict[str, Lease]:
    """The lease of every run a coordinator claims to be writing."""
    rows = con.execute(
        "SELECT run_id, host, pid, process_started, acquired_utc, heartbeat_utc FROM store.run_leases"
    ).fetchall()
    return {r[0]: Lease(r[0], Holder(r[1], r[2], r[3]), r[4], r[5]) for r in rows}


def run_status(run_id: str, recorded: str, coordinators: dict[str, Lease]) -> str:
    """The recorded status, except that a run still `running` whose coordinator is gone
    (killed, its machine lost, or stopped by a full disk before it could say so) is
    `interrupted`: `ironbench resume` continues it."""
    if recorded != "running":
        return recorded
    lease = coordinators.get(run_id)
    return "running" if lease is not None and not lease.stale(datetime.now(UTC)) else "interrupted"


def _verdict(case_id: str, decision: str, level: int | None, source: str | None, reason: str) -> dict:
    if decision == "reference":
        return {
            "case_id": case_id,
            "kind": "reference",
            "source_run": source,
            "text": f"judged against {reason}"
            if source != "this run"
            else f"judged against a fresh run of the instruction in this run ({reason})",
        }
    if decision == "fails_at_base":
        text = f"{ladder_verdict(decision, level)}; no boundary"
    elif decision in ("boundary", "tentative"):  # a tentative one's reason says whether more runs could tell
        text = f"{ladder_verdict(decision, level)}: {reason}"
    else:
        text = "no capability boundary: no level failed systematically"
    return {"case_id": case_id, "kind": "stress", "boundary_level": level, "decision": decision, "text": text}


def sensitivity_verdicts(rows) -> list[dict]:
    """Per adversarial case, its most sensitive generator: the highest material-change rate
    (ties: more variants first, then by name), with its n and Wilson interval, and the
    runner-up, whose interval at these counts almost always overlaps: a ranking, not a test."""
    by_case: dict[str, list[tuple]] = {}
    for case_id, generator, variants, material in rows:
        by_case.setdefault(case_id, []).append((generator, int(variants), int(material)))
    out = []
    for case_id, generators in sorted(by_case.items(), key=lambda item: natural_key(item[0])):
        ranked = sorted(generators, key=lambda g: (-g[2] / g[1], -g[1], g[0]))
        generator, variants, material = ranked[0]
        total = sum(g[1] for g in generators)
        verdict = {
            "case_id": case_id,
            "kind": "sensitivity",
            "generator": generator,
            "variants": variants,
            "material": material,
            "material_change_rate": round(material / variants, 6),
        }
        if not any(g[2] for g in generators):
            verdict.update(
                generator=None,
                text=f"no generator changed the outcome materially "
                f"(0 of {total} variants of {len(generators)} generator(s))",
            )
        else:
            low, high = wilson_interval(material, variants)
            text = (
                f"most sensitive generator: {generator}, {material}/{variants} variants changed the outcome "
                f"materially ({percent(material / variants)}, Wilson 95% {percent(low)}–{percent(high)})"
            )
            tied = [g[0] for g in ranked[1:] if g[2] * variants == material * g[1]]
            if tied:
                text += f"; tied with {', '.join(tied)}"
            elif len(ranked) > 1:
                text += f"; next: {ranked[1][0]} {ranked[1][2]}/{ranked[1][1]}"
            verdict["text"] = text
        out.append(verdict)
    return out


def _without_empty(result: QueryResult, column: str) -> QueryResult:
    """`result` without `column` when no row has a value in it (a run without canonical cases)."""
    if column not in result.columns:
        return result
    index = result.columns.index(column)
    if any(row[index] is not None for row in result.rows):
        return result
    keep = [i for i in range(len(result.columns)) if i != index]
    return QueryResult([result.columns[i] for i in keep], [tuple(row[i] for i in keep) for row in result.rows])


def show_run(store_path: Path, run_id: str) -> tuple[dict, QueryResult, list[dict]]:
    """A run's header, its per-case table, and its verdict lines (references, boundaries)."""
    con = connect(store_path)
    try:
        cursor = con.execute(f"SELECT * FROM ({_RUNS}) WHERE run_id = ?", [run_id])
        row = cursor.fetchone()
        if row is None:
            raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        header = dict(zip([d[0] for d in cursor.description], row, strict=True))
        if header["imported"] is None:
            del header["imported"]
            header["status"] = run_status(run_id, header["status"], _coordinators(con))
        surplus = con.execute("SELECT count(*) FROM store.surplus_invocations WHERE run_id = ?", [run_id]).fetchone()
        if surplus[0]:
            header["surplus"] = f"{surplus[0]} runs past their case's decision (--speculate): in no count above"
        if header["mode"] == "gauntlet":
            cursor = con.execute(_GAUNTLET, [run_id])
        else:
            cursor = con.execute(_CASES, [run_id, run_id, run_id])
        rows = cursor.fetchall()
        if header["mode"] != "gauntlet":  # cases as people count them: humaneval_2 before humaneval_12
            rows.sort(key=lambda r: (natural_key(r[0]), natural_key(r[1])))
        cases = _without_empty(QueryResult([d[0] for d in cursor.description], rows), "complexity")
        verdicts = [_verdict(*r) for r in con.execute(_VERDICTS, [run_id]).fetchall()]
        verdicts += sensitivity_verdicts(con.execute(_SENSITIVITY, [run_id]).fetchall())
        traffic = model_traffic(store_path, run_id)
        if traffic is not None:  # every attempt counted: one whose backend failed was paid for too
            header["model"] = traffic.run.sentence()
            verdicts += [{"case_id": case.case_id, "kind": "model", "text": case.sentence()} for case in traffic.cases]
        spent = run_cost(store_path, run_id)
        if spent is not None:  # what the calls cost: beside the rates, ironbench's own apart
            header["cost"] = spent.header()
            verdicts += spent.case_lines()
        verdicts.sort(key=lambda v: natural_key(v["case_id"]))  # stable: each case's reference, then the rest
        fenced: list[dict] = []
        if "imported" not in header:
            header["sandbox"], fenced = fence_verdicts(store_path, run_id)
        return header, cases, fenced + gate_verdicts(store_path, run_id) + verdicts
    finally:
        con.close()


def fence_verdicts(store_path: Path, run_id: str) -> tuple[str, list[dict]]:
    """The fence its targets ran in, a word or two for the header; below full, the first
    verdict line saying so; then what it withheld that failed invocations, with the flags."""
    fence = run_fences(store_path, run_id)
    said = [{"case_id": "(all cases)", "kind": "fence", "text": fence.sentence()}] if fence.below_full else []
    denied = fence.denied_sentence()
    if denied is not None:
        said.append({"case_id": "(all cases)", "kind": "fence", "text": denied})
    return fence.short(), said


def gate_verdicts(store_path: Path, run_id: str) -> list[dict]:
    """A run made with `--against`: each look of its gate, then the gate's verdict sentence."""
    from ironbench.analysis.gate_verdict import gate_verdict

    gate = gate_verdict(store_path, run_id)
    if gate is None:
        return []
    looks = [{"case_id": "(all cases)", "kind": "gate", "text": line} for line in gate.story()]
    return looks + [{"case_id": "(all cases)", "kind": "gate verdict", "text": gate.sentence()}]


def format_show(
    header: dict,
    cases: QueryResult,
    verdicts: list[dict],
    width: int | None = None,
    gauntlet: "GauntletSummary | None" = None,
) -> str:
    """`ironbench show` for people: the run's metadata, its table (fitted to `width`, case
    and variant repeated when it continues), then one line per verdict."""
    from ironbench.analysis.conversations import format_summary
    from ironbench.analysis.query import format_result
    from ironbench.console.layout import wrap

    if gauntlet is not None:
        header = {
            k: v for k, v in header.items() if k not in ("invocations", "successes", "infra_errors", "ironclad_version")
        }
    lines = [wrap(printable(f"{key:>17}: {value}"), width, hanging=" " * 19) for key, value in header.items()]
    lines.append("")
    if gauntlet is not None:
        lines.append(format_summary(gauntlet, width=width))
    else:
        lines.append(format_result(_gated_in_words(cases), "table", width, keys=2))
        lines += [wrap(printable(f"{v['kind']} {v['case_id']}: {v['text']}"), width) for v in verdicts]
    return "\n".join(lines)


def _gated_in_words(cases: QueryResult) -> QueryResult:
    """A case the sequential gate decided (`gated`, with every other case) reads as such in the
    table: the round it did so at, its runs (the JSON keeps the kind)."""
    from ironbench.analysis.gate_verdict import GATED

    if "decision" not in cases.columns:
        return cases
    at, runs = cases.columns.index("decision"), cases.columns.index("runs")
    rows = [(*r[:at], GATED.format(round=r[runs]), *r[at + 1 :]) if r[at] == "gated" else r for r in cases.rows]
    return QueryResult(cases.columns, rows)


def interruption(store_path: Path, out_dir: Path, run_id: str) -> str:
    """The one line an interrupted run ends with: what it kept, and the command that continues it."""
    from ironbench.run.guards import resume_command

    with open_store(store_path, create=False) as store:
        mode = store.conn.execute("SELECT mode FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if mode is not None and mode[0] == "gauntlet":
            kept = store.conn.execute("SELECT count(*) FROM turns WHERE run_id = ?", (run_id,)).fetchone()[0]
            what = f"{kept} turn{'s' if kept != 1 else ''}"
        else:
            kept = sum(
                store.conn.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", (run_id,)).fetchone()[0]
                for table in ("invocations", "superseded_invocations")
            )
            what = f"{kept} invocation{'s' if kept != 1 else ''}"
    return (
        f"interrupted: {run_id} keeps the {what} it recorded; continue with: "
        f"{resume_command(run_id, out_dir, store_path)}"
    )


def invocation_logs(
    store_path: Path, run_id: str, case_id: str, variant_id: str | None = None, run_index: int | None = None
) -> list[tuple[RecordedEvent, bool, bool]]:
    """Every recorded attempt of a case's invocations (optionally one variant, one run),
    in order, each with whether a re-run superseded it and whether it lies past its
    group's decision (surplus)."""
    with open_store(store_path, create=False) as store:
        return logs_in(store, run_id, case_id, variant_id, run_index)


def logs_in(
    store: EventStore, run_id: str, case_id: str, variant_id: str | None = None, run_index: int | None = None
) -> list[tuple[RecordedEvent, bool, bool]]:
    """`invocation_logs` from an open store (the viewer's is read-only)."""
    if not store.has_run(run_id):
        raise RunNotFound(f"run {run_id!r} not found in {store.path}")
    groups = [
        r[0]
        for r in store.conn.execute(
            "SELECT DISTINCT group_path FROM invocations WHERE run_id = ? AND case_id = ? UNION "
            "SELECT DISTINCT group_path FROM superseded_invocations WHERE run_id = ? AND case_id = ? ORDER BY 1",
            (run_id, case_id, run_id, case_id),
        )
    ]
    if not groups:
        known = ", ".join(
            sorted(
                (
                    r[0]
                    for r in store.conn.execute("SELECT DISTINCT case_id FROM invocations WHERE run_id = ?", (run_id,))
                ),
                key=natural_key,
            )
        )
        raise RunNotFound(f"run {run_id}: no invocation of case {case_id!r} (cases: {known or 'none'})")
    surplus = {
        f"{group}/run_{index:03d}"
        for group, index in store.conn.execute(
            "SELECT group_path, run_index FROM surplus_invocations WHERE run_id = ? AND case_id = ?",
            (run_id, case_id),
        )
    }
    found: list[RecordedEvent] = []
    for group in groups:
        for recorded in store.read(run_id, types=("invocation_completed",), stream_prefix=f"{group}/"):
            event = recorded.event
            assert isinstance(event, InvocationCompleted)  # read with types=("invocation_completed",)
            if group_of(recorded.stream) != group or event.case_id != case_id:
                continue
            if (variant_id is None or event.variant_id == variant_id) and (
                run_index is None or event.run_index == run_index
            ):
                found.append(recorded)
    if not found:
        raise RunNotFound(
            f"run {run_id}: case {case_id!r} has no invocation matching "
            f"variant {variant_id or 'any'}, run {run_index or 'any'}"
        )
    latest: dict[str, int] = {}
    for recorded in found:
        latest[recorded.stream] = max(latest.get(recorded.stream, 0), _completed(recorded).rerun)
    return [(r, _completed(r).rerun < latest[r.stream], r.stream in surplus) for r in found]


def _completed(recorded: RecordedEvent) -> InvocationCompleted:
    """The InvocationCompleted an invocation log holds (invocation_logs reads no other type)."""
    event = recorded.event
    assert isinstance(event, InvocationCompleted), f"not an invocation_completed event: {recorded.type}"
    return event


def format_logs(logs: list[tuple[RecordedEvent, bool, bool]]) -> str:
    """A person's view of invocations: what each printed on stdout and stderr."""
    parts = []
    for recorded, superseded, surplus in logs:
        event = _completed(recorded)
        facts = [
            f"exit {event.exit_code}" if not event.timed_out else "timed out",
            "success" if event.success else f"failure_stage {event.failure_stage}",
            f"{event.duration_ms} ms",
        ]
        if event.infra_error:
            facts.append(f"infra_error {event.infra_error!r}")
        if event.rerun or superseded:
            facts.append(f"rerun {event.rerun}{', superseded' if superseded else ''}")
        if surplus:
            facts.append("surplus: past the decision, not evidence")
        parts.append(
            f"== {recorded.run_id} {recorded.stream} ({'; '.join(facts)})\n"
            f"-- stdout --\n{event.stdout.rstrip()}\n-- stderr --\n{event.stderr.rstrip()}\n"
        )
    return "\n".join(parts).rstrip("\n")


def ai_acceptance(store_path: Path, run_id: str) -> QueryResult:
    """Per case and AI generator: attempts, accepted, acceptance rate, accepted variants run."""
    return run_sql(
        store_path,
        (shipped_queries() / "ai_acceptance.sql").read_text(encoding="utf-8"),
        run_id,
        source="ai_acceptance.sql",
    )


# What the target did, told apart from what its backend did (infra errors are in no rate).
_SUMMARY_INVOCATIONS = """
SELECT count(*) FILTER (WHERE infra_error IS NULL),
       count(*) FILTER (WHERE infra_error IS NULL AND success),
       list(CASE WHEN harness_error IS NOT NULL THEN 'harness_error' WHEN timed_out THEN 'timeout'
                 ELSE coalesce(failure_stage, 'unknown') END) FILTER (WHERE infra_error IS NULL AND NOT success),
       count(*) FILTER (WHERE infra_error IS NOT NULL)
FROM invocations
"""


def run_summary(store_path: Path, run_id: str) -> list[str]:
    """What a finished baseline/adversarial/stress run did, before its verdicts: invocations,
    successes, failures by stage, every invocation failed (the fence's doing first) and, with AI
    generators, how many rewrites were accepted (nothing for a gauntlet: its table says what it did)."""
    from ironbench.analysis.correctness import correctness, correctness_lines

    spent = run_cost(store_path, run_id)
    cost = [f"cost: {spent.header()}"] if spent is not None else []
    if run_sql(store_path, "SELECT mode FROM runs", run_id).rows[0][0] == "gauntlet":
        return cost
    invocations = run_sql(store_path, _SUMMARY_INVOCATIONS, run_id).rows[0]
    failed = every_failed(run_id, invocations[0], invocations[1], run_fences(store_path, run_id).caused)
    return [
        *summary_lines(run_id, invocations, ai_acceptance(store_path, run_id)),
        *([failed] if failed else []),
        *cost,
        *correctness_lines(correctness(store_path, run_id)),
    ]


def every_failed(run_id: str, total: int, successes: int, fenced: int) -> str | None:
    """`every invocation failed`, and where to look first: what the fence withheld (its verdict
    names it with the flag) when it caused them, else what the invocations printed (None: one
    succeeded, or none ran)."""
    if not total or successes:
        return None
    said = f"{run_id}: every invocation failed ({total} of {total})"
    if fenced:
        return f"{said}; the fence caused {fenced}: what it withheld is said with the flag that allows it"
    return f"{said}; `ironbench log {run_id} CASE` shows what each printed"


def run_problems(store_path: Path, run_id: str) -> list[str]:
    """What a run says even when quiet: its fence below full, what the fence withheld that
    failed invocations, each broken check, and every invocation failed."""
    fence = run_fences(store_path, run_id)
    lines = [f"fence: {fence.sentence()}"] if fence.below_full else []
    denied = fence.denied_sentence()
    lines += [f"fence: {denied}"] if denied else []
    lines += [f"BROKEN CHECK: {proof.line()}" for proof in run_proofs(store_path, run_id) if proof.broken]
    if run_sql(store_path, "SELECT mode FROM runs", run_id).rows[0][0] != "gauntlet":
        invocations = run_sql(store_path, _SUMMARY_INVOCATIONS, run_id).rows[0]
        failed = every_failed(run_id, invocations[0], invocations[1], fence.caused)
        lines += [failed] if failed else []
    return lines


def summary_lines(run_id: str, invocations: tuple, acceptance: QueryResult) -> list[str]:
    total, successes, stages, infra = invocations
    stage_counts = Counter(stages or [])
    lines = [
        f"{run_id}: {total} invocation{'s' if total != 1 else ''}, {successes} succeeded"
        + (
            f"; failures by stage: {', '.join(f'{s} {n}' for s, n in stage_counts.most_common())}"
            if stage_counts
            else ""
        )
        + (f"; {infra} infrastructure error{'s' if infra != 1 else ''} (in no rate)" if infra else "")
    ]
    if acceptance.rows:
        per_generator: dict[str, list[int]] = {}
        for row in acceptance.rows:
            r = dict(zip(acceptance.columns, row, strict=True))
            counts = per_generator.setdefault(r["generator"], [0, 0, 0])
            counts[0] += r["accepted"]
            counts[1] += r["attempts"]
            counts[2] += r["accepted_and_run"]
        lines.append(
            "AI rewrites: "
            + ", ".join(f"{g} {a} of {n} accepted" for g, (a, n, _) in per_generator.items())
            + f"; {sum(c[2] for c in per_generator.values())} accepted variants run"
        )
    return lines


def show_json(store_path: Path, run_id: str) -> dict:
    """`ironbench show --format json`: the header, every case row, the verdicts and, for a
    run with AI generators, their acceptance per case and generator."""
    from ironbench.analysis.field import field_numbers

    header, cases, verdicts = show_run(store_path, run_id)
    acceptance = ai_acceptance(store_path, run_id) if header["mode"] != "gauntlet" else None
    extra = (
        {"ai_acceptance": [dict(zip(acceptance.columns, r, strict=True)) for r in acceptance.rows]}
        if acceptance
        else {}
    )
    from ironbench.analysis.correctness import correctness

    numbers = field_numbers(store_path, run_id).to_dict()
    checked = correctness(store_path, run_id) if header["mode"] != "gauntlet" else None
    spent = run_cost(store_path, run_id) if "cost" in header else None
    withheld = run_fences(store_path, run_id).withheld if "imported" not in header else ()
    return {
        **header,
        **(checked.to_dict() if checked else {}),
        **({"fence_denials": [w.to_dict() for w in withheld]} if withheld else {}),
        "cases": [dict(zip(cases.columns, r, strict=True)) for r in cases.rows],
        "verdicts": verdicts,
        **extra,
        **({"field": numbers} if numbers else {}),
        **({"cost": spent.to_dict()} if spent is not None else {}),
    }


def show_text(store_path: Path, run_id: str, width: int | None = None) -> str:
    """`ironbench show` for people: `format_show`, the AI rewrites' acceptance table, then the
    numbers the field reports (pass@k and pass^k, robustness, when conversations break)."""
    from ironbench.analysis.conversations import summary_from_store
    from ironbench.analysis.field import field_numbers, format_field
    from ironbench.analysis.query import format_result

    header, cases, verdicts = show_run(store_path, run_id)
    field = format_field(field_numbers(store_path, run_id), width)
    if header["mode"] == "gauntlet":
        return "\n".join([format_show(header, cases, verdicts, width, summary_from_store(store_path, run_id)), *field])
    from ironbench.analysis.correctness import correctness, correctness_lines
    from ironbench.console.layout import wrap

    # a fence below full first (what every figure rests on), then verified but wrong: the runs
    # whose success the rest of the page would count
    fence = [v for v in verdicts if v["kind"] == "fence"]
    first = [wrap(printable(f"{v['kind']} {v['case_id']}: {v['text']}"), width) for v in fence]
    first += [
        wrap(printable(line), width, hanging="    ") for line in correctness_lines(correctness(store_path, run_id))
    ]
    rest = [v for v in verdicts if v["kind"] != "fence"]
    text = "\n".join([*first, *([""] if first else []), format_show(header, cases, rest, width)])
    acceptance = ai_acceptance(store_path, run_id)
    if acceptance.rows:
        text += "\n\nAI rewrites, acceptance per case and generator:\n" + format_result(
            acceptance, "table", width, keys=2
        )
    return "\n".join([text, *field])
