"""Run comparison: did B regress against A? Per case and stratified across cases."""

from dataclasses import asdict, dataclass
from pathlib import Path

from ironbench.errors import IronbenchError, RunNotFound
from ironbench.query import connect
from ironbench.stats import stratified_exact_test, wilson_interval

_PER_CASE = """
SELECT case_id, variant_id,
       count(*) AS n,
       count(*) FILTER (WHERE success) AS successes,
       avg(attempts) AS mean_attempts,
       avg(repairs_triggered) AS mean_repairs,
       quantile_cont(duration_ms, 0.95) AS p95_duration_ms
FROM store.invocations
WHERE run_id = ? AND harness_error IS NULL AND infra_error IS NULL
GROUP BY 1, 2
"""


@dataclass(frozen=True)
class Side:
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    mean_attempts: float
    mean_repairs: float
    p95_duration_ms: float


@dataclass(frozen=True)
class CaseComparison:
    case_id: str
    variant_id: str
    a: Side | None
    b: Side | None
    p_regression: float | None
    p_improvement: float | None
    verdict: str  # regression | improvement | no significant change | only in A | only in B


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    alpha: float
    cases: list[CaseComparison]
    overall_p_regression: float
    overall_p_improvement: float
    informative_cases: int
    verdict: str

    @property
    def regressed(self) -> bool:
        return self.verdict == "regression"

    def to_dict(self) -> dict:
        return asdict(self)


_PER_SCENARIO = """
SELECT s.engine, s.scenario, count(*) AS n,
       count(*) FILTER (WHERE NOT s.violated::BOOLEAN) AS successes,
       0.0, 0.0, quantile_cont(t.duration_ms, 0.95)
FROM store.turn_scores s
JOIN store.turns t USING (run_id, engine, scenario, turn)
WHERE s.run_id = ? AND s.scorer = ?
GROUP BY 1, 2
"""


def _sides(con, run_id: str, gauntlet_scorer: str | None = None) -> dict[tuple[str, str], Side]:
    """Per case (or, for a gauntlet, per engine and scenario: a turn without a
    violation counts as a success) the numbers each side of a comparison needs."""
    sides = {}
    if gauntlet_scorer is None:
        rows = con.execute(_PER_CASE, [run_id]).fetchall()
    else:
        rows = con.execute(_PER_SCENARIO, [run_id, gauntlet_scorer]).fetchall()
    for case_id, variant_id, n, successes, attempts, repairs, p95 in rows:
        low, high = wilson_interval(successes, n)
        sides[(case_id, variant_id)] = Side(
            n, successes, successes / n if n else 0.0, low, high,
            float(attempts or 0), float(repairs or 0), float(p95 or 0),
        )
    return sides


def _verdict(p_regression: float, p_improvement: float, alpha: float) -> str:
    if p_regression < alpha:
        return "regression"
    if p_improvement < alpha:
        return "improvement"
    return "no significant change"


def compare_runs(store_path: Path, run_a: str, run_b: str, alpha: float = 0.05,
                 scorer: str = "negation_aware") -> Comparison:
    """For gauntlet runs, cases are (engine, scenario) and success is a turn that did not
    assert the forbidden phrase by `scorer`; a regression is more violations in B."""
    con = connect(store_path)
    try:
        modes = []
        for run_id in (run_a, run_b):
            row = con.execute("SELECT mode FROM store.runs WHERE run_id = ?", [run_id]).fetchone()
            if row is None:
                raise RunNotFound(f"run {run_id!r} not found in {store_path}")
            modes.append(row[0])
        if (modes[0] == "gauntlet") != (modes[1] == "gauntlet"):
            raise IronbenchError(f"cannot compare a gauntlet run with a {'non-' if modes[0] == 'gauntlet' else ''}"
                                 "gauntlet run")
        gauntlet_scorer = scorer if modes[0] == "gauntlet" else None
        sides_a, sides_b = _sides(con, run_a, gauntlet_scorer), _sides(con, run_b, gauntlet_scorer)
    finally:
        con.close()
    cases: list[CaseComparison] = []
    strata = []
    for group in sorted(set(sides_a) | set(sides_b)):
        a, b = sides_a.get(group), sides_b.get(group)
        if a is None or b is None:
            cases.append(CaseComparison(*group, a, b, None, None, "only in B" if a is None else "only in A"))
            continue
        stratum = (a.successes, a.n, b.successes, b.n)
        strata.append(stratum)
        test = stratified_exact_test([stratum])  # one stratum: Fisher's exact test
        verdict = _verdict(test.p_regression, test.p_improvement, alpha)
        cases.append(CaseComparison(*group, a, b, test.p_regression, test.p_improvement, verdict))
    overall = stratified_exact_test(strata)
    verdict = _verdict(overall.p_regression, overall.p_improvement, alpha)
    if any(c.verdict == "regression" for c in cases):
        verdict = "regression"
    return Comparison(run_a, run_b, alpha, cases, overall.p_regression, overall.p_improvement,
                      overall.informative_strata, verdict)


def format_comparison(comparison: Comparison) -> str:
    def rate(side: Side | None) -> str:
        if side is None:
            return "-"
        return f"{side.successes}/{side.n} {side.success_rate:.0%} [{side.wilson_low:.2f},{side.wilson_high:.2f}]"

    def shift(a: Side | None, b: Side | None, field: str, fmt: str) -> str:
        if a is None or b is None:
            return "-"
        return f"{getattr(a, field):{fmt}}→{getattr(b, field):{fmt}}"

    header = ["case", "A success", "B success", "p(regr)", "attempts", "repairs", "p95 ms", "verdict"]
    rows = []
    for c in comparison.cases:
        rows.append([
            c.case_id if c.variant_id == "base" else f"{c.case_id}/{c.variant_id}",
            rate(c.a), rate(c.b),
            "-" if c.p_regression is None else f"{c.p_regression:.3g}",
            shift(c.a, c.b, "mean_attempts", ".2f"), shift(c.a, c.b, "mean_repairs", ".2f"),
            shift(c.a, c.b, "p95_duration_ms", ".0f"),
            ("REGRESSION" if c.verdict == "regression" else c.verdict),
        ])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = [f"compare {comparison.run_a} (A) → {comparison.run_b} (B), alpha {comparison.alpha}"]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    lines.append(
        f"overall (exact test stratified by case, {comparison.informative_cases} informative cases): "
        f"p(regression)={comparison.overall_p_regression:.3g} p(improvement)={comparison.overall_p_improvement:.3g}"
    )
    lines.append(f"verdict: {comparison.verdict.upper() if comparison.regressed else comparison.verdict}")
    return "\n".join(lines)
