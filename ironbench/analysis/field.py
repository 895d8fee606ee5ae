"""The numbers the field reports, for a stored run: read through DuckDB, computed by the
projections' pure functions (the same ones that write aggregate.json and summary.json),
and laid out for the console."""

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast, get_args

from ironbench.analysis.recorded import started_event
from ironbench.console.layout import render, wrap
from ironbench.console.numbers import number, percent
from ironbench.console.printable import printable
from ironbench.core.events import DecisionTaken
from ironbench.core.kinds import JUDGED
from ironbench.core.labels import group_path_sql, natural_key
from ironbench.projections.figures import (
    Bricks,
    PassKAcross,
    SameCode,
    bricks,
    by_k,
    case_robustness,
    judged_reference,
    pass_k,
    pass_k_across,
    pass_k_dict,
    robustness_across,
    same_code_across,
)
from ironbench.projections.gauntlet_summary import PRIMARY_SCORER, Breaking, breaking
from ironbench.stats import PassK
from ironbench.store import open_read_only
from ironbench.suite import Suite, suite_of_run

# The figures as JSON (what `show --format json` prints and the report draws), typed for readers.


class Estimate(TypedDict):
    """A rate or a ratio with its 95% interval and what it counts: runs or variants (n), cases."""

    estimate: float | None
    ci_95: list[float]
    n: NotRequired[int]
    cases: NotRequired[int]


class Flips(TypedDict):
    """Flips in one direction over the variants that could flip, with the Wilson 95% interval."""

    count: int
    n: int
    rate: float | None
    ci_95: list[float]


class CaseRobustnessRow(TypedDict):
    """One adversarial case's variants of one generator against its base."""

    case_id: str
    generator: str
    base_success: bool
    nominal_success_rate: Estimate
    variants: int
    variants_succeeded: int
    robust_pass: bool
    worst_case_success_rate: float | None
    robust_drop: float | None
    flips_success_to_failure: Flips
    flips_failure_to_success: Flips


class GeneratorRobustnessRow(TypedDict):
    """One generator across the cases it rewrote: the case is the unit."""

    generator: str
    cases: int
    variants: int
    nominal_success_rate: Estimate | None
    robust_pass_rate: Estimate
    worst_case_success_rate: Estimate
    robust_drop: Estimate | None
    flips_success_to_failure: Estimate | None
    flips_failure_to_success: Estimate | None
    interval_note: str


# A generator's estimates across cases, in the order tables show them.
GeneratorEstimate = Literal[
    "nominal_success_rate",
    "robust_pass_rate",
    "worst_case_success_rate",
    "robust_drop",
    "flips_success_to_failure",
    "flips_failure_to_success",
]
GENERATOR_ESTIMATES: tuple[GeneratorEstimate, ...] = get_args(GeneratorEstimate)


class Robustness(TypedDict):
    cases: list[CaseRobustnessRow]
    generators: list[GeneratorRobustnessRow]


# Per scorer, when conversations break.
Survival: TypeAlias = dict[str, Breaking]


@dataclass(frozen=True)
class CasePassK:
    """One decided baseline instruction: pass@k and pass^k (None: no estimate), and its bricks."""

    pass_k: PassK | None
    bricks: Bricks

    def to_dict(self) -> dict[str, Any]:
        return {"pass_k": pass_k_dict(self.pass_k), "bricks": self.bricks.to_dict()}


@dataclass(frozen=True)
class PassKFigures:
    """pass@k, pass^k and same code per baseline instruction, and across them."""

    cases: dict[str, CasePassK]
    across: PassKAcross | None
    same_code: SameCode | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": {case_id: case.to_dict() for case_id, case in self.cases.items()},
            "across": None if self.across is None else self.across.to_dict(),
            "same_code": None if self.same_code is None else self.same_code.to_dict(),
        }


@dataclass(frozen=True)
class FieldNumbers:
    """`field_numbers`: only the modes the run has (None: not this run's)."""

    pass_k: PassKFigures | None = None
    robustness: Robustness | None = None
    # the same figures on correctness (the harness's checks), for runs whose bricks were checked
    pass_k_correct: PassKFigures | None = None
    robustness_correct: Robustness | None = None
    survival: Survival | None = None
    correct_faults: int = 0  # runs of checked cases whose check the harness could not run: in neither figure

    def to_dict(self) -> dict[str, Any]:
        """As `show --format json` prints them: the modes the run has."""
        out: dict[str, Any] = {}
        for name, value in (
            ("pass_k", self.pass_k),
            ("robustness", self.robustness),
            ("pass_k_correct", self.pass_k_correct),
            ("robustness_correct", self.robustness_correct),
        ):
            if value is not None:
                out[name] = value if isinstance(value, dict) else value.to_dict()
        if self.pass_k_correct is not None or self.robustness_correct is not None:
            out["correct_harness_faults"] = self.correct_faults
        if self.survival is not None:
            out["survival"] = {scorer: found.to_dict() for scorer, found in self.survival.items()}
        return out


@dataclass(frozen=True)
class _Run:
    """An invocation's read-model row, as the figures read it."""

    case_id: str
    variant_id: str
    group_path: str
    generator: str | None
    run_index: int
    success: bool
    failure_stage: str | None
    attempts: int
    repairs_triggered: int
    infra_error: str | None
    brick_sha256: str | None
    correct: bool | None = None
    check_verdict: str | None = None


@dataclass(frozen=True)
class _Group:
    """A group's runs in run order, and the mode of its case."""

    path: str
    mode: str
    runs: list[_Run]

    @property
    def first(self) -> _Run:
        return self.runs[0]


_RUNS = f"""
SELECT case_id, variant_id, {group_path_sql()}, generator, run_index,
       success::BOOLEAN, failure_stage, attempts, repairs_triggered, infra_error, brick_sha256,
       correct::BOOLEAN, check_verdict, coalesce(case_mode, mode) AS case_mode
FROM store.invocations WHERE run_id = ? ORDER BY 3, run_index
"""
_TURNS = """
SELECT engine, scenario, conversation, scorer, list(violated::BOOLEAN ORDER BY turn)
FROM store.turn_scores WHERE run_id = ? GROUP BY 1, 2, 3, 4
"""
Decisions: TypeAlias = dict[str, DecisionTaken]  # by group path


def field_numbers(store_path: Path, run_id: str) -> FieldNumbers:
    """pass@k, pass^k and same code per baseline instruction and across them; robustness per
    adversarial case and generator and across cases; when conversations break, per scorer.
    Only the modes the run has."""
    from ironbench.analysis.query import connect  # DuckDB: only when a store is read

    con = connect(store_path)
    try:
        rows = con.execute(_RUNS, [run_id]).fetchall()
        turn_rows = con.execute(_TURNS, [run_id]).fetchall()
    finally:
        con.close()
    store = open_read_only(store_path)
    try:
        suite = suite_of_run(started_event(store, run_id))
        decisions: Decisions = {}
        for recorded in store.read(run_id, types=("decision_taken",)):
            assert isinstance(recorded.event, DecisionTaken)  # (read by type)
            decisions[recorded.event.group] = recorded.event  # (upcast: every decision has its group)
    finally:
        store.close()
    by_path: dict[str, _Group] = {}
    for row in rows:
        run = _Run(*row[:13])
        by_path.setdefault(run.group_path, _Group(run.group_path, row[13], [])).runs.append(run)
    groups = sorted(by_path.values(), key=lambda g: natural_key(g.path))  # humaneval_2 before humaneval_12
    checked = _on_correctness(suite, groups, decisions)
    survival = None
    if turn_rows:
        sequences: dict[tuple[str, str, int], dict[str, list[bool]]] = {}
        for engine, scenario, conversation, scorer, verdicts in turn_rows:
            sequences.setdefault((engine, scenario, conversation), {})[scorer] = list(verdicts)
        scorers = sorted({r[3] for r in turn_rows}, key=lambda s: (s != PRIMARY_SCORER, s))
        survival = {s: breaking(sequences, suite.engine_names, s) for s in scorers}
    return FieldNumbers(
        _baseline(suite, groups, decisions),
        _adversarial(groups, decisions),
        None if checked is None else _baseline(suite, *checked[:2]),
        None if checked is None else _adversarial(*checked[:2]),
        survival,
        0 if checked is None else checked[2],
    )


def _on_correctness(
    suite: Suite, groups: list[_Group], decisions: Decisions
) -> tuple[list[_Group], Decisions, int] | None:
    """The checked groups with each run's success replaced by the harness's verdict (a run
    without a brick is not correct; one whose check the harness could not run is left out, and
    counted), and the references judged on it: the figures below, drawn on correctness. None:
    no checks."""
    checked: list[_Group] = []
    faults = 0
    for group in groups:
        if not any(r.check_verdict is not None for r in group.runs) and not suite.checked(group.first.case_id):
            continue
        kept = [replace(r, success=bool(r.correct)) for r in group.runs if r.check_verdict != "harness_fault"]
        faults += len(group.runs) - len(kept)
        if kept:
            checked.append(replace(group, runs=kept))
    if not checked:
        return None
    judged = dict(decisions)
    for group in checked:
        decision = decisions.get(group.path)
        if decision is not None and decision.decision == "reference":
            found = judged_reference(decision, group.runs)
            if found is not None:
                judged[group.path] = replace(decision, reference=found.reference, successes=found.successes, n=found.n)
    return checked, judged, faults


def _baseline(suite: Suite, groups: list[_Group], decisions: Decisions) -> PassKFigures | None:
    cases = {}
    for group in groups:
        if group.mode != "baseline" or group.path not in decisions:
            continue  # undecided: the number of runs is not known yet
        evidence = [r for r in group.runs if r.infra_error is None]
        case_id = group.first.case_id
        cases[case_id] = CasePassK(pass_k(evidence, suite.stopping_rule(case_id)), bricks(evidence))
    if not cases:
        return None
    return PassKFigures(
        cases,
        pass_k_across([c.pass_k for c in cases.values() if c.pass_k is not None]),
        same_code_across([c.bricks for c in cases.values()]),
    )


def _adversarial(groups: list[_Group], decisions: Decisions) -> Robustness | None:
    cells = []
    by_cell: dict[tuple[str, str], list] = {}
    for group in groups:
        decision = decisions.get(group.path)
        first = group.first
        if group.mode != "adversarial" or first.generator is None:
            continue
        if decision is not None and decision.decision in JUDGED:
            by_cell.setdefault((first.case_id, first.generator), []).append((decision, group.runs))
    for (case_id, generator), variants in by_cell.items():
        cell = case_robustness(case_id, generator, decisions.get(f"adversarial/{case_id}/baseline"), variants)
        if cell is not None:
            cells.append(cell)
    if not cells:
        return None
    return cast(
        Robustness,
        {
            "cases": [{"case_id": c.case_id, "generator": c.generator, **c.to_dict()} for c in cells],
            "generators": robustness_across(cells),
        },
    )


# -- console --------------------------------------------------------------------------------


def _ci(pair) -> str:
    return f"[{number(pair[0], '.2f')}, {number(pair[1], '.2f')}]"


SHOWN_K = (1, 2, 3, 5, 10)


def format_field(numbers: FieldNumbers, width: int | None = None) -> list[str]:
    """The console lines `show` ends with: pass@k / pass^k, robustness per generator, and when
    conversations break (primary scorer first)."""
    lines: list[str] = []
    lines += _pass_k_lines(numbers.pass_k, "self-reported success", width)
    faults = numbers.correct_faults
    beside = f" ({faults} check{'s' if faults != 1 else ''} could not run, in no rate)" if faults else ""
    lines += _pass_k_lines(numbers.pass_k_correct, f"correctness, by the harness's checks{beside}", width)
    lines += _robustness_lines(numbers.robustness, "self-reported success", width)
    lines += _robustness_lines(numbers.robustness_correct, f"correctness{beside}", width)
    lines += _survival_lines(numbers.survival, width)
    return lines


def _pass_k_lines(passk: PassKFigures | None, on: str, width: int | None) -> list[str]:
    lines: list[str] = []
    if passk:
        header = ["case", "rule", "succeeded", "k", "pass@k [95%]", "pass^k [95%]", "bricks"]
        rows = []
        for case_id, case in passk.cases.items():
            found, same = case.pass_k, case.bricks
            if found is None:
                continue
            every = by_k(found)
            shown = [r for r in every if r.k in SHOWN_K or r.k == len(every)]
            for index, r in enumerate(shown):
                rows.append(
                    [
                        case_id if index == 0 else "",
                        found.rule if index == 0 else "",
                        f"{found.successes}/{found.n}" if index == 0 else "",
                        str(r.k),
                        f"{number(r.pass_at_k, '.2f')} {_ci(r.pass_at_k_ci_95)}",
                        f"{number(r.pass_hat_k, '.2f')} {_ci(r.pass_hat_k_ci_95)}",
                        f"{same.successful_runs} ok, {same.distinct} distinct" if index == 0 else "",
                    ]
                )
        if rows:
            title = f"pass@k and pass^k on {on} per instruction (unbiased under each case's stopping rule):"
            lines += ["", wrap(title, width)]
            lines += render(header, rows, width, keys=1)
        across = passk.across
        if across:
            parts = [
                f"k={r.k}: pass@k {number(r.pass_at_k, '.2f')} {_ci(r.pass_at_k_ci_95)}, "
                f"pass^k {number(r.pass_hat_k, '.2f')} {_ci(r.pass_hat_k_ci_95)} ({r.cases} cases)"
                for r in across.by_k
                if r.k in SHOWN_K
            ]
            lines.append(wrap(f"across instructions (case as cluster): {'; '.join(parts)}", width))
        same_code = passk.same_code
        if same_code:
            lines.append(
                wrap(
                    f"same code: {same_code.one_brick}/{same_code.cases} instructions whose successful runs all "
                    f"saved the same brick ({percent(same_code.rate)}, Wilson 95% {_ci(same_code.ci_95)})",
                    width,
                )
            )
    return lines


def _robustness_lines(robustness: Robustness | None, on: str, width: int | None) -> list[str]:
    lines: list[str] = []
    if robustness:
        header = ["generator", "cases", "nominal", "robust pass", "worst case", "robust drop", "s→f flips", "f→s flips"]
        rows = []
        for g in robustness["generators"]:
            estimates = [_estimate(g[name]) for name in GENERATOR_ESTIMATES]
            rows.append([printable(g["generator"]), f"{g['cases']} ({g['variants']} var.)", *estimates])
        lines += ["", f"robustness on {on} per generator across cases (first run of each variant; case as cluster):"]
        lines += render(header, rows, width, keys=1)
    return lines


def _survival_lines(survival: Survival | None, width: int | None) -> list[str]:
    lines: list[str] = []
    if survival:
        for scorer, data in survival.items():
            header = ["engine", "violated", "median turn [95%]", "holding at end", "flips/conv [95%]", "recovered"]
            rows = []
            for engine, e in data.engines.items():
                last = e.still_holding[-1]
                low, high = e.median_ci_95
                median = "not reached" if e.median_turn_of_first_violation is None else e.median_turn_of_first_violation
                rows.append(
                    [
                        printable(engine),
                        f"{e.violated}/{e.conversations}",
                        f"{median} [{low or '>' + str(last.turn)}, {high or '>' + str(last.turn)}]",
                        f"{number(last.rate, '.2f')} {_ci(last.ci_95)}",
                        "-" if e.flips is None else f"{number(e.flips.mean, '.2f')} {_ci(e.flips.ci_95)}",
                        f"{e.recovered}/{e.violated}",
                    ]
                )
            lines += ["", f"when conversations break ({scorer}): turn of first violation, Kaplan–Meier"]
            lines += render(header, rows, width, keys=1)
            lines += [wrap(printable(c.sentence), width) for c in data.comparisons]
    return lines


def _estimate(entry: Estimate | None) -> str:
    """An estimate, its interval and its n (cases for a ratio of case means)."""
    estimate = None if entry is None else entry["estimate"]
    if entry is None or estimate is None:
        return "-"
    return f"{number(estimate, '.2f')} {_ci(entry['ci_95'])} n={entry.get('n', entry.get('cases'))}"
