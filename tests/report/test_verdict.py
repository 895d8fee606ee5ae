from hypothesis import given
from hypothesis import strategies as st

from ironbench.analysis.compare import Comparison, Overall
from ironbench.core.kinds import FailOn, Gate
from ironbench.report.gather import Rows, _gauntlet
from ironbench.report.records import (
    AdversarialCase,
    AdversarialSection,
    BaselineCase,
    CompareSection,
    GeneratorSensitivity,
    NotEvidence,
    Rejection,
    SensitivityCell,
    Verdict,
)
from ironbench.report.verdict import agreeing_runs, console_text, split_sentence, verdicts
from ironbench.stats import clopper_pearson_lower, clopper_pearson_upper, wilson_interval
from ironbench.suite.models import Suite
from tests.report import build
from tests.report.build import baseline, decided, group_fields, report, stress, variant


def case(case_id, codes, decision, **counts):
    fields = group_fields(case_id, codes, **counts)
    n, successes = fields["n"], fields["successes"]
    if decision == "stable":
        counted = "".join(c for c in codes if c in "SsGVRUT")  # H and I are no run's outcome
        same = len(counted) - len(counted.rstrip(counted[-1]))
        found = {"reason": "last 3 runs equivalent", "reproduce_lower_95": clopper_pearson_lower(same, n)}
    elif decision == "exhausted":
        found = {
            "reason": f"{n} runs without 3 equivalent in a row",
            "success_lower_95": clopper_pearson_lower(successes, n),
            "success_upper_95": clopper_pearson_upper(successes, n),
        }
    else:
        found = {}
    shown = None if decision is None else decided(decision, n, successes, case_id=case_id, **found)
    return BaselineCase(**{**fields, "decision": shown})


def test_baseline_states_what_the_stable_runs_support_and_no_more():
    data = report(
        baseline=baseline(
            [
                case("a", "SSS", "stable"),
                case("b", "GGG", "stable"),
                case("c", "SGSGSGSGSG", "exhausted"),
                case("d", "S", None),
                case("e", "GSSSSSSSSS", "stable"),
            ]
        )
    )
    [verdict] = verdicts(data)
    assert verdict.headline == (
        "Baseline: 3 of 5 instructions stable (the last 3 runs agreed), 2 on success and "
        "1 on failure; 1 exhausted its runs without agreeing; 1 not decided yet."
    )
    # weakest support first; the count of agreeing runs is read back from the recorded bound
    assert (
        "What the stable runs support: 3/3 → the outcome recurs with probability ≥ 0.37 (one-sided 95%) for "
        "a and b; 9/10 → ≥ 0.61 for e"
    ) in verdict.evidence
    assert "exhausted (10 runs without 3 equivalent in a row): c 5/10 = 50% (95% CI 24%–76%)" in verdict.evidence
    assert "lowest success rate: b 0/3 = 0% (95% CI 0%–56%)" in verdict.evidence
    assert "chance" not in verdict.evidence  # p³+(1−p)³ at the observed rate claims 1.0 after 3/3: not evidence


def test_baseline_counts_timeouts_and_infrastructure_errors_apart():
    data = report(
        baseline=baseline(
            [
                case("slow", "TSSS", "stable", timeouts=1, superseded=2),
                case("down", "SSSI", "stable", excluded=1, infra_errors=1),
            ]
        )
    )
    [verdict] = verdicts(data)
    assert "1 run timed out (counted as a failure, stage timeout)" in verdict.evidence
    assert "2 attempts hit an infrastructure error and were run again" in verdict.evidence
    assert "1 run ended in an infrastructure error not yet re-run (excluded" in verdict.evidence
    # the timeout is one of slow's 4 runs, not an agreeing one; down's infrastructure error is no run at all
    assert (
        "3/4 → the outcome recurs with probability ≥ 0.25 (one-sided 95%) for slow; 3/3 → ≥ 0.37 for down"
        in verdict.evidence
    )
    assert "2 on success and 0 on failure" in verdict.headline


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_the_agreeing_runs_are_read_back_exactly_from_the_bound(n_k):
    n, k = n_k
    assert agreeing_runs(n, clopper_pearson_lower(k, n)) == k


def adversarial(cells, rejections=(), cases=None):
    generators = []
    for c in cells:  # one cell per generator here
        low, high = wilson_interval(c.material, c.variants)
        generators.append(
            GeneratorSensitivity(
                c.generator,
                c.variants,
                c.material,
                c.structural,
                c.stochastic,
                c.within_noise,
                c.directions,
                c.material / c.variants,
                low,
                high,
            )
        )
    reference = decided("reference", 3, 3, reference_source="run_b", reference_group="baseline/c")
    return AdversarialSection(
        cases or [AdversarialCase("c", "", reference, None, [], [])],
        cells,
        sorted(generators, key=lambda g: -g.rate),
        NotEvidence(),
        list(rejections),
    )


def cell(generator, variants, material, structural=0, within_noise=0, directions=None):
    return SensitivityCell(
        "c", generator, variants, material, structural, material - structural, within_noise, directions or {}
    )


def rejection(variant_id, reasons):
    return Rejection("c", "g", variant_id, 1, "m", "", reasons)


def test_adversarial_names_the_generator_that_changes_outcomes_most_and_its_evidence():
    data = report(
        adversarial=adversarial(
            [cell("synonyms", 10, 8, 5, directions={"success lost": 6, "more attempts": 2}), cell("whitespace", 10, 0)],
            [rejection("v1", ["empty output"])],
        )
    )
    first, rejected = verdicts(data)
    assert (
        "8 of 20 variants of 1 instruction changed the outcome materially (5 structural, 3 stochastic)"
        in first.headline
    )
    assert "synonyms changes outcomes most: 8 of 10 variants (80%, 95% CI 49%–94%)" in first.headline
    assert "which way: success lost (6), more attempts (2)" in first.evidence
    assert "judged against c: baseline/c of run run_b (3/3 succeeded)" in first.evidence
    assert "ranking is not established" not in first.evidence  # 0/10 is clearly below 8/10
    assert rejected.headline.startswith("1 AI rewrite rejected") and "empty output (1)" in rejected.evidence


def test_adversarial_says_when_the_baseline_noise_explains_a_difference():
    noisy = variant("g/variant_0001", "within_noise", p_value=0.86, direction="fewer attempts")
    reference = decided("reference", 1, 1, reference_source="this run")
    cases = [AdversarialCase("c", "", reference, None, [noisy], [])]
    [verdict] = verdicts(report(adversarial=adversarial([cell("g", 3, 0, within_noise=1)], cases=cases)))
    assert (
        "0 of 3 variants" in verdict.headline
        and "1 differed only within an unstable baseline's own noise" in verdict.headline
    )
    assert "g/variant_0001 differed from the baseline's most common outcome" in verdict.evidence
    assert "p = 0.86" in verdict.evidence
    assert "judged against c: a fresh run of the instruction in this run (1/1 succeeded)" in verdict.evidence


def test_adversarial_says_when_generators_cannot_be_ranked():
    [verdict] = verdicts(report(adversarial=adversarial([cell("a", 3, 2), cell("b", 3, 1)])))
    assert "ranking is not established" in verdict.evidence


REASONS = {
    "boundary": "level 1 fails systematically and worse than level 0 (3/3 succeeded): p = 0.05 <= 0.05/1",
    "tentative": "level 2 fails systematically, but not significantly worse than level 0: p = 0.2 > 0.05/2; "
    "more runs per level could tell",
}


def ladder(case_id, verdict, at, levels, p=None, reason=None):
    return build.ladder(case_id, verdict, at, levels, p_value=p, reason=reason or REASONS.get(verdict, ""))


def level(number, codes):
    upper = clopper_pearson_upper(codes.count("S"), len(codes))
    return build.level(number, codes, success_upper_95=upper)


def test_stress_states_each_ladder_verdict_with_its_evidence():
    ladders = [
        ladder("cache", "boundary", 1, [level(0, "SSS"), level(1, "GGG")], p=0.05),
        ladder("parser", "tentative", 2, [level(0, "SGS"), level(1, "SSS"), level(2, "GGG")], p=0.2),
        ladder("sorter", "fails_at_base", 0, [level(0, "GGG")]),
        ladder("greeter", "no_boundary", None, [level(0, "SSS"), level(1, "SGS"), level(2, "SSS")]),
        ladder("late", None, None, [level(0, "SSS")]),
    ]
    summary, cache, parser, sorter, greeter, late = verdicts(report(stress=stress(ladders)))
    assert summary.headline == (
        "Stress: a capability boundary in 1 of 5 ladders (level 1); 1 tentative (a systematic "
        "failure not shown worse than level 0); 1 failing at base (level 0 already fails); "
        "1 with no level failing systematically; 1 not finished."
    )
    assert "significantly worse than level 0" in summary.evidence
    assert cache.headline == "cache (add_scope_detail): capability boundary at level 1."
    assert cache.evidence == (
        "Level 1: 0/3 = 0% (95% CI 0%–56%; 0/3 still allows 63%); level 0 (the unchanged "
        "instruction): 3/3 = 100% (95% CI 44%–100%); level 1 against level 0: "
        "p = 0.05 <= 0.05/1."
    )
    assert parser.headline == (
        "parser (add_scope_detail): tentative boundary at level 2: it fails systematically, "
        "but is not shown to be worse than level 0."
    )
    assert "Level 2: 0/3 = 0% (95% CI 0%–56%; 0/3 still allows 63%)" in parser.evidence
    assert "level 0 (the unchanged instruction): 2/3 = 67%" in parser.evidence
    assert "level 2 against level 0: p = 0.2 > 0.05/2; more runs per level could tell" in parser.evidence
    assert sorter.headline.startswith("sorter (add_scope_detail): fails at base: level 0, the unchanged instruction")
    assert "0/3 still allows 63%" in sorter.evidence
    assert greeter.headline == "greeter (add_scope_detail): no boundary: no level of 0–2 failed systematically."
    assert "lowest success at level 1: 2/3" in greeter.evidence
    assert late.headline == "late (add_scope_detail): ladder not finished (1 level so far)."


def test_a_ladder_without_level_0_says_it_had_nothing_to_compare_with():
    reason = "level 1 fails systematically, but no level 0 to compare with"
    old = ladder("old", "tentative", 1, [level(1, "GGG")], reason=reason)
    [verdict] = verdicts(report(stress=stress([old])))
    assert verdict.headline.startswith("old (add_scope_detail): tentative boundary at level 1")
    assert verdict.evidence.endswith("; level 1 fails systematically, but no level 0 to compare with.")


def gauntlet(violated_b, conversations=4):
    """Two engines, three scenarios, `conversations` each: plain violates 3 of every 4, guarded
    `violated_b` of them (per scenario)."""
    rows = []
    for scenario in ("sky", "grass", "law"):
        for conversation in range(1, conversations + 1):
            rows.append(("plain", scenario, "d", "negation_aware", conversation, 8, 2 if conversation <= 3 else 0))
            rows.append(
                ("guarded", scenario, "d", "negation_aware", conversation, 8, 1 if conversation <= violated_b else 0)
            )
    engines = [{"name": "plain", "type": "llm"}, {"name": "guarded", "type": "guarded"}]
    suite = Suite.from_dict({"suite_id": "g", "mode": "gauntlet", "engines": engines, "scenarios": [SCENARIO]})
    counted = Rows(["engine", "scenario", "domain", "scorer", "conversation", "turns", "violations"], rows)
    return report(gauntlet=_gauntlet(suite, counted, [], Rows([], [])))


SCENARIO = {"name": "sky", "domain": "d", "question": "q", "forbidden_phrase": "green", "follow_ups": ["f"]}


def test_gauntlet_counts_conversations_and_says_whether_the_guard_helped():
    helped = verdicts(gauntlet(0))
    assert helped[0].headline == ("plain violated 9 of 12 conversations (75%, 95% CI 47%–91%) across 3 scenarios.")
    assert "18 of 96 turns did" in helped[0].evidence  # turns described, not counted as evidence
    assert helped[-1].headline == "guarded vs plain: guarded helped (fewer violations)."
    assert helped[-1].evidence.startswith("guarded violated 0/12 conversations against 9/12; difference -75 pp")
    assert "stratified by 3 scenario(s), Holm over 1 pair(s)" in helped[-1].evidence
    same = verdicts(gauntlet(3))[-1]
    assert same.headline == "guarded vs plain: cannot be told apart."
    assert "ironbench plan" in same.evidence
    worse = verdicts(gauntlet(4))[-1]  # 12/12 against 9/12 in 12 conversations: too few to tell
    assert worse.headline == "guarded vs plain: cannot be told apart."
    worse = verdicts(gauntlet(40, conversations=40))  # 120/120 against 9/120: that shows
    assert worse[-1].headline == "guarded vs plain: guarded hurt (more violations)."


def test_split_keeps_every_word_of_the_sentence():
    sentence = "b vs a: b helped (fewer violations): b violated 0/4 conversations against 3/4; difference -75 pp"
    head, evidence = split_sentence(sentence, "b")
    assert (head, evidence) == (
        "b vs a: b helped (fewer violations)",
        "b violated 0/4 conversations against 3/4; difference -75 pp",
    )


def test_compare_and_an_aborted_run_lead_the_verdicts():
    comparison = Comparison(
        "run_a",
        "run_b",
        0.05,
        Gate.overall,
        FailOn.regression,
        None,
        [],
        Overall(-0.1, (-0.2, 0.0), 0.0, 0.01, 1.0, 1, 1, None),
        [],
        "regression",
        True,
        "case x regressed.",
        ["x cannot be flagged on its own with 3 vs 3 runs", "y too"],
        engines=["plain: cannot be told apart: violation rate B − A +5.0 pp (95% CI ...), p = 0.7"],
    )
    items = verdicts(report("aborted", "interrupted", compare=CompareSection(comparison, [])))
    assert items[0].headline == "The run was aborted: interrupted."
    assert items[1].headline == "Compare run_a (A) → run_b (B): B regressed against A."
    assert items[1].evidence == (
        "Gate: case x regressed. Warning: x cannot be flagged on its own with 3 vs 3 runs (and 1 more)."
    )
    assert items[2].headline == "plain across the two runs: cannot be told apart."
    assert items[2].evidence.startswith("Violation rate B − A +5.0 pp")


@given(st.lists(st.tuples(st.text(min_size=1, max_size=200), st.text(max_size=300)), max_size=8), st.integers(40, 120))
def test_console_lines_fit_the_width_and_keep_every_word(pairs, width):
    items = [Verdict("x", headline, evidence) for headline, evidence in pairs]
    text = console_text(items, width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines if " " in line.strip())  # a single long word may overflow
    assert sum(1 for line in lines if line.startswith("• ") or line == "•") == len(items)
    assert "".join(text.split()).replace("•", "") == "".join("".join((h + e).split()) for h, e in pairs).replace(
        "•", ""
    )
