"""A run too large to list whole: every aggregate and verdict from the whole run, rows only
for the groups that need a look, and a note of what was left out and how to see it."""

from dataclasses import asdict, replace

from ironbench.analysis.compare import CaseComparison, Comparison, Overall
from ironbench.analysis.model_traffic import Traffic
from ironbench.core.kinds import FailOn, Gate
from ironbench.report import listing
from ironbench.report.listing import listed
from ironbench.report.page import render
from ironbench.report.records import (
    CompareSection,
    GauntletSection,
    LadderLine,
    ModelSection,
    SensitivityCell,
    Shortfall,
)
from ironbench.report.verdict import verdicts
from tests.report.build import (
    adversarial,
    adversarial_case,
    baseline,
    baseline_case,
    ladder,
    report,
    stress,
    thread,
    variant,
)
from tests.report.test_page import embedded, page, records


def _case(i: int, decision: str | None, codes: str):
    return baseline_case(f"c{i:04d}", codes, decision, low=sum(c in "Ss" for c in codes) / len(codes) / 2)


def test_past_a_size_baseline_lists_the_cases_that_need_a_look_in_suite_order():
    cases = [_case(i, "stable", "SSS") for i in range(1000)]
    cases[10] = _case(10, None, "SG")  # undecided
    cases[500] = _case(500, "exhausted", "SGSGSGSGSG")
    cases[900] = _case(900, "stable", "GGG")  # settled on a failure
    data = report(run_id="r1", baseline=baseline(cases))
    shown = listed(data).baseline
    names = [c.case_id for c in shown.cases]
    assert len(names) == listing.LISTED_CASES and names == sorted(names)
    assert {"c0010", "c0500", "c0900"} <= set(names)
    note = listing.sentence(shown.left_out, "cases")
    assert f"lists {listing.LISTED_CASES} of 1,000 cases" in note and "ironbench query stability.sql --run r1" in note
    assert "ironbench log r1 CASE" in note
    small = replace(data, baseline=baseline(cases[:20]))
    assert listed(small).baseline == small.baseline  # below the size, everything, no note


def test_past_a_size_adversarial_lists_the_cases_whose_variants_changed_and_only_those_variants():
    def variants(changed: dict[int, str]):
        return [variant(f"g/variant_{j:04d}", changed.get(j, "not_material")) for j in range(10)]

    cases = [adversarial_case(f"a{i:03d}", variants({})) for i in range(100)]
    cases[42] = adversarial_case("a042", variants({3: "structural"}))
    cases[7] = adversarial_case("a007", variants({1: "stochastic"}))
    cells = [SensitivityCell(c.case_id, "g", 10, int(c.case_id in ("a042", "a007"))) for c in cases]
    shown = listed(report(run_id="r2", adversarial=adversarial(cases, cells))).adversarial
    assert [c.case_id for c in shown.cases] == ["a007", "a042"]
    assert [v.variant_id for v in shown.cases[1].variants] == ["g/variant_0003"]
    assert shown.cases[1].not_listed == 9
    assert "sensitivity_by_generator.sql --run r2" in shown.left_out.see
    assert len(shown.cells) == 100  # 100 rows still fit the heatmap


def test_past_a_size_adversarial_keeps_a_case_whose_generators_made_fewer_variants_than_asked():
    unchanged = [variant(f"g/variant_{j:04d}", "not_material") for j in range(10)]
    cases = [adversarial_case(f"a{i:03d}", unchanged) for i in range(100)]
    why = "no phrase or clause of this instruction may move safely"
    cases[77] = adversarial_case("a077", unchanged, shortfalls=[Shortfall("lexical_shuffle", 10, 0, why, 0)])
    shown = listed(report(run_id="r4", adversarial=adversarial(cases))).adversarial
    assert [c.case_id for c in shown.cases] == ["a077"]
    assert shown.cases[0].shortfalls[0].reason == why and shown.cases[0].not_listed == 10
    page = render(report(run_id="r4", adversarial=adversarial(cases)), [])
    assert "fewer than asked: lexical_shuffle 0 of 10" in page and f"<td>{why}</td>" in page


def test_past_a_size_stress_draws_the_ladders_that_need_a_look_and_tabulates_every_verdict():
    def climbed(i: int, verdict: str | None):
        from tests.report.build import level

        found = ladder(f"s{i:03d}", verdict, 2, [level(k, "SSSSS") for k in range(3)], generator="g")
        return replace(found, verdict_level=2)

    ladders = [climbed(i, "no_boundary") for i in range(90)] + [climbed(90, "boundary"), climbed(91, None)]
    shown = listed(report(run_id="r3", stress=stress(ladders))).stress
    assert len(shown.ladders) == listing.LISTED_LADDERS
    assert {"s090", "s091"} <= {lad.case_id for lad in shown.ladders}
    assert len(shown.verdicts) == 92 and shown.verdicts[90] == LadderLine("s090", "g", "boundary", 2, 3, 15)


def test_past_a_size_a_comparison_lists_the_flagged_and_the_lowest_adjusted_p():
    cases = [CaseComparison(f"c{i:04d}", "base", None, None, delta=0.0, p_adjusted=1.0) for i in range(1000)]
    cases[999] = replace(cases[999], flagged=True, p_adjusted=0.01, delta=-0.5)
    cases[3] = replace(cases[3], p_adjusted=0.2)
    overall = Overall(0.0, (0.0, 0.0), 0.0, 1.0, 1.0, 0, 1000, None)
    comparison = Comparison(
        "a",
        "b",
        0.05,
        Gate.overall,
        FailOn.regression,
        None,
        cases,
        overall,
        [],
        "no significant change",
        False,
        "",
        [],
    )
    shown = listed(report(run_id="b", compare=CompareSection(comparison, cases))).compare
    names = [c.case_id for c in shown.cases]
    assert len(names) == listing.LISTED_COMPARED and {"c0003", "c0999"} <= set(names)
    assert "`ironbench compare a b --format json`" in shown.left_out.see
    drawn = listing.forest(shown.cases)
    assert len(drawn) == listing.LISTED_FOREST and drawn[-1].case_id == "c0999"  # suite order kept


def test_a_page_too_large_to_list_whole_says_what_it_left_out_and_keeps_every_verdict(examples, monkeypatch):
    data, whole = page(examples, examples.baseline)
    monkeypatch.setattr(listing, "LISTED_CASES", 2)
    text = render(data, verdicts(data))
    for item in verdicts(data):  # every verdict, over every case
        assert item.headline in text or item.headline.replace("'", "&#x27;") in text
    assert f"lists 2 of {len(data.baseline.cases)} cases" in text
    assert f"ironbench query stability.sql --run {examples.baseline}" in text
    back = embedded(text)
    listed_ids = {c["case_id"] for c in records(back["baseline"]["cases"])}
    assert listed_ids == {"flaky", "stable_failure"}  # exhausted, then settled on a failure
    assert {c["id"] for c in records(back["suite"]["cases"])} == listed_ids
    assert back["baseline"]["excluded"] == asdict(data.baseline.excluded)  # counted over every case
    assert len(text) < len(whole)


def test_past_a_size_a_gauntlet_lists_the_violating_conversations_first():
    threads = [thread(f"s{i:04d}", i % 50 == 7) for i in range(1000)]
    section = GauntletSection("conversation", ["e"], [], ["negation_aware"], [], [], [], {}, threads)
    shown = listed(report(run_id="g", gauntlet=section)).gauntlet
    assert len(shown.transcripts) == listing.LISTED_CONVERSATIONS
    assert {t.scenario for t in threads if t.turns[0].violated("negation_aware")} <= {
        t.scenario for t in shown.transcripts
    }
    assert "violation_by_engine.sql --run g" in shown.left_out.see


def test_past_a_size_model_traffic_lists_the_cases_that_made_the_most_calls():
    cases = [Traffic(f"c{i:04d}", 2, 2, 1, 1, None, None, 0.1) for i in range(1000)]
    cases[700] = Traffic("c0700", 2, 90, 40, 50, None, None, 9.0)
    run_total = Traffic(None, 2000, 2088, 1, 50, None, None, 108.9)
    data = report(run_id="r1", model=ModelSection(run_total, cases))
    shown = listed(data).model
    names = [c.case_id for c in shown.cases]
    assert len(names) == listing.LISTED_CASES and names == sorted(names) and "c0700" in names
    assert shown.run == run_total  # the run's figures count every case
    assert (shown.left_out.listed, shown.left_out.of) == (listing.LISTED_CASES, 1000)
    text = render(listed(data), [])
    assert "this lists 300 of 1,000 cases, those that made the most model calls" in text
    assert "2,088 model calls by 2,000 invocations (1–50 each)" in text
