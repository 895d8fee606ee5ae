"""What a page lists of a run too large to list whole. Pure.

Every aggregate and verdict is drawn from the whole run; the rows of single groups (a case
and its run strip, a variant and its diff, a ladder's card, a compared case, a transcript)
are listed for all of them up to a size, and past it only for the groups that need a look
(failures, material differences, boundaries), with a note of what was left out and the
command that shows it. So a run of 100,000 invocations still gives a page of a few MB.
"""

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ironbench.analysis.compare import CaseComparison
from ironbench.core.kinds import MATERIAL, NAMED_LEVEL
from ironbench.core.outcome_codes import SUCCESS_CODES
from ironbench.report.records import (
    AdversarialCase,
    AdversarialSection,
    BaselineCase,
    BaselineSection,
    CompareSection,
    CostSection,
    GauntletSection,
    Ladder,
    LadderLine,
    LeftOut,
    ModelSection,
    ReportData,
    StressSection,
    Thread,
)

LISTED_CASES = 300  # baseline cases with a row and a run strip (and rows of the model traffic)
LISTED_VARIANT_CASES = 40  # adversarial cases whose variants are listed
LISTED_HEATMAP_CASES = 150  # rows of the case x generator heatmap
LISTED_LADDERS = 40  # stress ladders drawn as a card
LISTED_COMPARED = 300  # compared cases with a row (a comparison page)
LISTED_FOREST = 150  # compared cases in the forest plot
LISTED_REJECTIONS = 200  # AI rewrites the harness rejected
LISTED_CONVERSATIONS = 200  # gauntlet transcripts

T = TypeVar("T")
S = TypeVar("S")  # a section's record


def listed(data: ReportData) -> ReportData:
    """The page's data with each long list cut to the groups that need a look, in their
    order; a cut list's section says so in `left_out`."""
    run = data.run.run_id
    out = replace(
        data,
        baseline=data.baseline and _baseline(data.baseline, run),
        adversarial=data.adversarial and _adversarial(data.adversarial, run),
        stress=data.stress and _stress(data.stress, run),
        gauntlet=data.gauntlet and _gauntlet(data.gauntlet, run),
        compare=data.compare and _compare(data.compare),
        model=data.model and _model(data.model, run),
        cost=data.cost and _cost(data.cost, run),
    )
    cut = [s for s in (out.baseline, out.adversarial, out.stress) if s is not None and s.left_out is not None]
    if not cut:
        return out
    # the suite as recorded is embedded for the listed groups' instructions: those cases only
    kept = {c.case_id for c in (out.baseline.cases if out.baseline else [])}
    kept |= {c.case_id for c in (out.adversarial.cases if out.adversarial else [])}
    kept |= {ladder.case_id for ladder in (out.stress.ladders if out.stress else [])}
    cases = data.suite.get("cases", [])
    left_out = LeftOut(
        len(kept & {c.get("id") for c in cases}),
        len(cases),
        "the listed ones",
        "the run's run_started event (`ironbench query` over the events view, or `ironbench export`)",
    )
    return replace(out, suite={**data.suite, "cases": [c for c in cases if c.get("id") in kept], "left_out": left_out})


def most_needed(items: Sequence[T], limit: int, need: Callable[[T], Any]) -> list[T]:
    """The `limit` items that need a look most (smallest `need`), in their own order."""
    if len(items) <= limit:
        return list(items)
    keep = sorted(sorted(range(len(items)), key=lambda i: need(items[i]))[:limit])
    return [items[i] for i in keep]


def _cut(section: S, field: str, items: Sequence[T], limit: int, need: Callable[[T], Any], which: str, see: str) -> S:
    """`section` with its list `field` cut to the `limit` `items` that need a look most, saying
    so in its `left_out`: which ones it lists, and the commands (`see`) that show the others."""
    kept = most_needed(items, limit, need)
    return replace(section, **{field: kept}, left_out=LeftOut(len(kept), len(items), which, see))  # type: ignore[type-var]


def sentence(left_out: LeftOut | None, noun: str) -> str:
    """`Lists 300 of 6,553 cases: ...; the rest: ...` (empty when nothing was left out)."""
    if not left_out:
        return ""
    return (
        f"This run is too large to list whole: this lists {left_out.listed:,} of {left_out.of:,} {noun}, "
        f"{left_out.which}. Every figure above counts them all; the others' rows: {left_out.see}."
    )


def _baseline(section: BaselineSection, run: str) -> BaselineSection:
    cases = section.cases
    if len(cases) <= LISTED_CASES:
        return section
    ranks = {None: 0, "exhausted": 1}

    def need(case: BaselineCase) -> tuple:
        runs = case.evidence_codes
        settled_on_failure = case.decided == "stable" and runs[-1:] not in ("", *SUCCESS_CODES)
        failed = any(c not in SUCCESS_CODES for c in runs)
        return (ranks.get(case.decided, 4 if not failed else 3 if not settled_on_failure else 2), case.low)

    return _cut(
        section,
        "cases",
        cases,
        LISTED_CASES,
        need,
        "the undecided and the exhausted first, then those stable on a failure, then those with failed runs "
        "and the lowest success rates",
        f"`ironbench query stability.sql --run {run}` (every decision), `ironbench query success_by_case.sql "
        f"--run {run}` (every success rate), `ironbench log {run} CASE` (a case's runs)",
    )


def _adversarial(section: AdversarialSection, run: str) -> AdversarialSection:
    out = section
    cases = section.cases
    if sum(len(c.variants) for c in cases) > LISTED_CASES or len(cases) > LISTED_VARIANT_CASES:

        def moved(case: AdversarialCase) -> list:
            return [v for v in case.variants if v.decided != "not_material"]

        def need(case: AdversarialCase) -> tuple:
            material = sum(1 for v in case.variants if v.decided in MATERIAL)
            # then a case whose generators made fewer variants than asked: its figures rest on fewer wordings
            return (-material, -len(moved(case)), -len(case.shortfalls))

        kept = [c for c in most_needed(cases, LISTED_VARIANT_CASES, need) if moved(c) or c.dropped or c.shortfalls]
        out = replace(
            out,
            cases=[replace(c, variants=moved(c), not_listed=len(c.variants) - len(moved(c))) for c in kept],
            left_out=LeftOut(
                len(kept),
                len(cases),
                "those with the most variants that changed the outcome, and of each only the variants that did "
                "(or are not decided yet)",
                f"`ironbench query sensitivity_by_generator.sql --run {run}` (every case and generator), "
                f"`ironbench log {run} CASE --variant VARIANT` (a variant's runs)",
            ),
        )
    case_ids = list(dict.fromkeys(c.case_id for c in section.cells))
    if len(case_ids) > LISTED_HEATMAP_CASES:
        share: dict[str, list[int]] = {}
        for cell in section.cells:
            tally = share.setdefault(cell.case_id, [0, 0])
            tally[0] += cell.material
            tally[1] += cell.variants
        rows = most_needed(case_ids, LISTED_HEATMAP_CASES, lambda c: -share[c][0] / max(1, share[c][1]))
        kept_ids = set(rows)
        out = replace(
            out,
            cells=[c for c in section.cells if c.case_id in kept_ids],
            heatmap_left_out=LeftOut(
                len(kept_ids),
                len(case_ids),
                "the most sensitive",
                f"`ironbench query sensitivity_by_generator.sql --run {run}`",
            ),
        )
    if len(section.rejections) > LISTED_REJECTIONS:
        out = replace(
            out,
            rejections=section.rejections[:LISTED_REJECTIONS],
            rejections_left_out=LeftOut(
                LISTED_REJECTIONS,
                len(section.rejections),
                "the first rejected",
                f"`ironbench query ai_acceptance.sql --run {run}`, and each slot's ai_generation_failure.json in the "
                "output tree",
            ),
        )
    return out


def _stress(section: StressSection, run: str) -> StressSection:
    ladders = section.ladders
    if len(ladders) <= LISTED_LADDERS:
        return section

    def need(ladder: Ladder) -> tuple:
        verdict = ladder.verdict
        return (0 if verdict is None else 1 if verdict in NAMED_LEVEL else 2, ladder.case_id)

    cut = _cut(
        section,
        "ladders",
        ladders,
        LISTED_LADDERS,
        need,
        "the unfinished first, then those with a boundary, a tentative one or failing at base",
        f"`ironbench query stress_boundary.sql --run {run}` (every level), `ironbench log {run} CASE` (a "
        "ladder's runs)",
    )
    return replace(
        cut,
        # every ladder's verdict, one line each: the section's aggregate
        verdicts=[
            LadderLine(
                ladder.case_id,
                ladder.generator,
                ladder.verdict,
                ladder.verdict_level,
                len(ladder.levels),
                sum(level.n for level in ladder.levels),
            )
            for ladder in ladders
        ],
    )


def _gauntlet(section: GauntletSection, run: str) -> GauntletSection:
    threads = section.transcripts
    if len(threads) <= LISTED_CONVERSATIONS:
        return section

    def need(thread: Thread) -> int:
        violated = any(score.violated for turn in thread.turns for score in turn.scores or ())
        return 0 if violated else 1

    return _cut(
        section,
        "transcripts",
        threads,
        LISTED_CONVERSATIONS,
        need,
        "those with a violating turn first",
        f"`ironbench query violation_by_engine.sql --run {run}`, and the run's gauntlet/results.json in the "
        "output tree (every turn)",
    )


def _cases(section: S, run: str, need: Callable[[Any], Any], which: str, see: str) -> S:
    """A section of rows by case (model traffic, cost), cut to the LISTED_CASES that `need` ranks first."""
    cases = section.cases  # type: ignore[attr-defined]
    if len(cases) <= LISTED_CASES:
        return section
    return _cut(section, "cases", cases, LISTED_CASES, need, which, see)


def _model(section: ModelSection, run: str) -> ModelSection:
    return _cases(
        section,
        run,
        lambda case: (-case.calls, case.case_id),
        "those that made the most model calls",
        "`ironbench query "
        '"SELECT case_id, count(*) AS calls, sum(prompt_tokens), sum(completion_tokens) FROM model_calls GROUP BY 1" '
        f"--run {run}` (every case's calls and tokens)",
    )


def _cost(section: CostSection, run: str) -> CostSection:
    return _cases(
        section,
        run,
        lambda case: (-(case.usd or 0.0), case.case_id),
        "the dearest",
        f"`ironbench show {run} --format json` (cost.cases), or `ironbench query cost_per_case.sql --run {run}`",
    )


def _compared_need(case: CaseComparison) -> tuple:
    return (
        not case.flagged,
        case.delta is None,
        case.p_adjusted if case.p_adjusted is not None else 2.0,
        case.delta or 0.0,
    )


def _compare(section: CompareSection) -> CompareSection:
    cases = section.cases
    if len(cases) <= LISTED_COMPARED:
        return section
    comparison = section.comparison
    return _cut(
        section,
        "cases",
        cases,
        LISTED_COMPARED,
        _compared_need,
        "the flagged first, then by adjusted p",
        f"`ironbench compare {comparison.run_a} {comparison.run_b} --format json` (every case)",
    )


def forest(cases: Sequence[CaseComparison]) -> list[CaseComparison]:
    """The compared cases a forest plot draws: all, or past a size the flagged first, then by adjusted p."""
    return most_needed([c for c in cases if c.delta is not None], LISTED_FOREST, _compared_need)
