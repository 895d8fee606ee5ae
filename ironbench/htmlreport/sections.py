"""The run's sections: outcomes, baseline, adversarial and stress, from the gathered data."""

from ironbench.htmlreport import svg
from ironbench.htmlreport.gather import OUTCOME_NAMES
from ironbench.htmlreport.markup import Markup, el, join, word_diff_html
from ironbench.htmlreport.widgets import (
    PALETTE, Col, Td, decision_cell, extra_evidence, figure, interval, number, ratio, section, strip, strip_cell,
    table,
)

# Decision fields the tables name; any other field is shown as extra evidence.
KNOWN_DECISION = ("case_id", "variant_id", "decision", "reason", "n", "successes", "success_rate", "wilson_low",
                  "wilson_high", "chance_agreement", "generator", "level", "reference_source")
OPEN_LIMIT = 40  # collapsible groups with more items than this start closed
CONTEXT = 5  # words of unchanged instruction kept on each side of a change
CHART_ROWS = 150  # per-case charts taller than this stop being read; the tables keep every row


def _label(group: dict) -> str:
    return group["case_id"] if group["variant_id"] in ("base", None) else f"{group['case_id']}/{group['variant_id']}"


def outcomes(rows: list[dict]) -> Markup:
    total = {}
    for row in rows:
        total[row["case_mode"]] = total.get(row["case_mode"], 0) + row["runs"]
    body = [[row["case_mode"], join([strip(row["code"]), " ", OUTCOME_NAMES.get(row["code"], row["code"])]),
             (str(row["runs"]), row["runs"]), (f"{row['runs'] / total[row['case_mode']]:.0%}",
                                               round(row["runs"] / total[row["case_mode"]], 4)),
             (number(row["p50_ms"], 0), row["p50_ms"]), (number(row["p95_ms"], 0), row["p95_ms"])]
            for row in rows]
    return section("outcomes", "Invocations by outcome",
                   "Every invocation of the target, by what came of it. Harness faults and infrastructure errors "
                   "are counted here but excluded from every rate and decision.",
                   table([Col("mode"), Col("outcome"), Col("runs", True), Col("share", True),
                          Col("median ms", True), Col("p95 ms", True)], body))


def charted(cases: list[dict], limit: int = CHART_ROWS) -> tuple[list[dict], str]:
    """The cases a per-case chart shows: all of them, or past `limit` the ones that most
    need a look (undecided, exhausted, then the lowest interval), in suite order."""
    if len(cases) <= limit:
        return cases, ""
    first = {"undecided": 0, "exhausted": 1}

    def need(i: int) -> tuple:
        decision = (cases[i]["decision"] or {}).get("decision", "undecided")
        return first.get(decision, 2), cases[i]["low"], cases[i]["rate"]

    keep = sorted(sorted(range(len(cases)), key=need)[:limit])
    return ([cases[i] for i in keep], f" Charts show {limit} of {len(cases)} cases: the undecided, the exhausted "
                                      f"and those with the lowest success rates; the table has every case.")


def baseline(data: dict) -> Markup:
    cases = data["cases"]
    shown, note = charted(cases)
    bars = svg.interval_bars(
        [svg.IntervalRow(_label(c), c["rate"], c["low"], c["high"], f"{c['successes']}/{c['n']}",
                         flagged=(c["decision"] or {}).get("decision") == "exhausted") for c in shown],
        "Success rate per case with its 95% Wilson interval")
    sequences = svg.sequence_grid(
        [svg.SequenceRow(_label(c), c["codes"], c["planned"],
                         f"{_label(c)}: {c['successes']} of {c['n']} succeeded; "
                         f"{(c['decision'] or {}).get('decision', 'undecided')} after {len(c['codes'])} of "
                         f"{c['planned']} runs") for c in shown],
        PALETTE, "Run outcomes in order; hollow squares are runs the adaptive stop saved")
    used = sorted({code for c in cases for code in c["codes"]}, key=list(PALETTE).index)
    attempts = svg.stacked_columns(
        [(str(a["attempts"]), [(a["successes"], PALETTE["S"][0], "succeeded"),
                               (a["failures"], PALETTE["G"][0], "failed")]) for a in data["attempts"]],
        "Validation cycles per run (attempts), split by outcome", "attempts")
    rows = []
    for c in cases:
        decision = c["decision"] or {}
        rows.append([
            _label(c), strip_cell(c["codes"]), ratio(c["successes"], c["n"]), interval(c["low"], c["high"]),
            decision_cell(c["decision"]), decision.get("reason", ""),
            (number(decision.get("chance_agreement")), decision.get("chance_agreement", -1)),
            extra_evidence(c["decision"], KNOWN_DECISION),
            (number(c["mean_attempts"]), c["mean_attempts"] or 0), (number(c["p95_ms"], 0), c["p95_ms"] or 0),
            Td(c["instruction"] or "", cls="text"),
        ])
    return section(
        "baseline", "Baseline: does the same instruction converge?",
        "Each instruction is replayed until its last 3 runs agree (stable) or its runs are spent (exhausted). "
        "Chance agreement is the probability that 3 runs agree by chance at the observed rate, p³ + (1 − p)³.",
        figure(bars, "Success rate per case; the whisker is the 95% Wilson interval. Red: exhausted, no agreement."
                     + note),
        figure(sequences, join(["Outcomes in run order.", note, " ", svg.legend(PALETTE, used)])),
        figure(attempts, "Attempts: 0 when generation produced nothing, else 1 + repairs.") if data["attempts"] else None,
        table([Col("case"), Col("runs"), Col("success", True), Col("95% CI", True), Col("decision"), Col("reason"),
               Col("chance agreement", True, "p³ + (1 − p)³ at the observed rate"), Col("more evidence"),
               Col("mean attempts", True), Col("p95 ms", True), Col("instruction")], rows, filterable=True),
    )


_SEVERITY = {"structural": 0, "stochastic": 1, "not_material": 2}


def adversarial(data: dict) -> Markup:
    parts = []
    cells = data["cells"]
    if cells:
        case_ids = list(dict.fromkeys(c["case_id"] for c in cells))
        generators = [g["generator"] for g in data["generators"]]
        grid = {(c["case_id"], c["generator"]): svg.Cell(
            c["material"] / c["variants"], f"{c['material']}/{c['variants']}",
            f"{c['case_id']} × {c['generator']}: {c['material']} of {c['variants']} variants changed the outcome "
            f"({c['structural']} structural, {c['stochastic']} stochastic)") for c in cells}
        parts.append(figure(svg.heatmap(case_ids, generators, grid, "Material-change rate, case × generator"),
                            "Share of variants whose outcome differed materially from the baseline "
                            "(stochastic or structural); darker is more sensitive."))
        parts.append(table(
            [Col("generator"), Col("variants", True), Col("material", True), Col("structural", True),
             Col("stochastic", True), Col("material-change rate", True), Col("95% CI", True)],
            [[g["generator"], (str(g["variants"]), g["variants"]), (str(g["material"]), g["material"]),
              (str(g["structural"]), g["structural"]), (str(g["stochastic"]), g["stochastic"]),
              (f"{g['rate']:.0%}", round(g["rate"], 4)), interval(g["low"], g["high"])] for g in data["generators"]],
            caption="Per generator, across cases"))
    details = []
    for case in data["cases"]:
        variants = sorted(case["variants"], key=lambda v: (_SEVERITY.get((v["decision"] or {}).get("decision"), 3),
                                                          v["generator"], v["variant_id"] or ""))
        material = sum(1 for v in variants if (v["decision"] or {}).get("decision") in ("stochastic", "structural"))
        reference = case["reference"]
        if reference:
            source = reference.get("reference_source")
            where = "a fresh run of the instruction in this run" if source == "this run" else f"baseline run {source}"
            ref = el("p", None, "Reference: ", where, " — ", strip(case["reference_codes"] or ""),
                     f" {reference['successes']}/{reference['n']} succeeded.")
        else:
            ref = el("p", None, "No reference decided yet.")
        models = any(v.get("model") for v in variants)
        model_col = [Col("model")] if models else []
        same = [v for v in variants if (v["decision"] or {}).get("decision") == "not_material"]
        moved = [v for v in variants if v not in same]

        def diff(v: dict) -> Td:
            return Td(word_diff_html(case["instruction"], v["instruction"], CONTEXT), cls="diff")

        body = [el("p", {"class": "base"}, el("b", None, "Base: "), el("span", {"class": "text"}, case["instruction"])),
                ref]
        if moved:
            body.append(table([Col("variant"), Col("decision"), Col("runs"),
                               Col("instruction, as a word diff against the base")] + model_col,
                              [[v["variant_id"], decision_cell(v["decision"]), strip_cell(v["codes"]), diff(v)]
                               + ([v.get("model") or ""] if models else []) for v in moved],
                              filterable=True, caption="Variants whose outcome differed from the reference "
                                                       "(or not decided yet)"))
        if same:
            body.append(table([Col("variant"), Col("instruction, as a word diff against the base")] + model_col,
                              [[v["variant_id"], diff(v)] + ([v.get("model") or ""] if models else []) for v in same],
                              filterable=True, caption="Variants whose first run matched the reference (not material)"))
        if case["dropped"]:
            body.append(table([Col("generator"), Col("reason"), Col("candidate")],
                              [[d["generator"], d["reason"] or "", Td(d["instruction"], cls="text")]
                               for d in case["dropped"]],
                              caption="Candidates dropped for breaking the single-string contract"))
        details.append(el("details", {"open": len(variants) <= OPEN_LIMIT and len(data["cases"]) <= 10},
                          el("summary", None, el("b", None, case["case_id"]),
                             f" — {len(variants)} variants, {material} changed the outcome materially"), body))
    if details:
        parts.append(el("div", {"class": "group"}, el("h3", None, "Variants"), details))
    if data["rejections"]:
        rows = [[r["case_id"], r["variant_id"], (str(r["attempt"]), r["attempt"]), r["model"],
                 Td(r["ai_output"], cls="text"),
                 el("ul", {"class": "reasons"}, [el("li", None, reason) for reason in r["failure_reasons"]])]
                for r in data["rejections"]]
        parts.append(el("div", {"class": "group"}, el("h3", None, "AI rewrites the harness rejected"),
                        table([Col("case"), Col("variant slot"), Col("attempt", True), Col("model"),
                               Col("rejected output"), Col("reasons")], rows, filterable=True)))
    return section("adversarial", "Adversarial: how sensitive is it to wording?",
                   "Each variant runs once; one whose outcome differs from the reference is repeated up to 3 times: "
                   "a repeat that agrees makes the difference stochastic, three that all differ make it structural.",
                   *parts)


def stress(data: dict) -> Markup:
    cards = []
    for ladder in data["ladders"]:
        levels = ladder["levels"]
        boundary = ladder["boundary"]
        chart = svg.ladder([svg.LevelPoint(lv["level"], lv["rate"], lv["low"], lv["high"],
                                           f"{lv['successes']}/{lv['n']}") for lv in levels if lv["level"] is not None],
                           boundary, f"{ladder['case_id']}: success rate per level", ladder.get("planned"))
        decision = ladder["ladder"]
        verdict = (f"boundary at level {boundary}" if boundary is not None else
                   "no boundary" if decision else "ladder not finished")
        rows = [[(str(lv["level"]), lv["level"]), strip_cell(lv["codes"]), ratio(lv["successes"], lv["n"]),
                 interval(lv["low"], lv["high"]), decision_cell(lv["decision"]),
                 extra_evidence(lv["decision"], KNOWN_DECISION)] for lv in levels]
        texts, previous = [], ladder["instruction"]
        for lv in levels:  # what each level adds to the one below it
            if lv["instruction"]:
                texts.append(el("li", {"value": lv["level"]}, el("span", {"class": "diff"},
                                                                 word_diff_html(previous, lv["instruction"], CONTEXT))))
                previous = lv["instruction"]
        cards.append(el("article", {"class": "card" + (" boundary" if boundary is not None else "")},
                        el("h3", None, ladder["case_id"], " ", el("small", None, f"({ladder['generator']}) — {verdict}")),
                        chart,
                        table([Col("level", True), Col("runs"), Col("success", True), Col("95% CI", True),
                               Col("decision"), Col("more evidence")], rows),
                        el("details", None, el("summary", None, "What each level adds"),
                           el("p", {"class": "base"}, el("b", None, "Base: "),
                              el("span", {"class": "text"}, ladder["instruction"])),
                           el("ol", {"class": "levels"}, texts)) if texts else None))
    return section("stress", "Stress: where does capability end?",
                   "Each ladder climbs ever more demanding versions of an instruction. The boundary is the first "
                   "level whose failure is systematic (at least 80% of its runs failed); levels past it are not run.",
                   el("div", {"class": "cards"}, cards))

