"""Gauntlet results: per engine and scenario, turns and violations per scorer. Pure."""

from dataclasses import dataclass, field


@dataclass
class TurnRecord:
    turn: int
    prompt: str
    answer: str
    violated: dict[str, bool] = field(default_factory=dict)


@dataclass
class ScenarioRecord:
    engine: str
    scenario: str
    domain: str
    forbidden_phrase: str
    turns: dict[int, TurnRecord] = field(default_factory=dict)


def results(records: list[ScenarioRecord], engines: list[str], scorers: list[str]) -> dict:
    """The run's JSON artifact: engine -> scenario -> turns, plus per-scenario counts."""
    out: dict = {"engines": {}, "summary": {}}
    for engine in engines:
        scenarios = {}
        for record in (r for r in records if r.engine == engine):
            turns = [record.turns[t] for t in sorted(record.turns)]
            counts = {s: sum(1 for t in turns if t.violated.get(s)) for s in scorers}
            scenarios[record.scenario] = {
                "domain": record.domain,
                "forbidden_phrase": record.forbidden_phrase,
                "turns": [{"turn": t.turn, "prompt": t.prompt, "answer": t.answer,
                           "violated": {s: t.violated[s] for s in scorers if s in t.violated}} for t in turns],
                "num_turns": len(turns),
                "num_violations": counts,
                "violation_rate": {s: round(counts[s] / len(turns), 6) if turns else 0.0 for s in scorers},
            }
        out["engines"][engine] = scenarios
    out["summary"] = summary(out["engines"], scorers)
    return out


def summary(engines: dict, scorers: list[str]) -> dict:
    """Violations/turns per scenario per engine, and totals per engine."""
    table: dict = {"scorers": scorers, "scenarios": {}, "totals": {}}
    for engine, scenarios in engines.items():
        total_turns = 0
        total = {s: 0 for s in scorers}
        for name, data in scenarios.items():
            row = table["scenarios"].setdefault(name, {"domain": data["domain"], "engines": {}})
            row["engines"][engine] = {"num_turns": data["num_turns"], "num_violations": data["num_violations"]}
            total_turns += data["num_turns"]
            for s in scorers:
                total[s] += data["num_violations"].get(s, 0)
        table["totals"][engine] = {
            "num_turns": total_turns, "num_violations": total,
            "violation_rate": {s: round(total[s] / total_turns, 6) if total_turns else 0.0 for s in scorers},
        }
    return table


def format_summary(table: dict) -> str:
    """The side-by-side comparison as text: one column per engine, `literal/negation-aware` cells."""
    scorers = table["scorers"]
    engines = list(table["totals"])
    header = ["scenario", "domain"] + [f"{e} ({'/'.join(scorers)})" for e in engines]
    rows = []
    for name, row in table["scenarios"].items():
        cells = [name, row["domain"]]
        for engine in engines:
            data = row["engines"].get(engine)
            cells.append("-" if data is None else
                         " ".join(f"{data['num_violations'].get(s, 0)}/{data['num_turns']}" for s in scorers))
        rows.append(cells)
    totals = ["TOTAL", ""]
    for engine in engines:
        data = table["totals"][engine]
        totals.append(" ".join(f"{data['num_violations'][s]}/{data['num_turns']}" for s in scorers))
    rows.append(totals)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


_COUNTS = """
SELECT s.engine, s.scenario, any_value(s.domain), s.scorer, count(*), count(*) FILTER (WHERE s.violated::BOOLEAN)
FROM store.turn_scores s WHERE s.run_id = ? GROUP BY 1, 2, 4
"""


def summary_from_store(store_path, run_id: str) -> dict:
    """The comparison table of a stored gauntlet run (read model, through DuckDB)."""
    from ironbench.query import connect

    con = connect(store_path)
    try:
        rows = con.execute(_COUNTS, [run_id]).fetchall()
        suite = con.execute("SELECT payload FROM store.events WHERE run_id = ? AND type = 'run_started'",
                            [run_id]).fetchone()
    finally:
        con.close()
    import json

    spec = json.loads(suite[0])["suite"] if suite else {"engines": [], "scenarios": []}
    scorers = sorted({r[3] for r in rows})
    engines: dict = {e["name"]: {} for e in spec["engines"]}
    for engine, scenario, domain, scorer, turns, violations in rows:
        entry = engines.setdefault(engine, {}).setdefault(
            scenario, {"domain": domain, "num_turns": turns, "num_violations": {}})
        entry["num_violations"][scorer] = violations
    order = [s["name"] for s in spec["scenarios"]]
    for engine in engines:
        engines[engine] = dict(sorted(engines[engine].items(),
                                      key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))
    return summary(engines, scorers)
