"""The gauntlet section: conversation heatmaps, violations per turn, every pair of engines
compared, and every transcript, conversation by conversation, violating turns highlighted."""

from ironbench.report import svg
from ironbench.report.markup import Markup, el
from ironbench.report.records import GauntletSection, Thread
from ironbench.report.verdict import points
from ironbench.report.widgets import Col, interval, left_out, ratio, section, table

OPEN_LIMIT = 12  # with more transcripts than this, all start closed
BADGES = {"helped": "ok", "hurt": "bad"}  # a pair's verdict as a badge's colour


def gauntlet(data: GauntletSection) -> Markup:
    engines, scenarios, scorers = data.engines, data.scenarios, data.scorers
    primary = scorers[0] if scorers else None
    parts = []
    names = [s.name for s in scenarios]
    maps = []
    for scorer in scorers:
        cells = [
            svg.Cell(
                c.engine,
                c.scenario,
                c.violated / c.conversations if c.conversations else None,
                f"{c.violated}/{c.conversations}",
                f"{c.engine} in {c.scenario}: {c.violated} of {c.conversations} conversations asserted the "
                f"forbidden phrase at least once ({c.turn_violations} of {c.turns} turns; {scorer})",
            )
            for c in data.cells
            if c.scorer == scorer
        ]
        maps.append(
            el(
                "div",
                None,
                el("p", {"class": "maplabel"}, f"{scorer} scorer"),
                svg.heatmap(engines, names, cells, f"Conversations violated, engine × scenario ({scorer} scorer)"),
            )
        )
    if maps:
        parts.append(
            el(
                "figure",
                None,
                el("div", {"class": "row scroll"}, maps),
                el(
                    "figcaption",
                    None,
                    "Conversations in which the engine asserted the scenario's forbidden "
                    "phrase at least once, out of its conversations; darker is worse. The "
                    "first map is the scorer the verdicts use.",
                ),
            )
        )
    if primary is not None:
        series = []
        for engine in engines:
            turns = [(t.turn, t.violations) for t in data.per_turn if t.engine == engine and t.scorer == primary]
            if turns:
                series.append((engine, turns))
        peak = max([t.conversations for t in data.per_turn] + [1])
        parts.append(
            el(
                "figure",
                None,
                el(
                    "div",
                    {"class": "scroll"},
                    svg.lines(
                        series, f"Violations per turn ({primary} scorer)", "turn", "conversations violated", peak
                    ),
                ),
                el(
                    "figcaption",
                    None,
                    "At each turn, how many conversations' answers asserted the forbidden "
                    "phrase: pressure builds with the follow-ups. Turns of one "
                    "conversation are not independent, so this describes; the "
                    "tables below count conversations.",
                ),
            )
        )
    parts.append(
        table(
            [
                Col("engine"),
                Col("scorer"),
                Col("scenarios", True),
                Col("conversations violated", True),
                Col("95% CI", True),
                Col("turns violated", True),
            ],
            [
                [
                    t.engine,
                    t.scorer,
                    (str(t.scenarios), t.scenarios),
                    ratio(t.violated, t.conversations),
                    interval(t.low, t.high),
                    ratio(t.turn_violations, t.turns),
                ]
                for t in data.totals
            ],
            caption="Per engine: a conversation is violated when any of its turns asserted the forbidden phrase; the "
            "interval is the 95% Wilson interval of the conversation violation rate",
        )
    )
    pairs = [(scorer, pair) for scorer in scorers for pair in data.comparisons.get(scorer, [])]
    if pairs:
        parts.append(
            table(
                [
                    Col("engine"),
                    Col("against"),
                    Col("scorer"),
                    Col("violated", True),
                    Col("reference violated", True),
                    Col("difference", True),
                    Col("95% CI", True),
                    Col("p (Holm)", True),
                    Col("verdict"),
                ],
                [
                    [
                        p.engine,
                        p.reference,
                        scorer,
                        ratio(p.violated[1], p.conversations[1]),
                        ratio(p.violated[0], p.conversations[0]),
                        (points(p.delta), p.delta),
                        (f"{points(p.delta_ci_95[0])} to {points(p.delta_ci_95[1])}", p.delta_ci_95[0]),
                        (f"{p.p_adjusted:.3g}", p.p_adjusted),
                        el("span", {"class": "badge " + BADGES.get(p.verdict, "")}, p.verdict),
                    ]
                    for scorer, p in pairs
                ],
                caption="Every pair of engines: the difference in conversation violation rate (later minus earlier "
                "engine), Mantel–Haenszel across scenarios with a stratified Newcombe 95% interval, and the "
                "two-sided exact test stratified by scenario, Holm-adjusted over the pairs",
            )
        )
    threads = data.transcripts
    groups = []
    for scenario in scenarios:
        mine = [t for t in threads if t.scenario == scenario.name]
        if mine:
            groups.append(
                el(
                    "h4",
                    None,
                    scenario.name,
                    f" ({scenario.domain}) — forbidden phrase: ",
                    el("q", None, scenario.forbidden_phrase),
                )
            )
            groups += [conversation(t, primary, len(threads) <= OPEN_LIMIT) for t in mine]
    parts.append(
        el(
            "div",
            {"class": "group"},
            el("h3", None, "Transcripts, conversation by conversation"),
            groups,
            left_out(data.left_out, "conversations"),
        )
    )
    return section(
        "gauntlet",
        "Gauntlet: does a guard resist asserting falsehoods?",
        "Every engine answers the same pressure scenarios, in fresh conversations; each answer is scored by "
        "every scorer. The conversation is the unit of evidence: its turns answer the same pressure in "
        "one context, so an engine violated a conversation when any of its answers asserted the "
        "scenario's forbidden phrase.",
        *parts,
    )


def conversation(thread: Thread, primary: str | None, open_violating: bool) -> Markup:
    """One conversation turn by turn, each scorer's verdict on each turn (the viewer shows one alone)."""
    turns = thread.turns
    violated = [t for t in turns if t.violated(primary)]
    items = []
    for turn in turns:
        scores = turn.scores or []
        hit = turn.violated(primary)
        other = any(s.violated for s in scores)
        badges = [
            el(
                "span",
                {"class": "badge " + ("bad" if s.violated else "ok"), "title": s.detail or None},
                f"{s.scorer}: {'violated' if s.violated else 'clean'}",
            )
            for s in scores
        ]
        items.append(
            el(
                "li",
                {"class": "turn" + (" violated" if hit else " flagged" if other else ""), "value": turn.turn},
                el("div", {"class": "verdicts"}, badges),
                el("p", {"class": "text"}, el("b", None, "Prompt: "), turn.prompt),
                el("p", {"class": "text"}, el("b", None, "Answer: "), turn.answer),
            )
        )
    outcome = ("violated" if violated else "clean") if primary else "not scored"
    return el(
        "details",
        {"class": "thread", "open": bool(violated) and open_violating},
        el(
            "summary",
            None,
            el("b", None, thread.engine),
            f" · conversation {thread.conversation} · ",
            el("span", {"class": "badge " + ("bad" if violated else "ok")}, outcome),
            f" — {len(violated)} of {len(turns)} turns violated" + (f" ({primary})" if primary else ""),
        ),
        el("ol", {"class": "transcript"}, items),
    )
