"""A run too large to list whole: every aggregate and verdict from the whole run, rows only
for the groups that need a look, and a note of what was left out and how to see it."""

from ironbench.report import listing
from ironbench.report.listing import listed
from ironbench.report.page import render
from ironbench.report.verdict import verdicts
from tests.report.test_page import embedded, page, records


def _case(i: int, decision: str | None, codes: str) -> dict:
    successes = sum(c in "Ss" for c in codes)
    return {
        "case_id": f"c{i:04d}",
        "variant_id": "base",
        "codes": codes,
        "n": len(codes),
        "successes": successes,
        "low": successes / len(codes) / 2,
        "rate": successes / len(codes),
        "decision": None if decision is None else {"decision": decision},
    }


def test_past_a_size_baseline_lists_the_cases_that_need_a_look_in_suite_order():
    cases = [_case(i, "stable", "SSS") for i in range(1000)]
    cases[10] = _case(10, None, "SG")  # undecided
    cases[500] = _case(500, "exhausted", "SGSGSGSGSG")
    cases[900] = _case(900, "stable", "GGG")  # settled on a failure
    data = {"run": {"run_id": "r1"}, "suite": {}, "baseline": {"cases": cases, "attempts": []}}
    shown = listed(data)["baseline"]
    names = [c["case_id"] for c in shown["cases"]]
    assert len(names) == listing.LISTED_CASES and names == sorted(names)
    assert {"c0010", "c0500", "c0900"} <= set(names)
    note = listing.sentence(shown["left_out"], "cases")
    assert f"lists {listing.LISTED_CASES} of 1,000 cases" in note and "ironbench query stability.sql --run r1" in note
    assert "ironbench log r1 CASE" in note
    small = {**data, "baseline": {"cases": cases[:20], "attempts": []}}
    assert listed(small)["baseline"] == small["baseline"]  # below the size, everything, no note


def test_past_a_size_adversarial_lists_the_cases_whose_variants_changed_and_only_those_variants():
    def variant(j: int, decision: str) -> dict:
        return {"variant_id": f"g/variant_{j:04d}", "generator": "g", "decision": {"decision": decision}}

    cases = [
        {"case_id": f"a{i:03d}", "variants": [variant(j, "not_material") for j in range(10)], "dropped": []}
        for i in range(100)
    ]
    cases[42]["variants"][3] = variant(3, "structural")
    cases[7]["variants"][1] = variant(1, "stochastic")
    cells = [
        {"case_id": c["case_id"], "generator": "g", "material": int(c["case_id"] in ("a042", "a007")), "variants": 10}
        for c in cases
    ]
    data = {
        "run": {"run_id": "r2"},
        "suite": {},
        "adversarial": {"cases": cases, "cells": cells, "generators": [], "rejections": [], "excluded": {}},
    }
    shown = listed(data)["adversarial"]
    assert [c["case_id"] for c in shown["cases"]] == ["a007", "a042"]
    assert [v["variant_id"] for v in shown["cases"][1]["variants"]] == ["g/variant_0003"]
    assert shown["cases"][1]["not_listed"] == 9
    assert "sensitivity_by_generator.sql --run r2" in shown["left_out"]["see"]
    assert len(shown["cells"]) == 100  # 100 rows still fit the heatmap


def test_past_a_size_stress_draws_the_ladders_that_need_a_look_and_tabulates_every_verdict():
    def ladder(i: int, verdict: str | None) -> dict:
        levels = [{"level": k, "n": 5} for k in range(3)]
        return {"case_id": f"s{i:03d}", "generator": "g", "verdict": verdict, "verdict_level": 2, "levels": levels}

    ladders = [ladder(i, "no_boundary") for i in range(90)] + [ladder(90, "boundary"), ladder(91, None)]
    shown = listed({"run": {"run_id": "r3"}, "suite": {}, "stress": {"ladders": ladders}})["stress"]
    assert len(shown["ladders"]) == listing.LISTED_LADDERS
    assert {"s090", "s091"} <= {lad["case_id"] for lad in shown["ladders"]}
    assert len(shown["verdicts"]) == 92 and shown["verdicts"][90] == {
        "case_id": "s090",
        "generator": "g",
        "verdict": "boundary",
        "level": 2,
        "levels": 3,
        "runs": 15,
    }


def test_past_a_size_a_comparison_lists_the_flagged_and_the_lowest_adjusted_p():
    cases = [
        {"case_id": f"c{i:04d}", "variant_id": "base", "difference": 0.0, "p_adjusted": 1.0, "flagged": False}
        for i in range(1000)
    ]
    cases[999] = {**cases[999], "flagged": True, "p_adjusted": 0.01, "difference": -0.5}
    cases[3] = {**cases[3], "p_adjusted": 0.2}
    shown = listed({"run": {"run_id": "b"}, "suite": {}, "compare": {"cases": cases, "run_a": "a", "run_b": "b"}})
    names = [c["case_id"] for c in shown["compare"]["cases"]]
    assert len(names) == listing.LISTED_COMPARED and {"c0003", "c0999"} <= set(names)
    assert "`ironbench compare a b --format json`" in shown["compare"]["left_out"]["see"]
    drawn = listing.forest(shown["compare"]["cases"])
    assert len(drawn) == listing.LISTED_FOREST and drawn[-1]["case_id"] == "c0999"  # suite order kept


def test_a_page_too_large_to_list_whole_says_what_it_left_out_and_keeps_every_verdict(examples, monkeypatch):
    data, whole = page(examples, examples.baseline)
    monkeypatch.setattr(listing, "LISTED_CASES", 2)
    text = render(data, verdicts(data))
    for item in verdicts(data):  # every verdict, over every case
        assert item.headline in text or item.headline.replace("'", "&#x27;") in text
    assert f"lists 2 of {len(data['baseline']['cases'])} cases" in text
    assert f"ironbench query stability.sql --run {examples.baseline}" in text
    back = embedded(text)
    listed_ids = {c["case_id"] for c in records(back["baseline"]["cases"])}
    assert listed_ids == {"flaky", "stable_failure"}  # exhausted, then settled on a failure
    assert {c["id"] for c in records(back["suite"]["cases"])} == listed_ids
    assert back["baseline"]["excluded"] == data["baseline"]["excluded"]  # counted over every case
    assert len(text) < len(whole)


def test_past_a_size_a_gauntlet_lists_the_violating_conversations_first():
    def thread(i: int, violated: bool) -> dict:
        scores = [{"scorer": "negation_aware", "violated": violated, "detail": None}]
        return {"engine": "e", "scenario": f"s{i:04d}", "conversation": 1, "turns": [{"turn": 1, "scores": scores}]}

    threads = [thread(i, i % 50 == 7) for i in range(1000)]
    shown = listed({"run": {"run_id": "g"}, "suite": {}, "gauntlet": {"transcripts": threads}})["gauntlet"]
    assert len(shown["transcripts"]) == listing.LISTED_CONVERSATIONS
    assert {t["scenario"] for t in threads if t["turns"][0]["scores"][0]["violated"]} <= {
        t["scenario"] for t in shown["transcripts"]
    }
    assert "violation_by_engine.sql --run g" in shown["left_out"]["see"]
