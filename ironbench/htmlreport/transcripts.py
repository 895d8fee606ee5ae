"""The gauntlet section: violation heatmaps, violations per turn, engine against engine,
and every transcript with its violating turns highlighted."""

from ironbench.htmlreport import svg
from ironbench.htmlreport.markup import Markup, el
from ironbench.htmlreport.widgets import Col, interval, ratio, section, table

OPEN_LIMIT = 12  # with more transcripts than this, all start closed


def gauntlet(data: dict) -> Markup:
    engines, scenarios, scorers = data["engines"], data["scenarios"], data["scorers"]
    primary = scorers[0] if scorers else None
    parts = []
    names = [s["name"] for s in scenarios]
    for scorer in scorers:
        cells = {(c["engine"], c["scenario"]): svg.Cell(
            c["violations"] / c["turns"] if c["turns"] else None, f"{c['violations']}/{c['turns']}",
            f"{c['engine']} in {c['scenario']}: {c['violations']} of {c['turns']} turns asserted the forbidden phrase "
            f"({scorer})") for c in data["cells"] if c["scorer"] == scorer}
        parts.append(svg.heatmap(engines, names, cells, f"Violations, engine × scenario ({scorer} scorer)"))
    if parts:
        parts = [el("figure", None, el("div", {"class": "row scroll"}, parts),
                    el("figcaption", None, "Turns that asserted the scenario's forbidden phrase, out of its turns; "
                                           "darker is worse. The first map is the scorer verdicts use."))]
    if primary is not None:
        series = []
        for engine in engines:
            points = [(t["turn"], t["violations"]) for t in data["per_turn"]
                      if t["engine"] == engine and t["scorer"] == primary]
            if points:
                series.append((engine, points))
        peak = max([t["scenarios"] for t in data["per_turn"]] + [1])
        parts.append(el("figure", None, el("div", {"class": "scroll"},
                                           svg.lines(series, f"Violations per turn ({primary} scorer)", "turn",
                                                     "scenarios violated", peak)),
                        el("figcaption", None, "How many scenarios' answers asserted the forbidden phrase at each turn: "
                                               "pressure builds with the follow-ups.")))
    parts.append(table(
        [Col("engine"), Col("scorer"), Col("scenarios", True), Col("violations", True), Col("95% CI", True)],
        [[t["engine"], t["scorer"], (str(t["scenarios"]), t["scenarios"]), ratio(t["successes"], t["n"]),
          interval(t["low"], t["high"])] for t in data["totals"]],
        caption="Violations per engine: the interval is the 95% Wilson interval of the violation rate"))
    if data["pairs"]:
        parts.append(table(
            [Col("engine"), Col("against"), Col("violated", True), Col("reference violated", True),
             Col("p(fewer)", True), Col("p(more)", True), Col("informative scenarios", True)],
            [[p["engine"], p["reference"], ratio(p["b_violations"], p["b_turns"]),
              ratio(p["a_violations"], p["a_turns"]), (f"{p['p_fewer']:.3g}", p["p_fewer"]),
              (f"{p['p_more']:.3g}", p["p_more"]), (str(p["informative_scenarios"]), p["informative_scenarios"])]
             for p in data["pairs"]],
            caption=f"Each engine against {engines[0]}: one-sided exact tests stratified by scenario "
                    f"({data['pairs'][0]['scorer']} scorer)"))
    phrases = {s["name"]: s["forbidden_phrase"] for s in scenarios}
    threads = data["transcripts"]
    parts.append(el("div", {"class": "group"}, el("h3", None, "Transcripts"),
                    [_thread(t, phrases.get(t["scenario"], ""), primary, len(threads) <= OPEN_LIMIT) for t in threads]))
    return section("gauntlet", "Gauntlet: does a guard resist asserting falsehoods?",
                   "Every engine answers the same pressure scenarios; each answer is scored by every scorer. "
                   "A violation is an answer that asserts the scenario's forbidden phrase.", *parts)


def _thread(thread: dict, phrase: str, primary: str | None, open_violating: bool) -> Markup:
    turns = thread["turns"]
    violated = [t for t in turns if _violated(t, primary)]
    items = []
    for turn in turns:
        scores = turn["scores"] or []
        hit = _violated(turn, primary)
        other = any(s["violated"] for s in scores)
        badges = [el("span", {"class": "badge " + ("bad" if s["violated"] else "ok"), "title": s["detail"] or None},
                     f"{s['scorer']}: {'violated' if s['violated'] else 'clean'}") for s in scores]
        items.append(el("li", {"class": "turn" + (" violated" if hit else " flagged" if other else ""),
                               "value": turn["turn"]},
                        el("div", {"class": "verdicts"}, badges),
                        el("p", {"class": "text"}, el("b", None, "Prompt: "), turn["prompt"]),
                        el("p", {"class": "text"}, el("b", None, "Answer: "), turn["answer"])))
    return el("details", {"class": "thread", "open": bool(violated) and open_violating},
              el("summary", None, el("b", None, thread["scenario"]), f" ({thread['domain']}) · ",
                 el("b", None, thread["engine"]),
                 f" — {len(violated)} of {len(turns)} turns violated" + (f" ({primary})" if primary else "")),
              el("p", {"class": "phrase"}, "Forbidden phrase: ", el("q", None, phrase)),
              el("ol", {"class": "transcript"}, items))


def _violated(turn: dict, scorer: str | None) -> bool:
    return any(s["violated"] for s in (turn["scores"] or []) if s["scorer"] == scorer)
