"""The gate section (`run --against`): look by look, B's statistic against the two boundaries
of the sequential design, the repeated interval of B − A, and B's invocations against the
fixed design's."""

from ironbench.analysis.gate_verdict import GateVerdict, look_line
from ironbench.report import svg
from ironbench.report.markup import Markup, el
from ironbench.report.verdict import pct, points
from ironbench.report.widgets import Col, commands, figure, section, table


def gate(verdict: GateVerdict) -> Markup:
    design, last = verdict.design, verdict.last
    taken = {e.look: e for e in verdict.looks}
    steps = [
        svg.GateStep(
            rounds,
            upper,
            lower,
            taken[look].z if look in taken else None,
            look_line(taken[look]) if look in taken else f"look {look} after round {rounds}: not taken",
        )
        for look, (rounds, upper, lower) in enumerate(zip(design.looks, design.upper, design.lower, strict=True), 1)
    ]
    fixed = verdict.fixed_invocations
    rows = [
        [
            (str(e.look), e.look),
            (str(e.round), e.round),
            (f"{e.invocations} ({e.invocations / fixed:.0%})", e.invocations),
            (points(-e.drop), -e.drop),
            (f"{points(e.low)} to {points(e.high)}", e.low),
            (f"{e.z:.2f}", e.z),
            (f"{e.lower:.2f}", e.lower),
            (f"{e.upper:.2f}", e.upper),
            e.decision if e.p_fixed is None else f"{e.decision}: compare's test p = {e.p_fixed:.3g}",
        ]
        for e in verdict.looks
    ]
    level = 1 - 2 * design.alpha
    spent = (
        f"B ran {last.invocations} invocations, {last.invocations / fixed:.0%} of the fixed design's {fixed} "
        f"({design.cap} runs per case × {len(design.cases)} cases, `plan`'s size at A's {pct(design.rate)})."
        if last is not None
        else f"No look yet; the fixed design would run {fixed} invocations."
    )
    return section(
        "gate",
        f"Gate: did B regress against {design.against}?",
        commands(
            f"This run (B) ran its cases in rounds against the stored run {design.against} (A) and looked after the "
            f"rounds the design planned: z is B's drop in success from A, weighted over cases, over its standard "
            f"error (A's own noise included). At or above the upper boundary B regressed; at or below the lower one B "
            f"is not worse than A by {pct(design.margin)} or more; between them the next round runs. The boundaries "
            f"spend alpha {design.alpha:g} and beta {1 - design.power:.2g} over the looks, so the error rates hold "
            f"however early it stopped; the interval at each look is the repeated {level:.0%} interval of B − A, "
            f"valid at that look whatever came before. `ironbench compare` on these runs is the fixed-design test "
            f"and ignores this stopping."
        ),
        el(
            "div",
            {"class": f"gate {'bad' if verdict.failed else 'ok'}"},
            el("p", None, el("b", None, verdict.headline())),
            el("p", None, commands(verdict.sentence())),
            el("p", None, commands(spent)),
        ),
        figure(
            svg.sequential_gate(steps, "z at each look against the gate's two boundaries"),
            "Blue: z at each look the gate took (the last one decided, or the cap came). Red: the upper "
            "boundary (regressed); green: the lower one (not regressed); "
            + (
                "they meet at the design's last look."
                if design.met
                else "they do not meet by the cap (A holds too little), so the last look may end undecided."
            ),
        ),
        table(
            [
                Col("look", True),
                Col("round", True, "B's runs of every case so far"),
                Col("B's invocations", True, f"and their share of the fixed design's {fixed}"),
                Col("B − A", True, "success rate, weighted over cases"),
                Col(f"repeated {level:.0%} CI", True),
                Col("z", True),
                Col("lower boundary", True, "at or below: not regressed"),
                Col("upper boundary", True, "at or above: regressed"),
                Col("decision"),
            ],
            rows,
        ),
    )
