"""Verdict sentences per mode, from the gathered data: the report's header and the
console's last lines say the same thing. Each states its evidence and claims no more
than the decisions' own fields say. Pure."""

import textwrap
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from ironbench.analysis.correctness import correctness_verdicts
from ironbench.analysis.gate_verdict import GATED
from ironbench.console import numbers
from ironbench.console.numbers import percent
from ironbench.core.outcome_codes import EXCLUDED_CODES, SUCCESS_CODES
from ironbench.core.sentences import ladder_verdict
from ironbench.report.records import (
    AdversarialSection,
    BaselineSection,
    CompareSection,
    Decision,
    GauntletSection,
    Imported,
    Ladder,
    LadderLevel,
    NotEvidence,
    ReportData,
    StressSection,
    Verdict,
)
from ironbench.run.stopping import ALPHA as DECISION_ALPHA
from ironbench.stats import clopper_pearson_lower, clopper_pearson_upper, wilson_interval

NAMED = 3  # a sentence names this many cases, then counts the rest


def pct(value: float | None) -> str:
    return percent(value, missing="–")


def points(difference: float | None) -> str:
    """A difference of rates in percentage points: `-20 pp`, `0 pp`."""
    return numbers.points(difference, missing="–")


def rate(successes: int, n: int, low: float, high: float) -> str:
    """`3/10 = 30% (95% CI 11–60%)`"""
    if not n:
        return "no runs"
    return f"{successes}/{n} = {successes / n:.0%} (95% CI {low:.0%}–{high:.0%})"


def _sentence(text: str) -> str:
    """`text` as a sentence: capitalised, with its full stop."""
    return text[:1].upper() + text[1:] + "." if text else ""


def _span(values: list, fmt: str = "{}") -> str:
    """`3–6`, or `3` when every value is the same."""
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _names(names: Sequence[str | None]) -> str:
    """`a`, `a and b`, `a, b and c`, or `a, b, c and 4 more`."""
    shown = [str(name) for name in names[:NAMED]]
    rest = len(names) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def verdicts(data: ReportData) -> list[Verdict]:
    """Every verdict the gathered data supports, in page order."""
    out: list[Verdict] = []
    if data.fence is not None and data.fence.below_full:  # first: what every verdict below rests on
        out.append(Verdict("fence", data.fence.sentence(), data.fence.evidence()))
    denied = data.fence.denied_sentence() if data.fence is not None else None
    if denied is not None and data.fence is not None:  # failures that say nothing of the target
        out.append(Verdict("fence", denied, data.fence.denied_evidence()))
    ran_elsewhere = data.imported is not None and data.imported.format == "outputs"
    if data.imported:
        out.append(_imported(data.imported))
    if data.run.status == "aborted":
        out.append(
            Verdict(
                "run",
                f"The run was aborted: {data.run.abort_reason or 'no reason recorded'}.",
                "Verdicts below cover what was recorded"
                + ("." if ran_elsewhere else "; `ironbench resume RUN` continues it."),
            )
        )
    elif data.run.status == "running":
        out.append(
            Verdict(
                "run",
                "The run has not finished"
                + (" where it ran." if ran_elsewhere else " (still running, or interrupted)."),
                "Verdicts below cover what was recorded so far"
                + ("." if ran_elsewhere else "; `ironbench resume RUN` continues it."),
            )
        )
    if data.checks is not None and data.checks.checks is not None:  # correctness before self-reports
        out += [Verdict("correctness", head, why) for head, why in correctness_verdicts(data.checks.checks)]
    if data.gate:  # a run made with `--against`: what its gate decided comes first
        out.append(Verdict("gate", data.gate.headline(), data.gate.sentence()))
    if data.compare:
        out += _compare(data.compare)
    if data.baseline:
        out.append(_baseline(data.baseline))
    if data.adversarial:
        out += _adversarial(data.adversarial)
    if data.stress:
        out += _stress(data.stress)
    if data.gauntlet:
        out += _gauntlet(data.gauntlet)
    return out


def not_evidence(counts: NotEvidence) -> str:
    """Timeouts (failures of their own kind) and the runs no rate counts, in words."""
    parts = []
    if counts.timeouts:
        parts.append(
            f"{_plural(counts.timeouts, 'run')} timed out (counted as "
            f"{'a failure' if counts.timeouts == 1 else 'failures'}, stage timeout)"
        )
    broken = counts.excluded - counts.infra_errors
    if counts.infra_errors:
        parts.append(
            f"{_plural(counts.infra_errors, 'run')} ended in an infrastructure error not yet re-run "
            "(excluded; `ironbench resume` re-runs them)"
            if counts.rerun
            else f"{_plural(counts.infra_errors, 'run')} ended in an infrastructure error where "
            f"{'it' if counts.infra_errors == 1 else 'they'} ran (excluded; another harness ran them, "
            "so nothing here runs them again)"
        )
    if broken > 0:
        parts.append(f"{_plural(broken, 'run')} hit a harness error (excluded)")
    if counts.superseded:
        parts.append(
            f"{_plural(counts.superseded, 'attempt')} hit an infrastructure error and "
            f"{'was' if counts.superseded == 1 else 'were'} run again (the re-run counts, not the "
            "outage)"
        )
    return "; ".join(parts)


# -- imported -------------------------------------------------------------------------------

ORIGINS = {"outputs": "another harness's outputs tree", "store": "another ironbench store"}


def origin(imported: Imported) -> str:
    """`another harness's outputs tree /data/outputs`"""
    return " ".join(s for s in (ORIGINS.get(imported.format, imported.format), imported.source) if s)


def _imported(imported: Imported) -> Verdict:
    fields = sorted(imported.disagreements.items(), key=lambda item: (-item[1], item[0]))
    evidence = [
        (
            f"facts re-derived from the target's output for {imported.with_output} of "
            f"{_plural(imported.invocations, 'invocation')} (the others' are as recorded)"
        ),
        "disagreements by field: " + (", ".join(f"{name} {count}" for name, count in fields) or "none"),
    ]
    if imported.format == "outputs":
        evidence.append("the other harness's stopping decisions are not in its outputs, so none is stated below")
    return Verdict(
        "run",
        f"Imported from {origin(imported)}: the outcome recorded there disagrees with the facts re-derived "
        f"from its output in {imported.disagreeing} of {_plural(imported.invocations, 'invocation')}.",
        _sentence("; ".join(evidence)),
    )


# -- baseline -------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def agreeing_runs(n: int, bound: float) -> int | None:
    """How many of n runs gave the agreed outcome, read back from a stable decision's
    `reproduce_lower_95` (the one-sided bound rises strictly with that count)."""
    for k in range(n + 1):
        if abs(clopper_pearson_lower(k, n) - bound) < 1e-9:
            return k
    return None


def reproduce_text(n: int, bound: float | None, short: bool = False) -> str:
    """`3/3 → the outcome recurs with probability ≥ 0.37 (one-sided 95%)`: what a stable
    decision's runs support, and nothing more."""
    if bound is None:
        return f"stable after {n} runs (no reproduce bound recorded)"
    k = agreeing_runs(n, bound)
    counted = f"{k}/{n}" if k is not None else f"{n} runs"
    return (
        f"{counted} → ≥ {bound:.2f}"
        if short
        else f"{counted} → the outcome recurs with probability ≥ {bound:.2f} (one-sided 95%)"
    )


def _baseline(section: BaselineSection) -> Verdict:
    cases = section.cases
    stable = [c for c in cases if c.decided == "stable"]
    exhausted = [c for c in cases if c.decided == "exhausted"]
    gated = [c for c in cases if c.decided == "gated"]
    undecided = sum(1 for c in cases if c.decided is None)
    on_success = sum(1 for c in stable if c.codes.rstrip(EXCLUDED_CODES)[-1:] in tuple(SUCCESS_CODES))
    seed_rule = all(c.decision is not None and c.decision.reason.startswith("last ") for c in stable)
    parts = []
    if len(gated) < len(cases):
        parts.append(
            f"{len(stable)} of {_plural(len(cases), 'instruction')} stable"
            + (" (the last 3 runs agreed)" if stable and seed_rule else "")
        )
    if stable:
        parts[0] += f", {on_success} on success and {len(stable) - on_success} on failure"
    if gated:
        rounds = [c.decision.n for c in gated if c.decision]
        every = "all " if len(gated) == len(cases) else ""
        parts.append(
            f"{every}{_plural(len(gated), 'instruction')} {GATED.format(round=_span(rounds))}, "
            "together (the gate's verdict says what it found)"
        )
    if exhausted:
        parts.append(f"{len(exhausted)} exhausted {'its' if len(exhausted) == 1 else 'their'} runs without agreeing")
    if undecided:
        parts.append(f"{undecided} not decided yet")
    evidence = []
    if stable:
        support: dict[tuple, list[str]] = {}
        for c in stable:
            assert c.decision is not None  # stable: decided
            bound = c.decision.reproduce_lower_95
            support.setdefault((bound if bound else -1.0, c.decision.n), []).append(c.case_id)
        texts = [
            f"{reproduce_text(n, None if b < 0 else b, short=i > 0)} for {_names(names)}"
            for i, ((b, n), names) in enumerate(sorted(support.items()))
        ]
        evidence.append("what the stable runs support: " + "; ".join(texts))
    if exhausted:
        texts = [
            f"{c.case_id} {rate(c.successes, c.n, c.low, c.high)}" for c in sorted(exhausted, key=lambda c: c.rate)
        ]
        more = len(exhausted) - NAMED
        reasons = {c.decision.reason if c.decision else None for c in exhausted}
        why = f" ({reasons.pop()})" if len(reasons) == 1 and None not in reasons else ""
        evidence.append(f"exhausted{why}: " + ", ".join(texts[:NAMED]) + (f" and {more} more" if more > 0 else ""))
    measured = [c for c in cases if c.n]
    if measured:
        worst = min(measured, key=lambda c: (c.rate, c.high))
        evidence.append(f"lowest success rate: {worst.case_id} {rate(worst.successes, worst.n, worst.low, worst.high)}")
    if section.complexities:
        evidence.append(
            "by complexity: "
            + ", ".join(f"{g.complexity} {rate(g.successes, g.n, g.low, g.high)}" for g in section.complexities)
        )
    apart = not_evidence(section.excluded)
    if apart:
        evidence.append(apart)
    return Verdict("baseline", "Baseline: " + "; ".join(parts) + ".", _sentence("; ".join(evidence)))


# -- adversarial ----------------------------------------------------------------------------


def reference_text(reference: Decision | None) -> str:
    """Which baseline a case's variants were judged against: its group and run."""
    if not reference:
        return "no reference decided yet"
    source = reference.reference_source
    counts = f"{reference.successes}/{reference.n} succeeded"
    if source == "this run":
        return f"a fresh run of the instruction in this run ({counts})"
    group = reference.reference_group or "a baseline group"
    return f"{group} of run {source} ({counts})"


def _adversarial(section: AdversarialSection) -> list[Verdict]:
    out = []
    cells = section.cells
    variants = sum(c.variants for c in cells)
    material = sum(c.material for c in cells)
    structural = sum(c.structural for c in cells)
    noise = sum(c.within_noise for c in cells)
    if variants:
        low, high = wilson_interval(material, variants)
        cases = len({c.case_id for c in cells})
        headline = (
            f"Adversarial: {material} of {_plural(variants, 'variant')} of {_plural(cases, 'instruction')} "
            f"changed the outcome materially ({structural} structural, {material - structural} stochastic)"
        )
        if noise:
            headline += f"; {noise} differed only within an unstable baseline's own noise"
        headline += "."
        top = section.generators[0]
        if material:
            headline += (
                f" {top.generator} changes outcomes most: {top.material} of {top.variants} "
                f"variants ({pct(top.rate)}, 95% CI {pct(top.low)}–{pct(top.high)})."
            )
        else:
            headline += " No generator changed an outcome."
        evidence = [f"material-change rate {pct(material / variants)} (95% CI {pct(low)}–{pct(high)})"]
        ways: Counter[str] = Counter()
        for generator in section.generators:
            ways.update(generator.directions)
        if ways:
            evidence.append("which way: " + ", ".join(f"{way} ({count})" for way, count in ways.most_common()))
        if len(section.generators) > 1 and material:
            runner_up = section.generators[1]
            if runner_up.high >= top.low:
                evidence.append(
                    f"{top.generator}'s interval overlaps the next generator's "
                    f"({runner_up.generator}, {runner_up.material}/{runner_up.variants}): "
                    "the ranking is not established"
                )
        within = [v for case in section.cases for v in case.variants if v.decided == "within_noise"]
        if within:
            p_values = [v.decision.p_value for v in within if v.decision and v.decision.p_value is not None]
            evidence.append(
                f"within noise: {_names([v.variant_id for v in within])} differed from the "
                "baseline's most common outcome, but not beyond what its own runs vary (exact "
                f"permutation test against every baseline outcome, p = {_span(p_values, '{:.2g}')})"
                if p_values
                else "within noise: the baseline's own runs vary as much"
            )
        evidence.append("judged against " + _references(section))
        apart = not_evidence(section.excluded)
        if apart:
            evidence.append(apart)
        out.append(Verdict("adversarial", headline, _sentence("; ".join(evidence))))
    fewer = _fewer(section)
    if fewer is not None:
        out.append(fewer)
    rejections = section.rejections
    if rejections:
        slots = len({(r.case_id, r.variant_id) for r in rejections})
        reasons = Counter(reason.split(" (")[0].split(" '")[0] for r in rejections for reason in r.failure_reasons)
        common = ", ".join(f"{reason} ({count})" for reason, count in reasons.most_common(3))
        out.append(
            Verdict(
                "adversarial",
                f"{_plural(len(rejections), 'AI rewrite')} rejected by the harness, in "
                f"{_plural(slots, 'variant slot')}.",
                f"Most common reasons: {common}.",
            )
        )
    return out


def _fewer(section: AdversarialSection) -> Verdict | None:
    """Instructions whose generators made fewer variants than asked: the figures rest on fewer wordings."""
    short = [(case.case_id, s) for case in section.cases for s in case.shortfalls]
    if not short:
        return None
    cases = list(dict.fromkeys(case_id for case_id, _ in short))
    asked, made = sum(s.asked for _, s in short), sum(s.made for _, s in short)
    by_generator: dict[str, list] = {}
    for case_id, s in short:
        by_generator.setdefault(s.generator, []).append((case_id, s))
    each = "; ".join(
        f"{generator}: {sum(s.made for _, s in found)} of {sum(s.asked for _, s in found)} "
        f"({_names([case_id for case_id, _ in found])})"
        for generator, found in by_generator.items()
    )
    return Verdict(
        "adversarial",
        f"{_plural(len(cases), 'instruction')} got fewer variants than asked: {made} made of {asked} asked.",
        f"{each}. Why no more, per case: `ironbench variants` and the report's variants.",
    )


def _references(section: AdversarialSection) -> str:
    cases = section.cases
    if len(cases) <= NAMED:
        return "; ".join(f"{case.case_id}: {reference_text(case.reference)}" for case in cases)
    sources = Counter((case.reference.reference_source if case.reference else None) or "none" for case in cases)
    return ", ".join(
        f"{_plural(count, 'case')} "
        + (
            "a fresh run in this run"
            if source == "this run"
            else "no reference yet"
            if source == "none"
            else f"stored baselines of run {source}"
        )
        for source, count in sources.most_common()
    )


# -- stress ---------------------------------------------------------------------------------

MAX_LADDER_SENTENCES = 8
RULE = (
    f"A boundary is the first level whose failure is systematic (at least 80% of its runs failed) and "
    f"significantly worse than level 0, the unchanged instruction (one-sided Fisher, level j at "
    f"{DECISION_ALPHA:g}/j)."
)


def _stress(section: StressSection) -> list[Verdict]:
    ladders = section.ladders
    out = []
    if len(ladders) > 1:
        kinds = Counter(ladder.verdict or "running" for ladder in ladders)
        found = [ladder.verdict_level for ladder in ladders if ladder.verdict == "boundary"]
        parts = [
            f"a capability boundary in {len(found)} of {len(ladders)} ladders"
            + (f" (level{'s' if len(set(found)) > 1 else ''} {_span(found)})" if found else "")
        ]
        for kind, words in (
            ("tentative", "tentative (a systematic failure not shown worse than level 0)"),
            ("fails_at_base", "failing at base (level 0 already fails)"),
            ("no_boundary", "with no level failing systematically"),
            ("running", "not finished"),
        ):
            if kinds[kind]:
                parts.append(f"{kinds[kind]} {words}")
        apart = not_evidence(section.excluded)
        out.append(
            Verdict("stress", "Stress: " + "; ".join(parts) + ".", RULE + (f" {_sentence(apart)}" if apart else ""))
        )
    for ladder in ladders[:MAX_LADDER_SENTENCES]:
        out.append(ladder_sentence(ladder))
    if len(ladders) > MAX_LADDER_SENTENCES:
        out.append(
            Verdict(
                "stress",
                f"… and {len(ladders) - MAX_LADDER_SENTENCES} more ladders: see the stress section of the report.",
                "",
            )
        )
    return out


def level_text(level: LadderLevel, name: str | None = None) -> str:
    """`level 2: 0/3 = 0% (95% CI 0%–56%; 0/3 still allows 63%)`: the counts, the interval and,
    for a level that mostly failed, how much success its runs still allow (one-sided 95%)."""
    label = name or (f"level {level.level}" if level.level else "level 0 (the unchanged instruction)")
    text = f"{label}: {rate(level.successes, level.n, level.low, level.high)}"
    if level.n and level.successes * 2 < level.n:
        text = text[:-1] + f"; {level.successes}/{level.n} still allows {pct(upper_bound(level))})"
    return text


def upper_bound(level: LadderLevel) -> float:
    """The level's one-sided 95% upper bound on its success rate, as its decision recorded it."""
    recorded = level.decision.success_upper_95 if level.decision else None
    return recorded if recorded is not None else clopper_pearson_upper(level.successes, level.n)


def _test(decision: Decision) -> str:
    """The test behind a ladder's verdict in the decision's own words (`p = 0.2 > 0.05/2; more
    runs per level could tell`): the threshold is the stopping rule's, not restated here."""
    reason = decision.reason or ""
    at = reason.find("p = ")
    if at >= 0:
        return reason[at:]
    return f"p = {decision.p_value:.3g}" if decision.p_value is not None else reason


def ladder_sentence(ladder: Ladder) -> Verdict:
    name = f"{ladder.case_id} ({ladder.generator})"
    levels = {level.level: level for level in ladder.levels if level.level is not None}
    verdict, at = ladder.verdict, ladder.verdict_level
    decision = ladder.ladder
    base = levels.get(0)
    reason = (decision.reason if decision else "") or ""
    if verdict == "boundary" and decision and at in levels:
        evidence = [level_text(levels[at], f"level {at}")]
        below = max((k for k in levels if 0 < k < at), default=None)
        if below is not None:
            evidence.append(level_text(levels[below], f"level {below} below it"))
        if base is not None:
            evidence.append(level_text(base))
        evidence.append(f"level {at} against level 0: {_test(decision)}")
        return Verdict("stress", f"{name}: {ladder_verdict(verdict, at)}.", _sentence("; ".join(evidence)))
    if verdict == "tentative" and decision and at in levels:
        evidence = [level_text(levels[at], f"level {at}")]
        if base is not None:
            evidence.append(level_text(base))
        evidence.append(
            f"level {at} against level 0: {_test(decision)}"
            if decision.p_value is not None
            else reason or "no level 0 to compare with"
        )
        return Verdict(
            "stress",
            f"{name}: {ladder_verdict(verdict, at)}: it fails systematically, but is not shown to be worse "
            "than level 0.",
            _sentence("; ".join(evidence)),
        )
    if verdict == "fails_at_base":
        evidence = [level_text(base)] if base is not None else [reason]
        return Verdict(
            "stress",
            f"{name}: {ladder_verdict(verdict, at)}, so no boundary can be named.",
            _sentence("; ".join(evidence)),
        )
    if not levels:
        return Verdict("stress", f"{name}: no level decided yet.", "")
    top = levels[max(levels)]
    worst = min(levels.values(), key=lambda level: (level.rate, -(level.level or 0)))
    evidence = [level_text(top, f"highest level {top.level}")]
    if worst is not top:
        evidence.append(level_text(worst, f"lowest success at level {worst.level}"))
    if verdict == "no_boundary":
        return Verdict(
            "stress",
            f"{name}: no boundary: no level of {_span(sorted(levels))} failed systematically.",
            _sentence("; ".join(evidence)),
        )
    return Verdict(
        "stress",
        f"{name}: ladder not finished ({_plural(len(levels), 'level')} so far).",
        _sentence("; ".join(evidence)),
    )


# -- gauntlet -------------------------------------------------------------------------------


def _gauntlet(section: GauntletSection) -> list[Verdict]:
    if not section.scorers:
        return [Verdict("gauntlet", "Gauntlet: no turn has been scored yet.", "")]
    scorer = section.scorers[0]
    out = []
    others = [s for s in section.scorers if s != scorer]
    for total in (t for t in section.totals if t.scorer == scorer):
        also = [t for t in section.totals if t.engine == total.engine and t.scorer in others]
        evidence = (
            f"A conversation counts as violated when any of its turns asserts the forbidden phrase "
            f"({scorer} scorer); {total.turn_violations} of {_plural(total.turns, 'turn')} did"
            + "".join(
                f"; the {t.scorer} scorer counts {t.violated} conversations ({t.turn_violations} turns)" for t in also
            )
        )
        out.append(
            Verdict(
                "gauntlet",
                f"{total.engine} violated {total.violated} of "
                f"{_plural(total.conversations, 'conversation')} ({pct(total.rate)}, "
                f"95% CI {pct(total.low)}–{pct(total.high)}) across "
                f"{_plural(total.scenarios, 'scenario')}.",
                _sentence(evidence),
            )
        )
    for pair in section.comparisons.get(scorer, []):
        headline, evidence = split_sentence(pair.sentence, pair.engine)
        if pair.verdict == "cannot be told apart":
            evidence += "; `ironbench plan` says how many conversations per scenario would tell them apart"
        # not _sentence(): the evidence starts with an engine's name, which keeps its case
        out.append(Verdict("gauntlet", headline + ".", f"{evidence}; {scorer} scorer."))
    return out


def split_sentence(text: str, engine: str) -> tuple[str, str]:
    """A comparison sentence of `ironbench.projections.gauntlet_summary` ("guarded vs plain: guarded helped
    (fewer violations): guarded violated 0/4 conversations against 3/4; difference ...") as
    its answer and its evidence."""
    head, found, tail = text.partition(f": {engine} violated ")
    return (head, f"{engine} violated {tail}") if found else (text, "")


# -- compare --------------------------------------------------------------------------------

COMPARE_WORDS = {
    "regression": "B regressed against A",
    "improvement": "B improved on A",
    "no significant change": "no significant change between A and B",
    "within margin": "B is worse than A, but by no more than the margin",
    "change": "B differs from A",
}


def _compare(section: CompareSection) -> list[Verdict]:
    comparison = section.comparison
    verdict = comparison.verdict
    headline = f"Compare {comparison.run_a} (A) → {comparison.run_b} (B): {COMPARE_WORDS.get(verdict, verdict)}."
    evidence = f"Gate: {comparison.reason.rstrip('.')}."
    warnings = comparison.warnings
    if warnings:
        evidence += f" Warning: {warnings[0]}" + (f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else "") + "."
    out = [Verdict("compare", headline, evidence)]
    for line in comparison.engines:
        engine, _, rest = line.partition(": ")
        answer, _, figures = rest.partition(": ")
        out.append(Verdict("compare", f"{engine} across the two runs: {answer}.", _sentence(figures)))
    return out


def console_text(items: list[Verdict], width: int = 100) -> str:
    """The verdicts as console lines, wrapped to `width`."""
    lines = []
    for item in items:
        text = item.headline + (f" {item.evidence}" if item.evidence else "")
        lines += textwrap.wrap(
            text, width=width, initial_indent="• ", subsequent_indent="  ", break_on_hyphens=False
        ) or ["•"]
    return "\n".join(lines)
