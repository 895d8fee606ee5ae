"""Did sensitivity to rewording change between two adversarial runs? Per generator, pure.

A variant is `material` when its outcome differed from the base's (`stochastic` or
`structural`). Per generator, B's material-change rate is compared with A's across the cases
both runs rewrote: the exact conditional test stratified by case (variants of one instruction
share that instruction's difficulty, so each case is its own stratum), two-sided, Holm over
the generators, and the Mantel–Haenszel difference with its stratified Newcombe interval.
Reported beside the gate, never a reason to fail it.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from ironbench.analysis.compare.prose import pp
from ironbench.core.kinds import JUDGED, MATERIAL
from ironbench.stats import holm_adjust, significant, stratified_difference, stratified_exact_test

# (case, generator) -> (material variants, judged variants)
Cells = Mapping[tuple[str, str], tuple[int, int]]


@dataclass(frozen=True)
class GeneratorChange:
    generator: str
    cases: int
    material: tuple[int, int]  # A, B
    variants: tuple[int, int]
    delta: float  # B − A in material-change rate
    delta_ci_95: tuple[float, float]
    p_value: float
    p_adjusted: float
    verdict: str  # "more sensitive" | "less sensitive" | "cannot be told apart"
    sentence: str


def cells_from_decisions(rows) -> dict[tuple[str, str], tuple[int, int]]:
    """Rows of (case_id, generator, decision) of one run's variant decisions → counts per cell."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for case_id, generator, decision in rows:
        if generator is None or decision not in JUDGED:
            continue
        material, variants = out.get((case_id, generator), (0, 0))
        out[(case_id, generator)] = (material + (decision in MATERIAL), variants + 1)
    return out


def compare_sensitivity(a: Cells, b: Cells, alpha: float = 0.05) -> list[GeneratorChange]:
    """Per generator both runs used, in name order."""
    generators = sorted({g for _, g in a} & {g for _, g in b})
    tests = []
    for generator in generators:
        cases = sorted(c for c, g in a if g == generator and (c, g) in b)
        # success = a variant that did not change the outcome, so B − A < 0 means B is more sensitive
        strata = [
            (a[(c, generator)][1] - a[(c, generator)][0], a[(c, generator)][1])
            + (b[(c, generator)][1] - b[(c, generator)][0], b[(c, generator)][1])
            for c in cases
            if a[(c, generator)][1] and b[(c, generator)][1]
        ]
        if strata:
            tests.append((generator, strata))
    adjusted = holm_adjust([stratified_exact_test(s).p_two_sided for _, s in tests])
    out = []
    for (generator, strata), p_adjusted in zip(tests, adjusted, strict=True):
        test = stratified_exact_test(strata)
        steady = stratified_difference(strata)
        delta, low, high = -steady.delta, -steady.high, -steady.low
        material = (sum(n - s for s, n, _, _ in strata), sum(n - s for _, _, s, n in strata))
        variants = (sum(s[1] for s in strata), sum(s[3] for s in strata))
        verdict = (
            "cannot be told apart"
            if not significant(p_adjusted, alpha)
            else "more sensitive"
            if delta > 0
            else "less sensitive"
        )
        sentence = (
            f"{generator}: {'A and B ' + verdict if verdict.startswith('cannot') else 'B ' + verdict + ' than A'}: "
            "variants that changed "
            f"the outcome {material[1]}/{variants[1]} in B against {material[0]}/{variants[0]} in A; difference "
            f"{pp(delta)} (95% CI {pp(low)} to {pp(high)}), p = {p_adjusted:.2g} (exact, stratified by "
            f"{len(strata)} case(s), Holm over {len(tests)} generator(s))"
        )
        out.append(
            GeneratorChange(
                generator,
                len(strata),
                material,
                variants,
                float(delta),
                (float(low), float(high)),
                float(test.p_two_sided),
                float(p_adjusted),
                verdict,
                sentence,
            )
        )
    return out
