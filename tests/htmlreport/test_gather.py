import pytest
from hypothesis import given, strategies as st

from ironbench.errors import RunNotFound
from ironbench.htmlreport.gather import apply_patch, gather, patch
from ironbench.stats import wilson_interval


def _by_case(rows):
    return {row["case_id"]: row for row in rows}


def test_baseline_sequences_decisions_and_plan(examples):
    data = gather(examples.paths.store_path, examples.baseline)
    assert {"run", "suite", "outcomes", "baseline"} <= set(data)
    assert not {"adversarial", "stress", "gauntlet", "compare"} & set(data)  # nothing the run lacks
    cases = _by_case(data["baseline"]["cases"])
    flaky = cases["flaky"]
    # run order, coded: S success, s success after repair, G/V/R failure stages
    assert flaky["codes"] == "SGsVSRSGsV"
    assert (flaky["n"], flaky["successes"], flaky["planned"]) == (10, 5, 10)
    assert flaky["decision"]["decision"] == "exhausted" and flaky["decision"]["chance_agreement"] == 0.25
    assert (flaky["low"], flaky["high"]) == pytest.approx(wilson_interval(5, 10))
    stable = cases["stable_success"]
    assert (stable["codes"], stable["planned"], stable["decision"]["decision"]) == ("SSS", 10, "stable")
    assert cases["stable_failure"]["planned"] == 6
    assert "<script>" in flaky["instruction"]  # kept as written: escaping is the page's job
    attempts = {row["attempts"]: (row["successes"], row["failures"]) for row in data["baseline"]["attempts"]}
    assert attempts[0] == (0, 5) and sum(s + f for s, f in attempts.values()) == 16


def test_run_metadata_carries_everything_run_started_recorded(examples):
    run = gather(examples.paths.store_path, examples.baseline)["run"]
    assert run["run_id"] == examples.baseline and run["status"] == "finished"
    assert {"harness_version", "python_version", "platform", "target_argv", "jobs"} <= set(run)


def test_adversarial_heatmap_cells_variants_and_rejections(examples):
    data = gather(examples.paths.store_path, examples.adversarial)["adversarial"]
    cells = {(c["case_id"], c["generator"]): c for c in data["cells"]}
    assert cells[("cache", "punctuation_noise")] == {
        "case_id": "cache", "generator": "punctuation_noise", "variants": 3, "material": 2, "structural": 1,
        "stochastic": 1}
    assert data["generators"][0]["generator"] == "punctuation_noise"  # the most sensitive first
    case = data["cases"][0]
    assert case["reference"]["reference_source"] == examples.baseline  # judged against the stored baseline
    variants = {v["variant_id"]: v for v in case["variants"]}
    assert variants["punctuation_noise/variant_0003"]["codes"] == "GVGR"
    assert variants["punctuation_noise/variant_0003"]["decision"]["decision"] == "structural"
    assert variants["ai_rewrite/variant_0001"]["model"] == "scripted-rewriter"
    assert [r["attempt"] for r in data["rejections"]] == [1, 2]
    assert data["rejections"][0]["failure_reasons"] == ["meta-commentary (3 signs)"]


def test_stress_levels_boundary_and_plan(examples):
    ladders = _by_case(gather(examples.paths.store_path, examples.stress)["stress"]["ladders"])
    cache = ladders["cache"]
    assert [lv["level"] for lv in cache["levels"]] == [1, 2, 3]  # level 4 never ran: past the boundary
    assert (cache["boundary"], cache["planned"], cache["generator"]) == (3, 4, "add_multi_objective")
    assert cache["levels"][2]["decision"]["decision"] == "systematic_failure"
    assert cache["levels"][0]["instruction"].startswith(cache["instruction"])
    assert ladders["parser"]["boundary"] is None and ladders["parser"]["ladder"]["decision"] == "no_boundary"


def test_gauntlet_cells_turns_transcripts_and_engine_pairs(examples):
    data = gather(examples.paths.store_path, examples.gauntlet)["gauntlet"]
    assert data["engines"] == ["plain", "guarded"] and data["scorers"] == ["negation_aware", "literal"]
    totals = {(t["engine"], t["scorer"]): (t["successes"], t["n"]) for t in data["totals"]}
    assert totals[("plain", "negation_aware")] == (3, 7) and totals[("plain", "literal")] == (4, 7)
    assert totals[("guarded", "negation_aware")] == (0, 7)
    per_turn = {(t["engine"], t["scorer"], t["turn"]): t["violations"] for t in data["per_turn"]}
    assert per_turn[("plain", "negation_aware", 3)] == 2
    sky = next(t for t in data["transcripts"] if (t["engine"], t["scenario"]) == ("plain", "sky"))
    assert [t["turn"] for t in sky["turns"]] == [1, 2, 3, 4]
    assert {s["scorer"]: s["violated"] for s in sky["turns"][3]["scores"]} == {"literal": True,
                                                                              "negation_aware": False}
    pair = data["pairs"][0]
    assert (pair["engine"], pair["reference"], pair["b_violations"], pair["a_violations"]) == ("guarded", "plain", 0, 3)
    assert 0.05 < pair["p_fewer"] < 0.2  # 0/7 against 3/7 in two scenarios: too few turns to tell


def test_comparison_differences_overall_and_gate(examples):
    compare = gather(examples.paths.store_path, examples.baseline_regressed, examples.baseline)["compare"]
    assert compare["verdict"] == "regression"
    cases = {c["case_id"]: c for c in compare["cases"]}
    regressed = cases["stable_success"]
    assert regressed["difference"] == pytest.approx(1 / 6 - 1)
    assert regressed["low"] < regressed["difference"] < regressed["high"] < 0
    assert "stable_success" in compare["gate_reason"] and "< alpha 0.05" in compare["gate_reason"]
    assert cases["flaky"]["difference"] == 0
    # Mantel-Haenszel weights n_a n_b / (n_a + n_b): 1.5 for 3|3, 5 for 10|10, 2 for 3|6
    assert compare["difference"] == pytest.approx((2 * (1 / 6 - 1)) / (1.5 + 5 + 2))


def test_unknown_run_is_one_clear_error(examples):
    with pytest.raises(RunNotFound, match="run_nope"):
        gather(examples.paths.store_path, "run_nope")


words = st.lists(st.sampled_from(["Write", "a", "cache", "get,", "set", " ", "\n", "\t", "ünï", "<b>"]), max_size=15)


@given(words, words)
def test_a_patch_restores_the_text_it_was_made_from(base, text):
    base, text = " ".join(base), "".join(text)
    ops = patch(base, text)
    assert apply_patch(base, ops) == text
    assert sum(len(op) for op in ops if isinstance(op, str)) <= len(text)
