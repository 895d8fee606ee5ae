"""The cost–correctness plane: the Pareto frontier and which of two runs dominates."""

from hypothesis import given
from hypothesis import strategies as st

from ironbench.analysis.compare.cost import CostPoint, dominance, pareto


def point(run_id: str, cost: float, rate: float) -> CostPoint:
    return CostPoint(run_id, None, cost, rate, max(0.0, rate - 0.1), min(1.0, rate + 0.1), 10)


def beats(p: CostPoint, q: CostPoint) -> bool:
    return (
        p.per_invocation <= q.per_invocation
        and p.rate >= q.rate
        and (p.per_invocation, p.rate)
        != (
            q.per_invocation,
            q.rate,
        )
    )


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 10)), min_size=1, max_size=30))
def test_the_frontier_is_every_point_nothing_beats(values):
    points = pareto([point(f"r{k}", c / 10, r / 10) for k, (c, r) in enumerate(values)])
    frontier = [p for p in points if p.frontier]
    assert frontier and not any(beats(q, p) for p in frontier for q in points)
    for p in points:  # a point nothing beats is on it, or stands where one on it stands
        if not any(beats(q, p) for q in points):
            assert any((f.per_invocation, f.rate) == (p.per_invocation, p.rate) for f in frontier)


def test_which_run_dominates_is_said_in_words():
    cheap_good, dear_bad = point("a", 0.001, 0.9), point("b", 0.002, 0.8)
    assert dominance(dear_bad, cheap_good).startswith("B dominates A")
    assert dominance(cheap_good, dear_bad).startswith("A dominates B")
    assert dominance(point("a", 0.001, 0.5), point("b", 0.002, 0.9)).startswith("neither dominates")
    assert pareto([cheap_good, dear_bad])[1].frontier is False
