"""The verdict of a comparison in words: what was found, with its interval, p and gate."""

from collections.abc import Sequence

from ironbench.analysis.compare.comparison import POWER, Gating, Overall
from ironbench.console.numbers import points
from ironbench.core.kinds import Unit, Verdict


def pp(x: float) -> str:
    return points(x, 1)


def reason(
    verdict: Verdict,
    failed: bool,
    overall: Overall,
    gating: Gating,
    *,
    flagged: Sequence[str],
    changed: Sequence[tuple[str, float]],
    unit: Unit,
) -> str:
    """One paragraph: the verdict, the interval and p behind it, the margin, and pass or FAIL.
    `flagged`: the cases the per-case gate flagged; `changed`: the tests of the --fail-on
    change family that changed, with their Holm-adjusted p."""
    alpha, gate, margin = gating.alpha, gating.gate, gating.margin
    what = "clean conversations" if unit == "conversation" else "success rate"
    interval = (
        f"Δ {what} B − A = {pp(overall.delta)} (95% CI {pp(overall.delta_ci_95[0])} to "
        f"{pp(overall.delta_ci_95[1])}, {overall.cases} cases)"
    )
    if verdict == "regression" and gate == "cases":
        names = ", ".join(flagged)
        text = (
            f"B regressed in {names}: adjusted p <= alpha {alpha} (one-sided Fisher per case, "
            f"Westfall-Young min-p over {overall.cases} cases)"
        )
    elif verdict == "regression":
        text = (
            f"B's {what} is lower across cases: {interval}; p = {overall.p_regression:.3g} <= alpha {alpha} "
            "(exact test stratified by case, one-sided)"
        )
    elif verdict == "within margin":
        text = (
            f"B is worse, but not by more than the margin: {interval}; p(regression) = "
            f"{overall.p_regression:.3g} <= alpha {alpha}"
        )
    elif verdict == "change":
        parts = ", ".join(f"{n} (Holm-adjusted p = {p:.3g})" for n, p in changed)
        text = f"B's runs differ from A's: {parts}; {interval}"
    else:
        mde = (
            f"these runs would find a uniform drop of {overall.mde:.0%} with {POWER:.0%} power; a smaller one "
            "may go unseen"
            if overall.mde is not None
            else "these runs cannot find any drop reliably"
        )
        lead = "B improved" if verdict == "improvement" else "No significant regression"
        text = f"{lead}: {interval}, p(regression) = {overall.p_regression:.3g}; {mde}"
    if margin is not None and gate == "overall":
        text += (
            f". Margin {margin:.0%}: the one-sided {1 - alpha:.0%} upper bound of B − A is "
            f"{pp(overall.delta_upper)}, {'below' if overall.delta_upper < -margin else 'not below'} "
            f"−{margin:.0%}"
        )
    gate_text = f"gate {gate}, fail on {gating.fail_on}"
    return f"{text}. {'FAIL' if failed else 'pass'} ({gate_text})."
