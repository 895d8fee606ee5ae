from dataclasses import asdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.analysis.conversations import summary_from_store
from ironbench.core.errors import RunNotFound
from ironbench.core.outcome_codes import EVIDENCE_CODES
from ironbench.report.embedded import apply_patch, patch
from ironbench.report.gather import gather
from ironbench.report.records import SensitivityCell
from ironbench.stats import clopper_pearson_lower, clopper_pearson_upper, wilson_interval
from tests.report.examples import BACKEND


def _by_case(rows):
    return {row.case_id: row for row in rows}


def test_baseline_sequences_decisions_and_plan(examples):
    data = gather(examples.paths.store_path, examples.baseline)
    assert data.outcomes and data.baseline and data.suite
    assert not (data.adversarial or data.stress or data.gauntlet or data.compare)  # nothing the run lacks
    cases = _by_case(data.baseline.cases)
    flaky = cases["flaky"]
    # run order, coded: S success, s success after repair, G/V/R failure stages
    assert flaky.codes == "SGsVSRSGsV"
    assert (flaky.n, flaky.successes, flaky.planned) == (10, 5, 10)
    assert flaky.decision.decision == "exhausted" and flaky.decision.chance_agreement == 0.25
    assert (flaky.decision.success_lower_95, flaky.decision.success_upper_95) == pytest.approx(
        (clopper_pearson_lower(5, 10), clopper_pearson_upper(5, 10))
    )
    assert (flaky.low, flaky.high) == pytest.approx(wilson_interval(5, 10))
    stable = cases["stable_success"]
    assert (stable.codes, stable.planned, stable.decision.decision) == ("SSS", 10, "stable")
    assert stable.decision.reproduce_lower_95 == pytest.approx(0.368, abs=1e-3)  # 3/3
    assert cases["stable_failure"].planned == 6
    # a timeout is a failure of its own; the outage's attempt was superseded by its re-run
    slow = cases["slow"]
    assert (slow.codes, slow.n, slow.timeouts, slow.superseded, slow.excluded) == ("TSSS", 4, 1, 1, 0)
    assert slow.decision.reproduce_lower_95 == pytest.approx(clopper_pearson_lower(3, 4))
    assert "<script>" in flaky.instruction  # kept as written: escaping is the page's job
    attempts = {row.attempts: (row.successes, row.failures) for row in data.baseline.attempts}
    assert attempts[0] == (0, 6) and sum(s + f for s, f in attempts.values()) == 20
    outcomes = {row.code: row.runs for row in data.outcomes}
    assert (outcomes["T"], outcomes["X"]) == (1, 1) and sum(outcomes[c] for c in EVIDENCE_CODES if c in outcomes) == 20


def test_run_metadata_carries_everything_run_started_recorded(examples):
    run = gather(examples.paths.store_path, examples.baseline).run
    assert run.run_id == examples.baseline and run.status == "finished"
    assert {"harness_version", "python_version", "platform", "target_argv", "jobs"} <= set(run.recorded)
    assert run.label == "nightly"
    assert run.environment == BACKEND  # the suite's record_env, as a mapping


def test_adversarial_heatmap_cells_variants_references_and_rejections(examples):
    data = gather(examples.paths.store_path, examples.adversarial).adversarial
    cells = {(c.case_id, c.generator): c for c in data.cells}
    assert cells[("cache", "punctuation_noise")] == SensitivityCell(
        "cache", "punctuation_noise", 3, 2, 1, 1, 0, {"success lost": 2}
    )
    assert data.generators[0].generator == "punctuation_noise"  # the most sensitive first
    cases = _by_case(data.cases)
    cache = cases["cache"]
    # judged against the stored baseline: which run, which group, and that group's runs
    assert (cache.reference.reference_source, cache.reference.reference_group) == (
        examples.baseline,
        "baseline/stable_success",
    )
    assert cache.reference_codes == "SSS" and not cache.reference.reference_unstable
    variants = {v.variant_id: v for v in cache.variants}
    assert variants["punctuation_noise/variant_0003"].codes == "GVGR"
    assert variants["punctuation_noise/variant_0003"].decision.decision == "structural"
    assert variants["punctuation_noise/variant_0003"].decision.direction == "success lost"
    assert variants["whitespace_noise/variant_0002"].superseded == 1  # its outage was re-run
    assert variants["ai_rewrite/variant_0001"].model == "scripted-rewriter"
    # the flaky baseline never settled: the variant is judged against all its outcomes
    dates = cases["dates"]
    assert dates.reference.reference_group == "baseline/flaky" and dates.reference.reference_unstable
    assert dates.reference_codes == "SGsVSRSGsV"
    noisy = {v.variant_id: v for v in dates.variants}["whitespace_noise/variant_0001"]
    assert noisy.codes == "GSGS" and noisy.decision.decision == "within_noise"
    assert noisy.decision.p_value > 0.05
    assert cells[("dates", "whitespace_noise")].within_noise == 1
    assert data.excluded.superseded == 1
    assert [r.attempt for r in data.rejections] == [1, 2]
    meta, task, *requirements = data.rejections[0].failure_reasons
    assert meta == "meta-commentary ('sure', 'here is', 'rewrite')" and task.startswith("keeps 0 of the base's")
    assert "removes_requirement: cache" in requirements and "adds_requirement: script (a deliverable)" in requirements


def test_stress_ladders_from_level_0_with_their_verdicts(examples):
    ladders = _by_case(gather(examples.paths.store_path, examples.stress).stress.ladders)
    verdicts = {case_id: (ladder.verdict, ladder.verdict_level) for case_id, ladder in ladders.items()}
    assert verdicts == {
        "cache": ("boundary", 1),
        "parser": ("tentative", 2),
        "sorter": ("fails_at_base", 0),
        "greeter": ("no_boundary", None),
    }
    cache = ladders["cache"]
    assert [lv.level for lv in cache.levels] == [0, 1]  # levels 2 and 3 never ran: past the boundary
    assert (cache.boundary, cache.planned, cache.generator) == (1, 3, "add_multi_objective")
    assert cache.levels[0].instruction == cache.instruction  # level 0 is the base, unchanged
    assert cache.levels[1].instruction.startswith(cache.instruction)
    assert cache.levels[1].decision.success_upper_95 == pytest.approx(clopper_pearson_upper(0, 3))
    parser = ladders["parser"]
    assert [lv.codes for lv in parser.levels][:3] == ["SGs", "SSS", "GGG"]
    assert parser.boundary is None and parser.ladder.p_value > 0.05 / 2
    assert [lv.level for lv in ladders["sorter"].levels] == [0]


def test_gauntlet_counts_conversations_and_compares_every_pair(examples):
    data = gather(examples.paths.store_path, examples.gauntlet).gauntlet
    assert data.unit == "conversation"
    assert data.engines == ["plain", "guarded"] and data.scorers == ["negation_aware", "literal"]
    totals = {(t.engine, t.scorer): (t.violated, t.conversations, t.turn_violations, t.turns) for t in data.totals}
    assert totals[("plain", "negation_aware")] == (3, 4, 4, 14)
    assert totals[("plain", "literal")] == (3, 4, 6, 14)
    assert totals[("guarded", "negation_aware")] == (0, 4, 0, 14)
    cells = {(c.engine, c.scenario, c.scorer): (c.violated, c.conversations) for c in data.cells}
    assert cells[("plain", "sky", "negation_aware")] == (2, 2) and cells[("plain", "grass", "negation_aware")] == (1, 2)
    per_turn = {(t.engine, t.scorer, t.turn): (t.violations, t.conversations) for t in data.per_turn}
    assert per_turn[("plain", "negation_aware", 3)] == (2, 4)
    # one transcript per conversation, both engines' conversation 1 side by side
    assert [(t.engine, t.scenario, t.conversation) for t in data.transcripts][:4] == [
        ("plain", "sky", 1),
        ("guarded", "sky", 1),
        ("plain", "sky", 2),
        ("guarded", "sky", 2),
    ]
    sky2 = data.transcripts[2]
    assert [t.turn for t in sky2.turns] == [1, 2, 3, 4]
    assert {s.scorer: s.violated for s in sky2.turns[2].scores} == {
        "literal": True,
        "negation_aware": False,
    }
    # the pair compared as projections.gauntlet_summary compares it: conversations, stratified by scenario
    [pair] = data.comparisons["negation_aware"]
    assert (pair.engine, pair.reference, pair.violated, pair.conversations) == (
        "guarded",
        "plain",
        [3, 0],
        [4, 4],
    )
    assert pair.verdict == "cannot be told apart" and pair.p_adjusted > 0.05  # 0/4 against 3/4: too few
    assert (
        asdict(pair)
        == summary_from_store(examples.paths.store_path, examples.gauntlet).comparisons["negation_aware"][0].to_dict()
    )


def test_comparison_differences_overall_gate_and_shifts(examples):
    compare = gather(examples.paths.store_path, examples.baseline_regressed, examples.baseline).compare.comparison
    assert compare.verdict == "regression" and compare.failed
    cases = {c.case_id: c for c in compare.cases}
    regressed = cases["stable_success"]
    assert regressed.delta == pytest.approx(-1)  # 3/3 → 0/10
    assert regressed.delta_ci_95[0] < regressed.delta + 1e-9 and regressed.delta_ci_95[1] < 0
    assert cases["flaky"].delta == pytest.approx(-0.4)  # 5/10 → 1/10
    assert cases["stable_failure"].delta == 0 and not cases["stable_failure"].can_be_flagged
    assert "p = 0.00" in compare.reason and "<= alpha 0.05" in compare.reason
    # Mantel-Haenszel weights n_a n_b / (n_a + n_b): 30/13 for 3|10, 5 for 10|10, 1.5 for 3|3, 2 for 4|4
    weights = {"stable_success": 30 / 13, "flaky": 5, "stable_failure": 1.5, "slow": 2}
    overall = compare.overall
    assert overall.delta == pytest.approx(sum(w * cases[c].delta for c, w in weights.items()) / sum(weights.values()))
    assert overall.delta_ci_95[0] < overall.delta < overall.delta_ci_95[1] < 0
    assert 0 < overall.mde < 1
    assert any("stable_failure cannot be flagged" in w for w in compare.warnings)
    shifts = {s.name: s for s in compare.shifts}
    assert shifts["attempts"].direction == "more attempts"
    assert shifts["timeouts"].a == "1/20" and not shifts["infrastructure errors"].gating


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
