"""The run's sections: outcomes, baseline, adversarial and stress, from the gathered data."""

from ironbench.report import svg
from ironbench.report.gather import EVIDENCE_CODES, OUTCOME_NAMES
from ironbench.report.listing import sentence
from ironbench.report.markup import Markup, el, join, word_diff_html
from ironbench.report.verdict import agreeing_runs, ladder_verdict, not_evidence, reference_text, upper_bound
from ironbench.report.widgets import (
    PALETTE,
    Col,
    Td,
    decision_cell,
    extra_evidence,
    figure,
    has_extra,
    interval,
    number,
    ratio,
    section,
    strip,
    strip_cell,
    table,
)

# Decision fields the tables name; any other field is shown as extra evidence.
KNOWN_DECISION = (
    "case_id",
    "variant_id",
    "decision",
    "reason",
    "n",
    "successes",
    "success_rate",
    "wilson_low",
    "wilson_high",
    "chance_agreement",
    "generator",
    "level",
    "reference_source",
    "reference_group",
    "reference_unstable",
    "success_lower_95",
    "success_upper_95",
    "reproduce_lower_95",
    "direction",
    "p_value",
)
OPEN_LIMIT = 40  # collapsible groups with more items than this start closed
CONTEXT = 5  # words of unchanged instruction kept on each side of a change
CHART_ROWS = 150  # per-case charts taller than this stop being read; the tables keep every row


def _label(group: dict) -> str:
    return group["case_id"] if group["variant_id"] in ("base", None) else f"{group['case_id']}/{group['variant_id']}"


def outcomes(rows: list[dict]) -> Markup:
    evidence: dict[str, int] = {}
    for row in rows:
        if row["code"] in EVIDENCE_CODES:
            evidence[row["case_mode"]] = evidence.get(row["case_mode"], 0) + row["runs"]
    body = []
    for row in rows:
        counted = row["code"] in EVIDENCE_CODES
        share = (
            (f"{row['runs'] / evidence[row['case_mode']]:.0%}", round(row["runs"] / evidence[row["case_mode"]], 4))
            if counted
            else ("excluded", -1.0)
        )
        body.append(
            [
                row["case_mode"],
                join([strip(row["code"]), " ", OUTCOME_NAMES.get(row["code"], row["code"])]),
                (str(row["runs"]), row["runs"]),
                share,
                (number(row["p50_ms"], 0), row["p50_ms"]),
                (number(row["p95_ms"], 0), row["p95_ms"]),
            ]
        )
    return section(
        "outcomes",
        "Invocations by outcome",
        "Every invocation of the target, by what came of it. A timeout is a failure of its own kind "
        "(failure stage timeout). Harness faults and infrastructure errors (the target's backend failed) "
        "are counted here but excluded from every rate and decision; an attempt whose infrastructure "
        "error was re-run is kept as superseded, and only the re-run counts. Shares are of the runs "
        "that count.",
        table(
            [
                Col("mode"),
                Col("outcome"),
                Col("runs", True),
                Col("share", True, "of the mode's runs that count in rates"),
                Col("median ms", True),
                Col("p95 ms", True),
            ],
            body,
        ),
    )


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
    return (
        [cases[i] for i in keep],
        (
            f" Charts show {limit} of {len(cases)} cases: the undecided, the exhausted "
            f"and those with the lowest success rates; the table has every case."
        ),
    )


def supports(case: dict) -> tuple[str, float]:
    """What a case's decision says its runs support, as a table cell sorting by the bound."""
    decision = case["decision"] or {}
    n = decision.get("n", case["n"])
    if decision.get("decision") == "stable":
        bound = decision.get("reproduce_lower_95")
        if bound is None:
            return "–", -1.0
        k = agreeing_runs(n, bound)
        return f"{f'{k}/{n}' if k is not None else n} agreed → recurs with p ≥ {bound:.2f}", bound
    low, high = decision.get("success_lower_95"), decision.get("success_upper_95")
    if low is None or high is None:
        return "–", -1.0
    return f"success ≥ {low:.0%} and ≤ {high:.0%}", round(low, 4)


def _reason(decision: dict) -> str:
    """A decision's reason, without the bound a stable one ends with: the column beside it
    states that already (the embedded data keeps the whole reason)."""
    reason = decision.get("reason", "")
    if decision.get("decision") == "stable" and decision.get("reproduce_lower_95") is not None:
        return reason.split(";")[0]
    return reason


def _runs(case: dict) -> Td:
    """The run strip, and any attempts a re-run superseded."""
    if not case.get("superseded"):
        return strip_cell(case["codes"])
    return Td(
        join([Markup(strip_cell(case["codes"]).shown), el("small", None, f" +{case['superseded']} superseded")]),
        cls="strip",
    )


def baseline(data: dict) -> Markup:
    cases = data["cases"]
    shown, note = charted(cases)
    bars = svg.interval_bars(
        [
            svg.IntervalRow(
                _label(c),
                c["rate"],
                c["low"],
                c["high"],
                f"{c['successes']}/{c['n']}",
                flagged=(c["decision"] or {}).get("decision") == "exhausted",
            )
            for c in shown
        ],
        "Success rate per case with its 95% Wilson interval",
    )
    sequences = svg.sequence_grid(
        [
            svg.SequenceRow(
                _label(c),
                c["codes"],
                c["planned"],
                f"{_label(c)}: {c['successes']} of {c['n']} succeeded; "
                f"{(c['decision'] or {}).get('decision', 'undecided')} after {len(c['codes'])} of "
                f"{c['planned']} runs",
            )
            for c in shown
        ],
        PALETTE,
        "Run outcomes in order; hollow squares are runs the adaptive stop saved",
    )
    used = sorted({code for c in cases for code in c["codes"]}, key=list(PALETTE).index)
    attempts = svg.stacked_columns(
        [
            (
                str(a["attempts"]),
                [(a["successes"], PALETTE["S"][0], "succeeded"), (a["failures"], PALETTE["G"][0], "failed")],
            )
            for a in data["attempts"]
        ],
        "Validation cycles per run (attempts), split by outcome",
        "attempts",
    )
    extra = has_extra([c["decision"] for c in cases], KNOWN_DECISION)
    rows = []
    for c in cases:
        decision = c["decision"] or {}
        rows.append(
            [
                _label(c),
                _runs(c),
                ratio(c["successes"], c["n"]),
                interval(c["low"], c["high"]),
                decision_cell(c["decision"]),
                supports(c),
                Td(_reason(decision), cls="reason"),
                (number(decision.get("chance_agreement")), decision.get("chance_agreement", -1)),
                *([extra_evidence(c["decision"], KNOWN_DECISION)] if extra else []),
                (number(c["mean_attempts"]), c["mean_attempts"] or 0),
                (number(c["p95_ms"], 0), c["p95_ms"] or 0),
                Td(c["instruction"] or "", cls="text"),
            ]
        )
    apart = not_evidence(
        data.get("excluded")
        or {k: sum(c.get(k, 0) for c in cases) for k in ("timeouts", "excluded", "infra_errors", "superseded")}
    )
    return section(
        "baseline",
        "Baseline: does the same instruction converge?",
        "Each instruction is replayed until its last 3 runs agree (stable) or its runs are spent (exhausted). "
        "A stable decision shows only what its runs support: the one-sided 95% lower bound on the chance that the "
        "instruction gives that outcome again, from how many runs gave it (3/3 → 0.37, 10/10 → 0.74); an "
        "exhausted one, one-sided 95% bounds on its success rate. Chance agreement is the probability that 3 runs "
        "agree by chance at the observed rate, p³ + (1 − p)³." + (f" {apart[:1].upper()}{apart[1:]}." if apart else ""),
        figure(
            bars, "Success rate per case; the whisker is the 95% Wilson interval. Red: exhausted, no agreement." + note
        ),
        figure(sequences, join(["Outcomes in run order.", note, " ", svg.legend(PALETTE, used)])),
        figure(attempts, "Attempts: 0 when generation produced nothing, else 1 + repairs.")
        if data["attempts"]
        else None,
        table(
            [
                Col("case"),
                Col("runs"),
                Col("success", True),
                Col("95% CI", True),
                Col("decision"),
                Col(
                    "what the runs support",
                    True,
                    "stable: agreeing runs → lower bound on the chance the outcome "
                    "recurs; otherwise bounds on the success rate (one-sided 95%)",
                ),
                Col("reason"),
                Col("chance agreement", True, "p³ + (1 − p)³ at the observed rate"),
                *([Col("more evidence")] if extra else []),
                Col("mean attempts", True),
                Col("p95 ms", True),
                Col("instruction"),
            ],
            rows,
            filterable=True,
        ),
        left_out(data.get("left_out"), "cases"),
    )


def left_out(note: dict | None, noun: str) -> Markup | None:
    """What a section leaves out of a run too large to list whole, and how to see it."""
    return el("p", {"class": "left-out"}, commands(sentence(note, noun))) if note else None


def commands(text: str) -> Markup:
    """Text whose `quoted` parts are commands, set as code."""
    return join([el("code", None, part) if k % 2 else part for k, part in enumerate(text.split("`"))])


def _superseded(variant: dict) -> str:
    """A variant's name, and any attempt of it a re-run superseded (a backend outage)."""
    count = variant.get("superseded")
    return f"{variant['variant_id']} (+{count} superseded)" if count else variant["variant_id"]


# keyed by str | None: a variant without a decision (None) sorts after every decided one
_SEVERITY: dict[str | None, int] = {"structural": 0, "stochastic": 1, "within_noise": 2, "not_material": 3}


def _way(decision: dict | None) -> tuple[str, str]:
    """Which way a variant differed, and the test behind it when there was one."""
    decision = decision or {}
    way = decision.get("direction") or ""
    if decision.get("p_value") is not None:
        way += f" (p = {decision['p_value']:.2g})"
    return way, way


def adversarial(data: dict) -> Markup:
    parts = []
    cells = data["cells"]
    if cells:
        case_ids = list(dict.fromkeys(c["case_id"] for c in cells))
        generators = [g["generator"] for g in data["generators"]]
        grid = {
            (c["case_id"], c["generator"]): svg.Cell(
                c["material"] / c["variants"],
                f"{c['material']}/{c['variants']}",
                f"{c['case_id']} × {c['generator']}: {c['material']} of {c['variants']} variants changed the outcome"
                + "".join(
                    f"; {c[k]} {k.replace('_', ' ')}" for k in ("structural", "stochastic", "within_noise") if c.get(k)
                ),
            )
            for c in cells
        }
        parts.append(
            figure(
                svg.heatmap(case_ids, generators, grid, "Material-change rate, case × generator"),
                "Share of variants whose outcome differed materially from the baseline "
                "(stochastic or structural); darker is more sensitive."
                + (
                    " Rows: the {listed} most sensitive of {of:,} cases; every case: {see}.".format(
                        **data["heatmap_left_out"]
                    )
                    if data.get("heatmap_left_out")
                    else ""
                ),
            )
        )
        parts.append(
            table(
                [
                    Col("generator"),
                    Col("variants", True),
                    Col("material", True),
                    Col("structural", True),
                    Col("stochastic", True),
                    Col("within noise", True, "differed, but no more than an unstable baseline's own runs do"),
                    Col("which way"),
                    Col("material-change rate", True),
                    Col("95% CI", True),
                ],
                [
                    [
                        g["generator"],
                        (str(g["variants"]), g["variants"]),
                        (str(g["material"]), g["material"]),
                        (str(g["structural"]), g["structural"]),
                        (str(g["stochastic"]), g["stochastic"]),
                        (str(g.get("within_noise", 0)), g.get("within_noise", 0)),
                        ", ".join(f"{way} ({count})" for way, count in sorted((g.get("directions") or {}).items())),
                        (f"{g['rate']:.0%}", round(g["rate"], 4)),
                        interval(g["low"], g["high"]),
                    ]
                    for g in data["generators"]
                ],
                caption="Per generator, across cases",
            )
        )
    details = []
    for case in data["cases"]:
        variants = sorted(
            case["variants"],
            key=lambda v: (
                _SEVERITY.get((v["decision"] or {}).get("decision"), 4),
                v["generator"],
                v["variant_id"] or "",
            ),
        )
        material = sum(1 for v in variants if (v["decision"] or {}).get("decision") in ("stochastic", "structural"))
        reference = case["reference"]
        ref = el(
            "p",
            None,
            "Judged against ",
            reference_text(reference),
            join([" — ", strip(case["reference_codes"])]) if case.get("reference_codes") else None,
            ". The baseline never settled, so a variant whose first run differs from its most common outcome "
            "runs 4 times and is compared with every one of its outcomes (exact permutation test)."
            if (reference or {}).get("reference_unstable")
            else ".",
        )
        models = any(v.get("model") for v in variants)
        model_col = [Col("model")] if models else []
        same = [v for v in variants if (v["decision"] or {}).get("decision") == "not_material"]
        moved = [v for v in variants if v not in same]

        def diff(v: dict, base: str = case["instruction"]) -> Td:
            return Td(word_diff_html(base, v["instruction"], CONTEXT), cls="diff")

        body = [
            el("p", {"class": "base"}, el("b", None, "Base: "), el("span", {"class": "text"}, case["instruction"])),
            ref,
        ]
        if moved:
            body.append(
                table(
                    [
                        Col("variant"),
                        Col("decision"),
                        Col("which way"),
                        Col("runs"),
                        Col("instruction, as a word diff against the base"),
                    ]
                    + model_col,
                    [
                        [v["variant_id"], decision_cell(v["decision"]), _way(v["decision"]), _runs(v), diff(v)]
                        + ([v.get("model") or ""] if models else [])
                        for v in moved
                    ],
                    filterable=True,
                    caption="Variants whose outcome differed from the reference (or not decided yet)",
                )
            )
        if same:
            body.append(
                table(
                    [Col("variant"), Col("instruction, as a word diff against the base")] + model_col,
                    [[_superseded(v), diff(v)] + ([v.get("model") or ""] if models else []) for v in same],
                    filterable=True,
                    caption="Variants whose first run matched the reference (not material)",
                )
            )
        if case["dropped"]:
            body.append(
                table(
                    [Col("generator"), Col("reason"), Col("candidate")],
                    [[d["generator"], d["reason"] or "", Td(d["instruction"], cls="text")] for d in case["dropped"]],
                    caption="Candidates dropped for breaking the single-string contract",
                )
            )
        details.append(
            el(
                "details",
                {"open": len(variants) <= OPEN_LIMIT and len(data["cases"]) <= 10},
                el(
                    "summary",
                    None,
                    el("b", None, case["case_id"]),
                    f" — {len(variants) + case.get('not_listed', 0)} variants, {material} changed the outcome "
                    "materially"
                    + (f" (the {case['not_listed']} that did not are not listed)" if case.get("not_listed") else ""),
                ),
                body,
            )
        )
    if details:
        parts.append(
            el("div", {"class": "group"}, el("h3", None, "Variants"), details, left_out(data.get("left_out"), "cases"))
        )
    if data["rejections"]:
        rows = [
            [
                r["case_id"],
                r["variant_id"],
                (str(r["attempt"]), r["attempt"]),
                r["model"],
                Td(r["ai_output"], cls="text"),
                el("ul", {"class": "reasons"}, [el("li", None, reason) for reason in r["failure_reasons"]]),
            ]
            for r in data["rejections"]
        ]
        parts.append(
            el(
                "div",
                {"class": "group"},
                el("h3", None, "AI rewrites the harness rejected"),
                table(
                    [
                        Col("case"),
                        Col("variant slot"),
                        Col("attempt", True),
                        Col("model"),
                        Col("rejected output"),
                        Col("reasons"),
                    ],
                    rows,
                    filterable=True,
                ),
                left_out(data.get("rejections_left_out"), "rejected rewrites"),
            )
        )
    apart = not_evidence(data.get("excluded") or {})
    return section(
        "adversarial",
        "Adversarial: how sensitive is it to wording?",
        "Each variant runs once; one whose outcome differs from the reference is repeated up to 3 times: "
        "a repeat that agrees makes the difference stochastic, three that all differ make it structural, "
        "and each says which way it went. Against a baseline that never settled, a difference its own "
        "runs explain is within noise." + (f" {apart[:1].upper()}{apart[1:]}." if apart else ""),
        *parts,
    )


VERDICT_TITLES = {
    "boundary": "boundary at level {}",
    "tentative": "tentative boundary at level {}",
    "fails_at_base": "fails at base",
    "no_boundary": "no boundary",
}


def stress(data: dict) -> Markup:
    cards = []
    for ladder in data["ladders"]:
        levels = ladder["levels"]
        verdict, at = ladder["verdict"], ladder["verdict_level"]
        chart = svg.ladder(
            [
                svg.LevelPoint(lv["level"], lv["rate"], lv["low"], lv["high"], f"{lv['successes']}/{lv['n']}")
                for lv in levels
                if lv["level"] is not None
            ],
            at if verdict in svg.MARKS else None,
            f"{ladder['case_id']}: success rate per level",
            ladder.get("planned"),
            verdict or "boundary",
        )
        title = VERDICT_TITLES.get(verdict, "ladder not finished").format(at)
        said = ladder_verdict(ladder)
        extra = has_extra([lv["decision"] for lv in levels], KNOWN_DECISION)
        rows = [
            [
                ("0 (base)" if lv["level"] == 0 else str(lv["level"]), lv["level"]),
                _runs(lv),
                ratio(lv["successes"], lv["n"]),
                interval(lv["low"], lv["high"]),
                (f"{upper_bound(lv):.0%}", round(upper_bound(lv), 4)) if lv["n"] else ("–", -1.0),
                decision_cell(lv["decision"]),
            ]
            + ([extra_evidence(lv["decision"], KNOWN_DECISION)] if extra else [])
            for lv in levels
        ]
        texts, previous = [], ladder["instruction"]
        for lv in levels:  # what each level adds to the one below it (level 0 is the base itself)
            if lv["instruction"] and lv["level"]:
                texts.append(
                    el(
                        "li",
                        {"value": lv["level"]},
                        el("span", {"class": "diff"}, word_diff_html(previous, lv["instruction"], CONTEXT)),
                    )
                )
                previous = lv["instruction"]
        cards.append(
            el(
                "article",
                {"class": f"card v-{verdict or 'running'}"},
                el("h3", None, ladder["case_id"], " ", el("small", None, f"({ladder['generator']}) — {title}")),
                el("p", {"class": "said evidence"}, said.evidence),
                chart,
                table(
                    [
                        Col("level", True),
                        Col("runs"),
                        Col("success", True),
                        Col("95% CI", True),
                        Col("success ≤", True, "one-sided 95% upper bound on the level's success rate"),
                        Col("decision"),
                    ]
                    + ([Col("more evidence")] if extra else []),
                    rows,
                ),
                el(
                    "details",
                    None,
                    el("summary", None, "What each level adds"),
                    el(
                        "p",
                        {"class": "base"},
                        el("b", None, "Level 0, the base: "),
                        el("span", {"class": "text"}, ladder["instruction"]),
                    ),
                    el("ol", {"class": "levels"}, texts),
                )
                if texts
                else None,
            )
        )
    every = _ladder_verdicts(data["verdicts"]) if data.get("verdicts") else None
    apart = not_evidence(data.get("excluded") or {})
    return section(
        "stress",
        "Stress: where does capability end?",
        "Each ladder starts at level 0, the unchanged instruction, and climbs ever more demanding versions "
        "of it. The boundary is the first level whose failure is systematic (at least 80% of its runs "
        "failed) and significantly worse than level 0; a systematic failure that level 0 cannot be shown "
        "to beat is tentative, and a ladder whose level 0 already fails systematically fails at base. "
        "Few runs allow much: 0/3 still allows a 63% success rate (one-sided 95%)."
        + (f" {apart[:1].upper()}{apart[1:]}." if apart else ""),
        every,
        el("div", {"class": "cards"}, cards),
        left_out(data.get("left_out"), "ladders as cards"),
    )


def _ladder_verdicts(rows: list[dict]) -> Markup:
    """Every ladder's verdict, a line each (the cards below show the ladders that need a look)."""
    return el(
        "details",
        None,
        el("summary", None, f"Every ladder's verdict ({len(rows):,} ladders)"),
        _ladder_table(rows),
    )


def _ladder_table(rows: list[dict]) -> Markup:
    return table(
        [Col("case"), Col("generator"), Col("verdict"), Col("at level", True), Col("levels", True), Col("runs", True)],
        [
            [
                r["case_id"],
                r["generator"] or "",
                decision_cell({"decision": r["verdict"]} if r["verdict"] else None),
                ("–", -1) if r["level"] is None else (str(r["level"]), r["level"]),
                (str(r["levels"]), r["levels"]),
                (str(r["runs"]), r["runs"]),
            ]
            for r in rows
        ],
        filterable=True,
        caption="Every ladder's verdict",
    )
