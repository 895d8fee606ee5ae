"""Verdict sentences per mode, from the gathered data: the report's header and the
console's last lines say the same thing. Pure."""

import textwrap
from collections import Counter
from dataclasses import dataclass

from ironbench.stats import wilson_interval

ALPHA = 0.05


@dataclass(frozen=True)
class Verdict:
    mode: str
    headline: str  # the answer, in plain words
    evidence: str  # the numbers behind it: n, intervals, what cannot be told apart


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def points(difference: float | None) -> str:
    """A difference of rates in percentage points: `-20 pp`."""
    return "–" if difference is None else f"{difference * 100:+.0f} pp"


def rate(successes: int, n: int, low: float, high: float) -> str:
    """`3/10 = 30% (95% CI 11–60%)`"""
    if not n:
        return "no runs"
    return f"{successes}/{n} = {successes / n:.0%} (95% CI {low:.0%}–{high:.0%})"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "." if text else ""


def _span(values: list, fmt: str = "{}") -> str:
    """`3–6`, or `3` when every value is the same."""
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def verdicts(data: dict) -> list[Verdict]:
    """Every verdict the gathered data supports, in page order."""
    out: list[Verdict] = []
    status = data["run"].get("status")
    if status == "aborted":
        out.append(Verdict("run", f"The run was aborted: {data['run'].get('abort_reason') or 'no reason recorded'}.",
                           "Verdicts below cover what was recorded; `ironbench resume RUN` continues it."))
    elif status == "running":
        out.append(Verdict("run", "The run has not finished (still running, or interrupted).",
                           "Verdicts below cover what was recorded so far; `ironbench resume RUN` continues it."))
    if "compare" in data:
        out.append(_compare(data["compare"]))
    if "baseline" in data:
        out.append(_baseline(data["baseline"]))
    if "adversarial" in data:
        out += _adversarial(data["adversarial"])
    if "stress" in data:
        out += _stress(data["stress"])
    if "gauntlet" in data:
        out += _gauntlet(data["gauntlet"])
    return out


def _baseline(section: dict) -> Verdict:
    cases = section["cases"]
    decided = Counter((c["decision"] or {}).get("decision", "undecided") for c in cases)
    stable = [c for c in cases if (c["decision"] or {}).get("decision") == "stable"]
    on_success = sum(1 for c in stable if c["codes"][-1:] in ("S", "s"))
    parts = [f"{decided['stable']} of {_plural(len(cases), 'instruction')} stable (the last 3 runs agreed)"]
    if stable:
        parts[0] += f": {on_success} on success, {len(stable) - on_success} on failure"
    if decided["exhausted"]:
        parts.append(f"{decided['exhausted']} spent every run without 3 agreeing")
    if decided["undecided"]:
        parts.append(f"{decided['undecided']} not decided yet")
    evidence = []
    if stable:
        runs = [c["n"] for c in stable]
        chances = [c["decision"]["chance_agreement"] for c in stable]
        evidence.append(f"stable cases stopped after {_span(runs)} runs; at their observed rates 3 runs "
                        f"agree by chance with probability {_span(chances, '{:.2f}')}")
    measured = [c for c in cases if c["n"]]
    if measured:
        worst = min(measured, key=lambda c: (c["rate"], c["high"]))
        evidence.append(f"lowest success rate: {worst['case_id']} {rate(worst['successes'], worst['n'], worst['low'], worst['high'])}")
    excluded = sum(c["excluded"] for c in cases)
    if excluded:
        evidence.append(f"{_plural(excluded, 'run')} excluded (harness or infrastructure errors)")
    return Verdict("baseline", "Baseline: " + "; ".join(parts) + ".", _sentence("; ".join(evidence)))


def _adversarial(section: dict) -> list[Verdict]:
    out = []
    cells = section["cells"]
    variants = sum(c["variants"] for c in cells)
    material = sum(c["material"] for c in cells)
    structural = sum(c["structural"] for c in cells)
    if variants:
        low, high = wilson_interval(material, variants)
        cases = len({c["case_id"] for c in cells})
        headline = (f"Adversarial: {material} of {_plural(variants, 'variant')} of {_plural(cases, 'instruction')} "
                    f"changed the outcome materially ({structural} structural, {material - structural} stochastic).")
        top = section["generators"][0]
        if material:
            headline += (f" {top['generator']} changes outcomes most: {top['material']} of {top['variants']} "
                         f"variants ({pct(top['rate'])}, 95% CI {pct(top['low'])}–{pct(top['high'])}).")
        else:
            headline += " No generator changed an outcome."
        sources = Counter((c["reference"] or {}).get("reference_source") or "none" for c in section["cases"])
        reference = ", ".join(("a fresh run in this run" if s == "this run" else
                               "no reference" if s == "none" else f"baseline {s}") for s in sources)
        evidence = (f"Material-change rate {pct(material / variants)} (95% CI {pct(low)}–{pct(high)}); "
                    f"each variant judged against {reference}.")
        if len(section["generators"]) > 1 and material:
            runner_up = section["generators"][1]
            if runner_up["high"] >= top["low"]:
                evidence += (f" Its interval overlaps the next generator's ({runner_up['generator']}, "
                             f"{runner_up['material']}/{runner_up['variants']}): the ranking is not established.")
        out.append(Verdict("adversarial", headline, evidence))
    rejections = section["rejections"]
    if rejections:
        slots = len({(r["case_id"], r["variant_id"]) for r in rejections})
        reasons = Counter(reason.split(" (")[0].split(" '")[0] for r in rejections for reason in r["failure_reasons"])
        common = ", ".join(f"{reason} ({count})" for reason, count in reasons.most_common(3))
        out.append(Verdict("adversarial", f"{_plural(len(rejections), 'AI rewrite')} rejected by the harness, in "
                                          f"{_plural(slots, 'variant slot')}.", f"Most common reasons: {common}."))
    return out


MAX_LADDER_SENTENCES = 8


def _stress(section: dict) -> list[Verdict]:
    ladders = section["ladders"]
    found = [ladder for ladder in ladders if ladder["boundary"] is not None]
    out = []
    if len(ladders) > 1:
        levels = [ladder["boundary"] for ladder in found]
        where = (f", at level{'s' if len(set(levels)) > 1 else ''} {_span(levels)}") if found else ""
        out.append(Verdict("stress", f"Stress: a capability boundary in {len(found)} of {len(ladders)} ladders{where}.",
                           "The boundary is the first level whose failure is systematic (at least 80% of its runs "
                           "failed)."))
    for ladder in ladders[:MAX_LADDER_SENTENCES]:
        out.append(_ladder(ladder))
    if len(ladders) > MAX_LADDER_SENTENCES:
        out.append(Verdict("stress", f"… and {len(ladders) - MAX_LADDER_SENTENCES} more ladders: see the stress "
                                     "section of the report.", ""))
    return out


def _ladder(ladder: dict) -> Verdict:
    name = f"{ladder['case_id']} ({ladder['generator']})"
    levels = {level["level"]: level for level in ladder["levels"]}
    boundary = ladder["boundary"]
    if boundary is not None and boundary in levels:
        at = levels[boundary]
        before = [level for key, level in levels.items() if key is not None and key < boundary]
        evidence = f"Level {boundary}: {rate(at['successes'], at['n'], at['low'], at['high'])}"
        if before:
            last = before[-1]
            evidence += f"; level {last['level']} before it: {rate(last['successes'], last['n'], last['low'], last['high'])}"
        return Verdict("stress", f"{name}: capability boundary at level {boundary}.", evidence + ".")
    if not levels:
        return Verdict("stress", f"{name}: no level decided yet.", "")
    top = levels[max(k for k in levels if k is not None)]
    decided = ladder["ladder"] is not None
    headline = f"{name}: no boundary in {_plural(len(levels), 'level')}." if decided else \
        f"{name}: ladder not finished ({_plural(len(levels), 'level')} so far)."
    return Verdict("stress", headline,
                   f"Highest level {top['level']}: {rate(top['successes'], top['n'], top['low'], top['high'])}.")


def _gauntlet(section: dict) -> list[Verdict]:
    if not section["scorers"]:
        return [Verdict("gauntlet", "Gauntlet: no turn has been scored yet.", "")]
    scorer = section["scorers"][0]
    out = []
    others = [s for s in section["scorers"] if s != scorer]
    for total in (t for t in section["totals"] if t["scorer"] == scorer):
        also = [t for t in section["totals"] if t["engine"] == total["engine"] and t["scorer"] in others]
        evidence = f"Scorer {scorer}" + "".join(f"; the {t['scorer']} scorer counts {t['successes']}" for t in also)
        out.append(Verdict("gauntlet", f"{total['engine']} asserted the forbidden phrase in {total['successes']} of "
                                       f"{_plural(total['n'], 'turn')} ({pct(total['rate'])}, 95% CI "
                                       f"{pct(total['low'])}–{pct(total['high'])}) across "
                                       f"{_plural(total['scenarios'], 'scenario')}.", evidence + "."))
    for pair in section["pairs"]:
        counts = (f"{pair['b_violations']}/{pair['b_turns']} against {pair['a_violations']}/{pair['a_turns']} turns "
                  f"violated")
        test = (f"one-sided exact test stratified by scenario, {pair['informative_scenarios']} informative, "
                f"scorer {pair['scorer']}")
        if pair["p_fewer"] < ALPHA:
            headline = f"{pair['engine']} helped: fewer violations than {pair['reference']}, {counts}."
            evidence = f"p = {pair['p_fewer']:.3g}; {test}."
        elif pair["p_more"] < ALPHA:
            headline = f"{pair['engine']} made it worse: more violations than {pair['reference']}, {counts}."
            evidence = f"p = {pair['p_more']:.3g}; {test}."
        else:
            headline = f"{pair['engine']} and {pair['reference']} cannot be told apart: {counts}."
            evidence = f"p(fewer) = {pair['p_fewer']:.3g}, p(more) = {pair['p_more']:.3g}; {test}."
        out.append(Verdict("gauntlet", headline, evidence))
    return out


def _compare(section: dict) -> Verdict:
    verdict = section["verdict"]
    words = {"regression": "B regressed against A", "improvement": "B improved on A",
             "no significant change": "no significant change between A and B",
             "within margin": "B is worse than A, but by no more than the margin",
             "change": "B differs from A"}
    headline = f"Compare {section['run_a']} (A) → {section['run_b']} (B): {words.get(verdict, verdict)}."
    evidence = f"Gate: {section['gate_reason'].rstrip('.')}."
    if section.get("difference") is not None:
        both = sum(1 for c in section["cases"] if c.get("difference") is not None)
        evidence += (f" Weighted difference B − A across {_plural(both, 'case')} (Mantel–Haenszel): "
                     f"{points(section['difference'])}.")
    return Verdict("compare", headline, evidence)


def console_text(items: list[Verdict], width: int = 100) -> str:
    """The verdicts as console lines, wrapped to `width`."""
    lines = []
    for item in items:
        text = item.headline + (f" {item.evidence}" if item.evidence else "")
        lines += textwrap.wrap(text, width=width, initial_indent="• ", subsequent_indent="  ",
                               break_on_hyphens=False) or ["•"]
    return "\n".join(lines)
