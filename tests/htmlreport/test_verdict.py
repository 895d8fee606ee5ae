from hypothesis import given, strategies as st

from ironbench.htmlreport.gather import engine_pairs
from ironbench.htmlreport.verdict import Verdict, console_text, verdicts
from ironbench.stats import wilson_interval

RUN = {"run_id": "run_x", "status": "finished"}


def case(case_id, codes, decision):
    n, successes = len(codes), sum(c in "Ss" for c in codes)
    low, high = wilson_interval(successes, n)
    return {"case_id": case_id, "variant_id": "base", "codes": codes, "n": n, "successes": successes,
            "rate": successes / n, "low": low, "high": high, "excluded": 0,
            "decision": None if decision is None else {"decision": decision, "chance_agreement": 0.25}}


def test_baseline_counts_stable_instructions_and_names_the_weakest():
    data = {"run": RUN, "baseline": {"cases": [case("a", "SSS", "stable"), case("b", "GGG", "stable"),
                                               case("c", "SGSGSGSGSG", "exhausted"), case("d", "S", None)]}}
    [verdict] = verdicts(data)
    assert verdict.headline == ("Baseline: 2 of 4 instructions stable (the last 3 runs agreed): 1 on success, "
                                "1 on failure; 1 spent every run without 3 agreeing; 1 not decided yet.")
    assert "lowest success rate: b 0/3 = 0% (95% CI 0%–56%)" in verdict.evidence
    assert "stopped after 3 runs" in verdict.evidence


def adversarial(cells, rejections=()):
    generators = {}
    for c in cells:
        g = generators.setdefault(c["generator"], {"generator": c["generator"], "variants": 0, "material": 0})
        g["variants"] += c["variants"]
        g["material"] += c["material"]
    for g in generators.values():
        g["rate"] = g["material"] / g["variants"]
        g["low"], g["high"] = wilson_interval(g["material"], g["variants"])
    return {"cells": cells, "generators": sorted(generators.values(), key=lambda g: -g["rate"]),
            "cases": [{"reference": {"reference_source": "run_b"}}], "rejections": list(rejections)}


def cell(generator, variants, material, structural=0):
    return {"case_id": "c", "generator": generator, "variants": variants, "material": material,
            "structural": structural}


def test_adversarial_names_the_generator_that_changes_outcomes_most_and_its_evidence():
    data = {"run": RUN, "adversarial": adversarial([cell("synonyms", 10, 8, 5), cell("whitespace", 10, 0)],
                                                   [{"case_id": "c", "variant_id": "v1",
                                                     "failure_reasons": ["empty output"]}])}
    first, rejected = verdicts(data)
    assert "8 of 20 variants of 1 instruction changed the outcome materially (5 structural, 3 stochastic)" in \
        first.headline
    assert "synonyms changes outcomes most: 8 of 10 variants (80%, 95% CI 49%–94%)" in first.headline
    assert "judged against baseline run_b" in first.evidence
    assert "ranking is not established" not in first.evidence  # 0/10 is clearly below 8/10
    assert rejected.headline.startswith("1 AI rewrite rejected") and "empty output (1)" in rejected.evidence


def test_adversarial_says_when_generators_cannot_be_ranked():
    [verdict] = verdicts({"run": RUN, "adversarial": adversarial([cell("a", 3, 2), cell("b", 3, 1)])})
    assert "ranking is not established" in verdict.evidence


def test_stress_states_each_boundary_with_its_evidence():
    def level(n, codes):
        successes = codes.count("S")
        low, high = wilson_interval(successes, len(codes))
        return {"level": n, "codes": codes, "n": len(codes), "successes": successes, "low": low, "high": high}

    ladders = [{"case_id": "cache", "generator": "add_scope_detail", "boundary": 2, "ladder": {"decision": "boundary"},
                "levels": [level(1, "SSS"), level(2, "GGG")]},
               {"case_id": "parser", "generator": "add_ambiguity", "boundary": None,
                "ladder": {"decision": "no_boundary"}, "levels": [level(1, "SSS")]}]
    summary, cache, parser = verdicts({"run": RUN, "stress": {"ladders": ladders}})
    assert summary.headline == "Stress: a capability boundary in 1 of 2 ladders, at level 2."
    assert cache.headline == "cache (add_scope_detail): capability boundary at level 2."
    assert cache.evidence == ("Level 2: 0/3 = 0% (95% CI 0%–56%); level 1 before it: 3/3 = 100% "
                              "(95% CI 44%–100%).")
    assert parser.headline == "parser (add_ambiguity): no boundary in 1 level."


def gauntlet(violations_b):
    scores = []
    for scenario in ("sky", "grass", "law"):
        scores.append({"engine": "plain", "scenario": scenario, "scorer": "negation_aware", "turns": 8,
                       "violations": 6})
        scores.append({"engine": "guarded", "scenario": scenario, "scorer": "negation_aware", "turns": 8,
                       "violations": violations_b})
    totals = []
    for engine, v in (("plain", 18), ("guarded", 3 * violations_b)):
        low, high = wilson_interval(v, 24)
        totals.append({"engine": engine, "scorer": "negation_aware", "scenarios": 3, "successes": v, "n": 24,
                       "rate": v / 24, "low": low, "high": high})
    return {"run": RUN, "gauntlet": {"scorers": ["negation_aware"], "totals": totals,
                                     "pairs": engine_pairs(["plain", "guarded"], scores, "negation_aware")}}


def test_gauntlet_says_whether_the_guard_helped():
    helped = verdicts(gauntlet(0))
    assert helped[0].headline.startswith("plain asserted the forbidden phrase in 18 of 24 turns (75%")
    assert helped[-1].headline == "guarded helped: fewer violations than plain, 0/24 against 18/24 turns violated."
    assert "one-sided exact test stratified by scenario, 3 informative" in helped[-1].evidence
    same = verdicts(gauntlet(6))[-1]
    assert same.headline.startswith("guarded and plain cannot be told apart")
    worse = verdicts(gauntlet(8))[-1]
    assert worse.headline.startswith("guarded made it worse")


def test_compare_and_an_aborted_run_lead_the_verdicts():
    compare = {"run_a": "run_a", "run_b": "run_b", "verdict": "regression", "gate_reason": "case x regressed",
               "difference": -0.25, "cases": [{"difference": -0.25}]}
    items = verdicts({"run": {**RUN, "status": "aborted", "abort_reason": "interrupted"}, "compare": compare})
    assert items[0].headline == "The run was aborted: interrupted."
    assert items[1].headline == "Compare run_a (A) → run_b (B): B regressed against A."
    assert items[1].evidence == ("Gate: case x regressed. Weighted difference B − A across 1 case "
                                 "(Mantel–Haenszel): -25 pp.")


@given(st.lists(st.tuples(st.text(min_size=1, max_size=200), st.text(max_size=300)), max_size=8),
       st.integers(40, 120))
def test_console_lines_fit_the_width_and_keep_every_word(pairs, width):
    items = [Verdict("x", headline, evidence) for headline, evidence in pairs]
    text = console_text(items, width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines if " " in line.strip())  # a single long word may overflow
    assert sum(1 for line in lines if line.startswith("• ") or line == "•") == len(items)
    assert "".join(text.split()).replace("•", "") == "".join(
        "".join((h + e).split()) for h, e in pairs).replace("•", "")
