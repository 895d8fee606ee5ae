"""What two runs cost, compared: the difference in cost per invocation and per correct brick
(per success where the runs are not both checked), each with a bootstrap interval over cases,
and the runs of their suite on a cost–correctness plane with its Pareto frontier.

The difference is a decision aid, not a gate: `compare` exits on correctness alone. Where its
interval excludes 0, `compare` says which run is cheaper; that statement's error rate with no
difference, and its power, are simulated in tests/stats/test_bootstrap.py.
"""

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from ironbench.analysis.costs import CaseCost, RunCost, counted, run_cost
from ironbench.analysis.query import connect
from ironbench.core.prices import usd
from ironbench.stats import RatioDifference, ratio_difference, wilson_interval

# Every run of a suite with priced calls, as a point: the target's cost per invocation (every
# attempt) and its success and correct counts over the runs that are evidence.
_PLANE = (
    counted("run_id", "suite_id = (SELECT suite_id FROM store.runs WHERE run_id = ?)")
    + """
SELECT r.run_id, x.label, s.usd, s.unpriced, r.attempts, r.runs, r.successes, r.correct
FROM runs r JOIN spent s USING (run_id) JOIN store.runs x USING (run_id)
ORDER BY x.started_utc
"""
)
MAX_POINTS = 200  # a plane of more runs than this draws the latest ones


@dataclass(frozen=True)
class CostPoint:
    """A run on the cost–correctness plane: its cost per invocation, its rate (correct bricks,
    or successes, over its runs) with the Wilson interval, and whether it is on the frontier."""

    run_id: str
    label: str | None
    per_invocation: float
    rate: float
    rate_low: float
    rate_high: float
    runs: int
    unpriced: int = 0
    frontier: bool = False


@dataclass(frozen=True)
class CostComparison:
    """The cost of B against A: per invocation and per brick (`on`: correct, or success where
    the runs are not both checked), and the plane of their suite's priced runs."""

    on: Literal["correct", "success"]
    per_invocation: RatioDifference
    per_brick: RatioDifference
    points: list[CostPoint] = field(default_factory=list)
    unpriced: dict[str, int] = field(default_factory=dict)  # by run: calls no price counted

    def point(self, run_id: str) -> CostPoint | None:
        return next((p for p in self.points if p.run_id == run_id), None)

    def lines(self, run_a: str, run_b: str) -> list[str]:
        """`compare`'s cost lines: each difference with its interval, then where A and B stand."""
        brick = "correct brick" if self.on == "correct" else "success"
        lines = [
            _difference_line("cost per invocation", self.per_invocation),
            _difference_line(f"cost per {brick}", self.per_brick),
        ]
        a, b = self.point(run_a), self.point(run_b)
        if a is not None and b is not None:
            lines.append(f"cost–{self.on}: {dominance(a, b)}")
            frontier = [p.run_id for p in self.points if p.frontier]
            if len(self.points) > 2:
                lines.append(
                    f"cost–{self.on}: the Pareto frontier of the suite's {len(self.points)} priced runs: "
                    + ", ".join(frontier)
                )
        for run_id, n in self.unpriced.items():
            lines.append(f"warning: {run_id} has {n} unpriced call{'s' if n != 1 else ''}: its cost is a lower bound")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "on": self.on,
            "per_invocation": self.per_invocation.to_dict(),
            "per_brick": self.per_brick.to_dict(),
            "points": [p.__dict__ for p in self.points],
            "unpriced": self.unpriced,
        }


def _difference_line(name: str, found: RatioDifference) -> str:
    if found.a is None or found.b is None:
        a, b = (usd(x) if x is not None else "nothing to divide by" for x in (found.a, found.b))
        return f"{name}: A {a}, B {b}: no difference to give"
    assert found.difference is not None  # (both sides have a ratio)
    head = f"{name}: A {usd(found.a)} → B {usd(found.b)}: Δ {_signed(found.difference)}"
    how = f"bootstrap over {found.cases} {'paired ' if found.paired else ''}cases, {found.resamples:,} resamples"
    if found.low is None or found.high is None:
        return f"{head} (no interval: too few resamples had something to divide by; {how})"
    said = ""
    if found.low > 0:
        said = ": B costs more"
    elif found.high < 0:
        said = ": B costs less"
    return f"{head} [95% CI {_signed(found.low)}, {_signed(found.high)}]{said} ({how})"


def _signed(value: float) -> str:
    return ("+" if value > 0 else "") + usd(value)


def dominance(a: CostPoint, b: CostPoint) -> str:
    """Which run the plane prefers: one cheaper per invocation and at least as good (or as cheap
    and better) dominates; otherwise each buys its rate at its price."""
    if _dominates(b, a):
        return f"B dominates A (B {usd(b.per_invocation)} per invocation at {b.rate:.0%}, A {usd(a.per_invocation)} at {a.rate:.0%})"
    if _dominates(a, b):
        return f"A dominates B (A {usd(a.per_invocation)} per invocation at {a.rate:.0%}, B {usd(b.per_invocation)} at {b.rate:.0%})"
    if a.per_invocation == b.per_invocation and a.rate == b.rate:
        return "A and B stand at the same point"
    return (
        f"neither dominates: A {usd(a.per_invocation)} per invocation at {a.rate:.0%}, "
        f"B {usd(b.per_invocation)} at {b.rate:.0%}"
    )


def _dominates(p: CostPoint, q: CostPoint) -> bool:
    """p is no dearer and no worse than q, and better in one."""
    return (
        p.per_invocation <= q.per_invocation
        and p.rate >= q.rate
        and (p.per_invocation, -p.rate) != (q.per_invocation, -q.rate)
    )


def pareto(points: list[CostPoint]) -> list[CostPoint]:
    """The points, each marked on the frontier when no other point dominates it (cheapest per
    invocation, most correct); linear after sorting by cost."""
    order = sorted(range(len(points)), key=lambda i: (points[i].per_invocation, -points[i].rate))
    best = -1.0
    on: set[int] = set()
    for i in order:
        if points[i].rate > best:
            on.add(i)
            best = points[i].rate
    return [CostPoint(**{**p.__dict__, "frontier": i in on}) for i, p in enumerate(points)]


def _pairs(cases: list[CaseCost], keys: list[str], on: str, per: str) -> list[tuple[float, float]]:
    by_id = {c.case_id: c for c in cases}
    out = []
    for key in keys:
        c = by_id[key]
        denominator = c.attempts if per == "invocation" else (c.correct or 0) if on == "correct" else c.successes
        out.append((float(c.usd), float(denominator)))
    return out


def cost_comparison(store_path: Path, run_a: str, run_b: str) -> CostComparison | None:
    """B's cost against A's (None when neither run's calls were priced)."""
    costs = [run_cost(store_path, run_a), run_cost(store_path, run_b)]
    if costs[0] is None and costs[1] is None:
        return None
    # a run none of whose target's calls was priced has no cost to compare (unpriced is never 0)
    a, b = (c if c is not None and c.target.known is not None else RunCost([], []) for c in costs)
    on: Literal["correct", "success"] = (
        "correct" if a.target.correct is not None and b.target.correct is not None else "success"
    )
    ids_a, ids_b = [c.case_id for c in a.cases], [c.case_id for c in b.cases]
    common = [k for k in ids_a if k in set(ids_b)]
    paired = bool(common)
    keys_a, keys_b = (common, common) if paired else (ids_a, ids_b)
    differences = [
        ratio_difference(_pairs(a.cases, keys_a, on, per), _pairs(b.cases, keys_b, on, per), paired)
        for per in ("invocation", "brick")
    ]
    points = pareto(plane(store_path, run_a, on))
    if not any(p.run_id == run_b for p in points) or not any(p.run_id == run_a for p in points):
        points = pareto([p for p in (_point(run_a, a, on), _point(run_b, b, on)) if p is not None])
    unpriced = {run: c.unpriced for run, c in zip((run_a, run_b), costs, strict=True) if c is not None and c.unpriced}
    return CostComparison(on, differences[0], differences[1], points, unpriced)


def _point(run_id: str, cost: RunCost, on: str) -> CostPoint | None:
    target = cost.target
    if not target.attempts:
        return None
    hits = (target.correct or 0) if on == "correct" else target.successes
    low, high = wilson_interval(hits, target.runs)
    rate = hits / target.runs if target.runs else 0.0
    return CostPoint(run_id, None, float(target.usd / target.attempts), rate, low, high, target.runs, cost.unpriced)


def plane(store_path: Path, run_id: str, on: str, con: Any = None) -> list[CostPoint]:
    """Every priced run of `run_id`'s suite as a point (the latest MAX_POINTS); `con`: an open
    connection to read with (it reads the store's tables, whatever run its views show)."""
    if con is None:
        con = connect(store_path)
        try:
            return plane(store_path, run_id, on, con)
        finally:
            con.close()
    rows = con.execute(_PLANE, [run_id]).fetchall()
    points = []
    for run, label, spent, unpriced, attempts, n, successes, correct in rows[-MAX_POINTS:]:
        if spent is None or not attempts or (on == "correct" and correct is None):  # unpriced, or not checked
            continue
        hits = (correct or 0) if on == "correct" else successes
        low, high = wilson_interval(hits, n)
        rate = hits / n if n else 0.0
        cost = Decimal(spent or 0)
        points.append(CostPoint(run, label, float(cost / attempts), rate, low, high, n, unpriced or 0))
    return points
