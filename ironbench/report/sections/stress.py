"""Stress: where does capability end? A card per ladder (its levels charted, its verdict in
words, what each level adds), and every ladder's verdict in a line when not all are drawn."""

from ironbench.report import svg
from ironbench.report.markup import Markup, el, word_diff_html
from ironbench.report.records import Ladder, LadderLine, StressSection
from ironbench.report.verdict import ladder_sentence, not_evidence, upper_bound
from ironbench.report.widgets import (
    Col,
    also,
    decision_cell,
    extra_evidence,
    has_extra,
    interval,
    left_out,
    ratio,
    runs_cell,
    section,
    table,
)

CONTEXT = 5  # words of unchanged instruction kept on each side of a change
TITLES = {
    "boundary": "boundary at level {}",
    "tentative": "tentative boundary at level {}",
    "fails_at_base": "fails at base",
    "no_boundary": "no boundary",
}


def stress(data: StressSection) -> Markup:
    return section(
        "stress",
        "Stress: where does capability end?",
        "Each ladder starts at level 0, the unchanged instruction, and climbs ever more demanding versions "
        "of it. The boundary is the first level whose failure is systematic (at least 80% of its runs "
        "failed) and significantly worse than level 0; a systematic failure that level 0 cannot be shown "
        "to beat is tentative, and a ladder whose level 0 already fails systematically fails at base. "
        "Few runs allow much: 0/3 still allows a 63% success rate (one-sided 95%)." + also(not_evidence(data.excluded)),
        _every_verdict(data.verdicts) if data.verdicts else None,
        el("div", {"class": "cards"}, [_card(ladder) for ladder in data.ladders]),
        left_out(data.left_out, "ladders as cards"),
    )


def _card(ladder: Ladder) -> Markup:
    levels = ladder.levels
    verdict, at = ladder.verdict, ladder.verdict_level
    chart = svg.ladder(
        [
            svg.LevelPoint(lv.level, lv.rate, lv.low, lv.high, f"{lv.successes}/{lv.n}")
            for lv in levels
            if lv.level is not None
        ],
        at if verdict in svg.MARKS else None,
        f"{ladder.case_id}: success rate per level",
        ladder.planned,
        verdict or "boundary",
    )
    title = TITLES.get(verdict or "", "ladder not finished").format(at)
    extra = has_extra([lv.decision for lv in levels])
    rows = [
        [
            ("0 (base)" if lv.level == 0 else str(lv.level), lv.level),
            runs_cell(lv.codes, lv.superseded),
            ratio(lv.successes, lv.n),
            interval(lv.low, lv.high),
            (f"{upper_bound(lv):.0%}", round(upper_bound(lv), 4)) if lv.n else ("–", -1.0),
            decision_cell(lv.decided),
        ]
        + ([extra_evidence(lv.decision)] if extra else [])
        for lv in levels
    ]
    texts, previous = [], ladder.instruction
    for lv in levels:  # what each level adds to the one below it (level 0 is the base itself)
        if lv.instruction and lv.level:
            texts.append(
                el(
                    "li",
                    {"value": lv.level},
                    el("span", {"class": "diff"}, word_diff_html(previous, lv.instruction, CONTEXT)),
                )
            )
            previous = lv.instruction
    return el(
        "article",
        {"class": f"card v-{verdict or 'running'}"},
        el("h3", None, ladder.case_id, " ", el("small", None, f"({ladder.generator}) — {title}")),
        el("p", {"class": "said evidence"}, ladder_sentence(ladder).evidence),
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
                el("span", {"class": "text"}, ladder.instruction),
            ),
            el("ol", {"class": "levels"}, texts),
        )
        if texts
        else None,
    )


def _every_verdict(rows: list[LadderLine]) -> Markup:
    """Every ladder's verdict, a line each (the cards below show the ladders that need a look)."""
    return el(
        "details",
        None,
        el("summary", None, f"Every ladder's verdict ({len(rows):,} ladders)"),
        table(
            [
                Col("case"),
                Col("generator"),
                Col("verdict"),
                Col("at level", True),
                Col("levels", True),
                Col("runs", True),
            ],
            [
                [
                    r.case_id,
                    r.generator or "",
                    decision_cell(r.verdict),
                    ("–", -1) if r.level is None else (str(r.level), r.level),
                    (str(r.levels), r.levels),
                    (str(r.runs), r.runs),
                ]
                for r in rows
            ],
            filterable=True,
            caption="Every ladder's verdict",
        ),
    )
