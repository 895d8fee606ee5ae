"""Costs added up as the tree folds them: exact, unpriced never 0, ironbench's own apart."""

from decimal import Decimal

from ironbench.core.events import ModelCallPriced
from ironbench.projections.costs import Cost, RunCosts, per_unit


def priced(caller="target", cost="0.001", pricing="table", key="k", rerun=0, seconds=0.0) -> ModelCallPriced:
    return ModelCallPriced(
        caller=caller, model="m", key=key, rerun=rerun, pricing=pricing, cost=cost, model_seconds=seconds
    )


def test_exact_sums_whatever_the_floats_would_say():
    cost = Cost()
    for _ in range(10):
        cost.add(priced(cost="0.1"))
    assert cost.usd == Decimal(1) and cost.to_dict()["usd"] == 1.0  # ten float 0.1s make 0.9999999999999999


def test_a_scope_of_only_unpriced_calls_has_no_usd_and_no_ratio():
    cost = Cost()
    cost.add(priced(cost=None, pricing="unpriced"))
    assert cost.to_dict() == {"usd": None, "calls": 1, "unpriced_calls": 1}
    assert per_unit(cost, 2, 1, 1)["per_invocation"] is None
    cost.add(priced(cost="0.5"))
    assert per_unit(cost, 2, 1, None) == {
        "usd": 0.5,
        "calls": 2,
        "unpriced_calls": 1,
        "invocations": 2,
        "per_invocation": 0.25,
        "per_success": 0.5,
    }


def test_a_run_says_its_own_calls_apart_and_a_local_models_seconds():
    costs = RunCosts()
    costs.add(priced(cost="0.003"), "baseline/c/run_001")
    costs.add(priced(caller="ai_rewrite", key=None, cost="0.001"), "adversarial/c/ai_rewrite/variant_0001")
    costs.add(priced(caller="engine", key=None, cost="0", pricing="local", seconds=1.5), "gauntlet/e/s/turn_01")
    run = costs.run(invocations=1, successes=1, correct=0)
    assert run["usd"] == 0.004 and run["own"]["usd"] == 0.001 and run["own_share"] == 0.25
    assert run["target"]["local_model_seconds"] == 1.5 and run["target"]["per_correct"] is None
    assert costs.groups["baseline/c"].usd == Decimal("0.003")
    assert costs.attempts[("k", 0)].calls == 1
