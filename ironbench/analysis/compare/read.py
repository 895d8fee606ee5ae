"""Reading a comparison's evidence from the store: invocations per case, or a gauntlet's conversations."""

from collections import defaultdict
from pathlib import Path

from ironbench.analysis.compare.comparison import Comparison, Evidence, Gating, Runs
from ironbench.analysis.compare.cost import cost_comparison
from ironbench.analysis.compare.decide import CannotCompare, decide, engine_sentences
from ironbench.analysis.compare.sensitivity import cells_from_decisions, compare_sensitivity
from ironbench.analysis.query import connect
from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.kinds import FailOn, Gate, On, Unit
from ironbench.core.labels import case_label

_INVOCATIONS = """
SELECT case_id, variant_id, run_index, success::BOOLEAN, failure_stage, attempts, repairs_triggered, duration_ms,
       timed_out::BOOLEAN, harness_error, infra_error
FROM store.invocations WHERE run_id = ? ORDER BY case_id, variant_id, run_index, seq
"""

# On correctness: a run is a success when the harness's check said correct; a verified run
# the check found wrong fails at `verified_but_wrong`; a check the harness could not run is
# no evidence, like a harness error.
_CHECKED_INVOCATIONS = """
SELECT case_id, variant_id, run_index, coalesce(correct::BOOLEAN, false),
       CASE WHEN success::BOOLEAN THEN 'verified_but_wrong' ELSE failure_stage END, attempts, repairs_triggered,
       duration_ms, timed_out::BOOLEAN,
       CASE WHEN check_verdict = 'harness_fault' THEN 'the check could not run' ELSE harness_error END, infra_error
FROM store.invocations WHERE run_id = ? ORDER BY case_id, variant_id, run_index, seq
"""

_VARIANT_DECISIONS = """
SELECT case_id, generator, decision FROM store.decisions
WHERE run_id = ? AND case_mode = 'adversarial' AND generator IS NOT NULL ORDER BY seq
"""

_GATED = """
SELECT g.against, max(l.round) FROM store.gates g JOIN store.gate_looks l USING (run_id)
WHERE g.run_id = ? GROUP BY g.against
"""

_CONVERSATIONS = """
SELECT engine, scenario, conversation, bool_or(violated::BOOLEAN)
FROM store.turn_scores WHERE run_id = ? AND scorer = ?
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""


def runs_from_rows(rows) -> dict[tuple[str, str], Runs]:
    """Invocation rows → evidence per case. Infrastructure-errored attempts are not evidence;
    a run slot holding nothing else is unresolved (resume re-runs it)."""
    slots: dict[tuple[str, str], dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        slots[(row[0], row[1])][row[2]].append(row)
    out = {}
    for key, by_index in slots.items():
        outcomes, attempts, repairs, durations, harness, infra, unresolved = [], [], [], [], 0, 0, []
        for index in sorted(by_index):
            evidence = None
            for (
                _,
                _,
                _,
                success,
                stage,
                n_attempts,
                n_repairs,
                duration,
                timed_out,
                harness_error,
                infra_error,
            ) in by_index[index]:
                if infra_error is not None:
                    infra += 1
                elif harness_error is not None:
                    harness += 1
                else:
                    evidence = (
                        "success" if success else "timeout" if timed_out else stage or "unknown",
                        n_attempts,
                        n_repairs,
                        duration,
                    )
            if evidence is not None:
                outcomes.append(evidence[0])
                attempts.append(evidence[1])
                repairs.append(evidence[2])
                durations.append(evidence[3])
            elif any(r[10] is not None for r in by_index[index]):
                unresolved.append(f"{case_label(*key)} run {index}: {by_index[index][-1][10]}")
        out[key] = Runs(
            tuple(outcomes), tuple(attempts), tuple(repairs), tuple(durations), harness, infra, tuple(unresolved)
        )
    return out


def compare_runs(
    store_path: Path,
    run_a: str,
    run_b: str,
    alpha: float = 0.05,
    scorer: str = "negation_aware",
    gate: Gate | str = Gate.overall,
    fail_on: FailOn | str = FailOn.regression,
    margin: float | None = None,
    on: On | str = On.success,
) -> Comparison:
    """For gauntlet runs, a case is (engine, scenario), the unit a conversation, and a success
    a conversation in which the engine never asserted the forbidden phrase by `scorer`. `on`
    correct: a run succeeds when the harness's check of its brick said correct (both runs
    need checks; their variants' sensitivity, decided on the target's claims, is left out)."""
    if on not in set(On):
        raise IronbenchError(f"--on must be one of {', '.join(On)}")
    if gate not in set(Gate) or fail_on not in set(FailOn):
        raise IronbenchError(f"--gate must be one of {', '.join(Gate)} and --fail-on one of {', '.join(FailOn)}")
    if margin is not None and not 0 <= margin < 1:
        raise IronbenchError(f"--margin {margin}: must be at least 0 and below 1 (a share, e.g. 0.05)")
    con = connect(store_path)
    try:
        modes, imported = [], []
        for run_id in (run_a, run_b):
            row = con.execute("SELECT mode, imported FROM store.runs WHERE run_id = ?", [run_id]).fetchone()
            if row is None:
                raise RunNotFound(f"run {run_id!r} not found in {store_path}")
            modes.append(row[0])
            imported.append(row[1] == "outputs")
        if (modes[0] == "gauntlet") != (modes[1] == "gauntlet"):
            raise CannotCompare(
                f"cannot compare a gauntlet run with a {'non-' if modes[0] == 'gauntlet' else ''}gauntlet run"
            )
        cells: list[dict[tuple[str, str], tuple[int, int]]] = []
        if modes[0] == "gauntlet":
            sides = [_conversations(con.execute(_CONVERSATIONS, [r, scorer]).fetchall()) for r in (run_a, run_b)]
        elif on == On.correct:
            for run_id in (run_a, run_b):
                if not con.execute("SELECT count(*) FROM store.checks WHERE run_id = ?", [run_id]).fetchone()[0]:
                    raise CannotCompare(
                        f"cannot compare on correctness: {run_id} has no checks (`ironbench check {run_id} "
                        "--suite FILE` checks its saved bricks with a suite's checks)"
                    )
            sides = [runs_from_rows(con.execute(_CHECKED_INVOCATIONS, [r]).fetchall()) for r in (run_a, run_b)]
        else:
            sides = [runs_from_rows(con.execute(_INVOCATIONS, [r]).fetchall()) for r in (run_a, run_b)]
            cells = [cells_from_decisions(con.execute(_VARIANT_DECISIONS, [r]).fetchall()) for r in (run_a, run_b)]
        gated = [(r, *row) for r in (run_a, run_b) for row in con.execute(_GATED, [r]).fetchall()]
    finally:
        con.close()
    for run_id, side, recorded_elsewhere in zip((run_a, run_b), sides, imported, strict=True):
        unresolved = [u for runs in side.values() for u in runs.unresolved_infra]
        # a run imported from another harness's tree cannot be resumed: its outages stay out
        if unresolved and not recorded_elsewhere:
            raise CannotCompare(
                f"cannot compare: {run_id} has {len(unresolved)} run(s) with unresolved "
                f"infrastructure errors (first: {unresolved[0]}); `ironbench resume {run_id}` "
                "re-runs them"
            )
    unit: Unit = "conversation" if modes[0] == "gauntlet" else "run"
    evidence = Evidence(sides[0], sides[1], run_a, run_b, unit)
    comparison = decide(evidence, Gating(alpha, Gate(gate), FailOn(fail_on), margin))
    comparison.warnings[:0] = (  # first: it says what the whole answer below is worth
        f"{run_id} ran under a sequential gate against {against} (`run --against`) and stopped after round "
        f"{rounds}: this is the fixed-design test on the runs as recorded, and it ignores that stopping "
        f"(`ironbench show {run_id}` gives the gate's own verdict, which holds its error rates)"
        for run_id, against, rounds in gated
    )
    if unit == "conversation":
        comparison = Comparison(**{**comparison.__dict__, "engines": engine_sentences(evidence, alpha)})
    elif cells and cells[0] and cells[1]:
        comparison = Comparison(
            **{**comparison.__dict__, "sensitivity": compare_sensitivity(cells[0], cells[1], alpha)}
        )
    cost = cost_comparison(store_path, run_a, run_b)
    if cost is not None:
        comparison = Comparison(**{**comparison.__dict__, "cost": cost})
    return comparison


def _conversations(rows) -> dict[tuple[str, str], Runs]:
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for engine, scenario, _, violated in rows:
        grouped[(engine, scenario)].append("violated" if violated else "success")
    return {key: Runs(tuple(v)) for key, v in grouped.items()}
