"""The report's data: one SQL per section over the run's read models (DuckDB,
read-only), shaped into plain JSON-ready dicts. Rendering never touches the store.

Decision rows travel whole (`SELECT *`), so evidence columns a later revision adds
reach the page without a change here. A section a store has no rows for is left out.
"""

import json
from pathlib import Path

from ironbench.analysis.query import connect
from ironbench.run.preview import word_diff_ops
from ironbench.stats import wilson_interval

# Runs that say something about the target: harness faults and infrastructure
# errors are counted and shown, but never in a rate.
EVIDENCE = "harness_error IS NULL AND infra_error IS NULL"

# One character per invocation, so a case's whole sequence is one string from SQL.
CODE = """CASE
    WHEN harness_error IS NOT NULL THEN 'H'
    WHEN infra_error IS NOT NULL THEN 'I'
    WHEN timed_out OR failure_stage = 'timeout' THEN 'T'
    WHEN success AND repairs_triggered > 0 THEN 's'
    WHEN success THEN 'S'
    WHEN failure_stage = 'generation' THEN 'G'
    WHEN failure_stage = 'validation' THEN 'V'
    WHEN failure_stage = 'repair' THEN 'R'
    ELSE 'U' END"""

OUTCOME_NAMES = {
    "S": "success",
    "s": "success after repair",
    "G": "failed: generation",
    "V": "failed: validation",
    "R": "failed: repair",
    "U": "failed: unknown",
    "T": "failed: timeout",
    "H": "harness error (excluded)",
    "I": "infrastructure error (excluded)",
    "X": "infrastructure error, slot re-run (superseded, excluded)",
}
# Codes that are evidence about the target; the others are shown but never in a rate.
EVIDENCE_CODES = "SsGVRUT"

GROUP_PATH = "coalesce(nullif(group_path, ''), 'baseline/' || case_id)"

# The invocation columns CODE reads, typed as the views type them (for store.* tables).
TYPED = "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out) FROM store.invocations"

SQL = {
    "run": """
        SELECT r.*, e.started, e.aborted
        FROM runs r, (SELECT arg_min(payload, seq) FILTER (WHERE type = 'run_started') AS started,
                             arg_max(payload, seq) FILTER (WHERE type = 'run_aborted') AS aborted
                      FROM events WHERE type IN ('run_started', 'run_aborted')) e""",
    # Live attempts by outcome, and the attempts a re-run superseded (infrastructure errors).
    "outcomes": f"""
        SELECT coalesce(case_mode, mode) AS case_mode, {CODE} AS code, count(*) AS runs,
               quantile_cont(duration_ms, 0.5) AS p50_ms, quantile_cont(duration_ms, 0.95) AS p95_ms
        FROM invocations GROUP BY ALL
        UNION ALL
        SELECT coalesce(case_mode, mode), 'X', count(*), quantile_cont(duration_ms, 0.5),
               quantile_cont(duration_ms, 0.95)
        FROM superseded_invocations GROUP BY ALL""",
    "groups": f"""
        WITH superseded AS (SELECT {GROUP_PATH} AS group_path, count(*) AS superseded
                            FROM superseded_invocations GROUP BY 1)
        SELECT g.* EXCLUDE (first_seq), coalesce(s.superseded, 0) AS superseded
        FROM (SELECT {GROUP_PATH} AS group_path, coalesce(case_mode, mode) AS case_mode, case_id, variant_id,
                     any_value(generator) AS generator, any_value(level) AS level,
                     count(*) FILTER (WHERE {EVIDENCE}) AS n,
                     count(*) FILTER (WHERE {EVIDENCE} AND success) AS successes,
                     count(*) FILTER (WHERE {EVIDENCE} AND (timed_out OR failure_stage = 'timeout')) AS timeouts,
                     count(*) FILTER (WHERE NOT ({EVIDENCE})) AS excluded,
                     count(*) FILTER (WHERE infra_error IS NOT NULL) AS infra_errors,
                     string_agg({CODE}, '' ORDER BY run_index) AS codes,
                     avg(attempts) FILTER (WHERE {EVIDENCE}) AS mean_attempts,
                     avg(repairs_triggered) FILTER (WHERE {EVIDENCE}) AS mean_repairs,
                     round(quantile_cont(duration_ms, 0.95)) AS p95_ms, min(seq) AS first_seq
              FROM invocations GROUP BY ALL) g
        LEFT JOIN superseded s USING (group_path)
        ORDER BY g.first_seq""",
    # Which stored baseline group a reference came from is in the decision's event only.
    "decisions": f"""
        SELECT d.* REPLACE ({GROUP_PATH} AS group_path),
               json_extract_string(e.payload, '$.reference_group') AS reference_group,
               -- a baseline that never settled: variants are judged against all of its outcomes
               CASE WHEN e.seq IS NOT NULL THEN coalesce(json_array_length(e.payload, '$.reference_outcomes'), 0) > 0
                    END AS reference_unstable
        FROM decisions d
        LEFT JOIN (SELECT seq, payload FROM events WHERE type = 'decision_taken') e
               ON e.seq = d.seq AND d.decision = 'reference'
        ORDER BY d.seq""",
    # The outcomes of each stored baseline group a variant was judged against (another run's).
    "reference_runs": f"""
        WITH refs AS (SELECT DISTINCT d.reference_source AS run_id,
                             json_extract_string(e.payload, '$.reference_group') AS group_path
                      FROM decisions d JOIN (SELECT seq, payload FROM events WHERE type = 'decision_taken') e
                           ON e.seq = d.seq
                      WHERE d.decision = 'reference' AND d.reference_source <> 'this run')
        SELECT refs.run_id, refs.group_path, string_agg({CODE}, '' ORDER BY i.run_index) AS codes
        FROM refs JOIN ({TYPED}) i
             ON i.run_id = refs.run_id AND coalesce(nullif(i.group_path, ''), 'baseline/' || i.case_id) = refs.group_path
        GROUP BY ALL""",
    "attempts": f"""
        SELECT coalesce(case_mode, mode) AS case_mode, attempts,
               count(*) FILTER (WHERE success) AS successes, count(*) FILTER (WHERE NOT success) AS failures
        FROM invocations WHERE {EVIDENCE} GROUP BY ALL ORDER BY 1, 2""",
    "variants": """
        SELECT v.case_mode, v.case_id, v.generator, v.variant_id, v.instruction, v.seed, v.attempt, v.dropped,
               v.reason, json_extract_string(e.payload, '$.metadata.model') AS model
        FROM variants v
        LEFT JOIN (SELECT seq, payload FROM events WHERE type = 'variant_generated') e ON e.seq = v.seq
        ORDER BY v.seq""",
    "rejections": """
        SELECT case_id, generator, variant_id, attempt, model, ai_output, failure_reasons
        FROM rejections ORDER BY seq""",
    # The gauntlet's unit is the conversation: counts per conversation, then turns as description.
    "conversations": """
        SELECT engine, scenario, any_value(domain) AS domain, scorer, conversation, count(*) AS turns,
               count(*) FILTER (WHERE violated) AS violations
        FROM turn_scores GROUP BY engine, scenario, scorer, conversation""",
    "per_turn": """
        SELECT engine, scorer, turn, count(*) AS conversations, count(*) FILTER (WHERE violated) AS violations
        FROM turn_scores GROUP BY ALL ORDER BY engine, scorer, turn""",
    "transcripts": """
        SELECT t.engine, t.scenario, t.domain, t.conversation, t.turn, t.prompt, t.answer, t.duration_ms,
               list({'scorer': s.scorer, 'violated': s.violated, 'detail': s.detail} ORDER BY s.scorer)
                   FILTER (WHERE s.scorer IS NOT NULL) AS scores
        FROM turns t LEFT JOIN turn_scores s USING (engine, scenario, conversation, turn)
        GROUP BY ALL ORDER BY t.engine, t.scenario, t.conversation, t.turn""",
}


def _rows(con, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def query_sections(store_path: Path, run_id: str) -> dict[str, list[dict]]:
    """Every SQL above against one run (each view shows that run only)."""
    con = connect(store_path, run_id)
    try:
        return {name: _rows(con, sql) for name, sql in SQL.items()}
    finally:
        con.close()


def gather(store_path: Path, run_id: str, compare_base: str | None = None, alpha: float = 0.05) -> dict:
    """The whole page's data for `run_id` (and its comparison against `compare_base`)."""
    data = shape(query_sections(store_path, run_id))
    from ironbench.report.field import field_data  # (imports this module's names)

    data.update(field_data(store_path, run_id))
    if compare_base is not None:
        from ironbench.analysis.compare import compare_runs

        data["compare"] = comparison_section(compare_runs(store_path, compare_base, run_id, alpha))
    return data


# -- shaping (pure) -------------------------------------------------------------------


def _interval(successes: int, n: int) -> dict:
    low, high = wilson_interval(successes, n)
    return {"n": n, "successes": successes, "rate": successes / n if n else 0.0, "low": low, "high": high}


def shape(raw: dict[str, list[dict]]) -> dict:
    run = raw["run"][0]
    started = json.loads(run.pop("started") or "{}")
    aborted = json.loads(run.pop("aborted") or "null")
    suite = started.pop("suite", {}) or {}
    data: dict = {"run": _run_meta(run, started, aborted), "suite": suite}
    if raw["outcomes"]:
        order = {code: i for i, code in enumerate(OUTCOME_NAMES)}
        data["outcomes"] = sorted(raw["outcomes"], key=lambda r: (r["case_mode"], order.get(r["code"], 99)))
    decisions = {d["group_path"]: d for d in raw["decisions"]}
    cases = {c["id"]: c for c in suite.get("cases", [])}
    groups = []
    for group in raw["groups"]:
        group = {**group, **_interval(group["successes"], group["n"])}
        decision = decisions.get(group["group_path"])
        groups.append({**group, "decision": None if decision is None else _trim(decision, group)})
    by_mode: dict[str, list[dict]] = {}
    for group in groups:
        by_mode.setdefault(group["case_mode"], []).append(group)
    attempts = [a for a in raw["attempts"] if a["case_mode"] == "baseline"]
    if "baseline" in by_mode:
        data["baseline"] = _baseline(by_mode["baseline"], cases, attempts)
    adversarial_variants = [v for v in raw["variants"] if v["case_mode"] == "adversarial"]
    if "adversarial" in by_mode or adversarial_variants or raw["rejections"]:
        references = [
            _trim(d) for d in raw["decisions"] if d.get("case_mode") == "adversarial" and d["decision"] == "reference"
        ]
        stored = {(r["run_id"], r["group_path"]): r["codes"] for r in raw["reference_runs"]}
        data["adversarial"] = _adversarial(
            by_mode.get("adversarial", []), references, stored, cases, adversarial_variants, raw["rejections"]
        )
    stress_decisions = [_trim(d) for d in raw["decisions"] if d.get("case_mode") == "stress"]
    if "stress" in by_mode or stress_decisions:
        data["stress"] = _stress(
            by_mode.get("stress", []),
            stress_decisions,
            cases,
            [v for v in raw["variants"] if v["case_mode"] == "stress"],
        )
    if raw["conversations"] or raw["transcripts"]:
        data["gauntlet"] = _gauntlet(suite, raw["conversations"], raw["per_turn"], raw["transcripts"])
    return data


# Decision columns that are bookkeeping, or that its group already carries: left out
# of the page's data (the page is for reading; the store keeps everything).
_BOOKKEEPING = ("seq", "run_id", "suite_id", "mode", "timestamp_utc", "group_path", "case_mode")
_SAME_AS_GROUP = ("case_id", "variant_id", "generator", "level")
_COUNTS = ("n", "successes", "success_rate", "wilson_low", "wilson_high")


def _trim(decision: dict, group: dict | None = None) -> dict:
    drop = set(_BOOKKEEPING)
    if group is not None:
        drop.update(_SAME_AS_GROUP)
        if (decision["n"], decision["successes"]) == (group["n"], group["successes"]):
            drop.update(_COUNTS)
    return {k: v for k, v in decision.items() if k not in drop and v is not None}


def _run_meta(run: dict, started: dict, aborted: dict | None) -> dict:
    """The runs row plus everything run_started recorded (versions, platform, and any
    field a later ironbench adds); the recorded environment as a mapping."""
    meta = dict(run)
    for key, value in started.items():
        meta.setdefault(key, value)
    if isinstance(meta.get("environment"), str):
        try:
            meta["environment"] = json.loads(meta["environment"])
        except ValueError:
            pass  # shown as recorded
    if isinstance(meta.get("rules"), dict):  # the whole definition stays in the store; the page names it
        rules = meta.pop("rules")
        meta["outcome_rules"] = f"{rules.get('name')} ({rules.get('source')}, sha256 {str(rules.get('sha256'))[:12]})"
    if aborted:
        meta["abort_reason"] = aborted.get("reason")
    return meta


def _baseline(groups: list[dict], cases: dict, attempts: list[dict]) -> dict:
    rows = []
    for group in groups:
        case = cases.get(group["case_id"], {})
        shown = {k: v for k, v in group.items() if k not in ("group_path", "case_mode", "generator", "level")}
        rows.append({**shown, "instruction": case.get("instruction"), "planned": _planned(case, group)})
    return {"cases": rows, "attempts": attempts}


def _planned(case: dict, group: dict) -> int:
    """The most runs the case could take: its `runs`, or its confidence rule's cap."""
    stop = case.get("stop") or {}
    if stop.get("rule") == "confidence" and stop.get("max_runs"):
        return stop["max_runs"]
    if stop.get("rule") == "fixed" and stop.get("runs"):
        return stop["runs"]
    return case.get("runs") or len(group["codes"])


MATERIAL = ("stochastic", "structural")
DECIDED_VARIANT = ("not_material", "within_noise") + MATERIAL
_TALLIES = ("variants", "material", "structural", "stochastic", "within_noise")


def _adversarial(
    groups: list[dict], references: list[dict], stored: dict, cases: dict, variants: list[dict], rejections: list[dict]
) -> dict:
    by_variant = {(g["case_id"], g["variant_id"]): g for g in groups}
    reference_of = {d["case_id"]: d for d in references}
    out_cases: dict[str, dict] = {}
    for case_id in dict.fromkeys([v["case_id"] for v in variants] + [g["case_id"] for g in groups]):
        reference = reference_of.get(case_id)
        fresh = by_variant.get((case_id, "baseline"))
        codes = fresh["codes"] if fresh else None
        if reference and reference.get("reference_source") not in (None, "this run"):
            codes = stored.get((reference["reference_source"], reference.get("reference_group")))
        out_cases[case_id] = {
            "case_id": case_id,
            "instruction": cases.get(case_id, {}).get("instruction", ""),
            "reference": reference,
            "reference_codes": codes,
            "variants": [],
            "dropped": [],
        }
    for variant in variants:
        case = out_cases[variant["case_id"]]
        if variant["dropped"]:
            case["dropped"].append(variant)
            continue
        group = by_variant.get((variant["case_id"], variant["variant_id"]), {})
        shown = {k: variant[k] for k in ("generator", "variant_id", "instruction", "seed", "attempt", "model")}
        counts = {k: group.get(k, 0) for k in ("n", "successes", "timeouts", "excluded", "superseded")}
        case["variants"].append({**shown, "codes": group.get("codes", ""), **counts, "decision": group.get("decision")})
    cells: dict[tuple[str, str], dict] = {}
    for case in out_cases.values():
        for variant in case["variants"]:
            decision = variant["decision"] or {}
            if decision.get("decision") not in DECIDED_VARIANT:
                continue  # not decided yet: neither material nor not
            cell = cells.setdefault(
                (case["case_id"], variant["generator"]),
                {
                    "case_id": case["case_id"],
                    "generator": variant["generator"],
                    **dict.fromkeys(_TALLIES, 0),
                    "directions": {},
                },
            )
            cell["variants"] += 1
            if decision["decision"] in MATERIAL + ("within_noise",):
                cell[decision["decision"]] += 1
            if decision["decision"] in MATERIAL:
                cell["material"] += 1
                way = decision.get("direction") or "unknown"
                cell["directions"][way] = cell["directions"].get(way, 0) + 1
    generators: dict[str, dict] = {}
    for cell in cells.values():
        total = generators.setdefault(
            cell["generator"], {"generator": cell["generator"], **dict.fromkeys(_TALLIES, 0), "directions": {}}
        )
        for key in _TALLIES:
            total[key] += cell[key]
        for way, count in cell["directions"].items():
            total["directions"][way] = total["directions"].get(way, 0) + count
    for total in generators.values():
        total.update(
            {k: v for k, v in _interval(total["material"], total["variants"]).items() if k not in ("n", "successes")}
        )
    for row in rejections:
        row["failure_reasons"] = json.loads(row["failure_reasons"] or "[]")
    return {
        "cases": list(out_cases.values()),
        "cells": list(cells.values()),
        "generators": sorted(generators.values(), key=lambda g: (-g["rate"], g["generator"])),
        "excluded": _excluded(groups),
        "rejections": rejections,
    }


def _excluded(groups: list[dict]) -> dict:
    """Runs that are not evidence (harness faults, infrastructure errors, superseded
    attempts), and timeouts, which are evidence (a failure) but a category of their own."""
    return {k: sum(g.get(k, 0) for g in groups) for k in ("timeouts", "excluded", "infra_errors", "superseded")}


def _stress(groups: list[dict], decisions: list[dict], cases: dict, variants: list[dict]) -> dict:
    texts = {(v["case_id"], v["variant_id"]): v["instruction"] for v in variants if not v["dropped"]}
    ladders: dict[str, dict] = {}
    for group in groups:
        ladder = ladders.setdefault(group["case_id"], {"case_id": group["case_id"], "levels": [], "ladder": None})
        ladder["generator"] = ladder.get("generator") or group["generator"]
        level = {k: v for k, v in group.items() if k not in ("group_path", "case_mode", "case_id", "generator")}
        ladder["levels"].append({**level, "instruction": texts.get((group["case_id"], group["variant_id"]))})
    for decision in decisions:
        if decision["variant_id"] == "ladder":
            ladders.setdefault(
                decision["case_id"],
                {"case_id": decision["case_id"], "levels": [], "generator": decision.get("generator")},
            )["ladder"] = decision
    for case_id, ladder in ladders.items():
        case = cases.get(case_id, {})
        ladder["instruction"] = case.get("instruction", "")
        ladder["generator"] = ladder.get("generator") or case.get("ladder", {}).get("generator")
        additions = case.get("ladder", {}).get("additions")
        ladder["planned"] = len(additions) if isinstance(additions, list) else additions
        ladder["levels"].sort(key=lambda level: level["level"] if level["level"] is not None else -1)
        ladder.setdefault("ladder", None)
        verdict = ladder["ladder"] or {}
        # boundary, tentative, fails_at_base (level 0) or no_boundary; None while the ladder runs
        ladder["verdict"] = verdict.get("decision")
        ladder["verdict_level"] = verdict.get("level")
        ladder["boundary"] = verdict.get("level") if verdict.get("decision") == "boundary" else None
    return {"ladders": list(ladders.values()), "excluded": _excluded(groups)}


def _gauntlet(suite: dict, conversations: list[dict], per_turn: list[dict], transcripts: list[dict]) -> dict:
    """The run's gauntlet summary as `ironbench.projections.gauntlet_summary` makes it (conversations as
    the unit, every pair of engines compared), plus per-turn counts and the transcripts."""
    from ironbench.projections.gauntlet_summary import PRIMARY_SCORER, summary_from_counts

    table = summary_from_counts(
        [
            (c["engine"], c["scenario"], c["domain"], c["scorer"], c["conversation"], c["turns"], c["violations"])
            for c in conversations
        ],
        suite,
    )
    seen = {c["engine"] for c in conversations} | {t["engine"] for t in transcripts}
    engines = [e for e in table["totals"] if e in seen] + sorted(seen - set(table["totals"]))
    spec_scenarios = {s["name"]: s for s in suite.get("scenarios", [])}
    seen_scenarios = {c["scenario"] for c in conversations} | {t["scenario"] for t in transcripts}
    names = [n for n in spec_scenarios if n in seen_scenarios] + sorted(seen_scenarios - set(spec_scenarios))
    scenarios = [
        {
            "name": n,
            "domain": spec_scenarios.get(n, {}).get("domain", ""),
            "forbidden_phrase": spec_scenarios.get(n, {}).get("forbidden_phrase", ""),
        }
        for n in names
    ]
    scorers = sorted(table["scorers"], key=lambda s: (s != PRIMARY_SCORER, s))
    cells = []
    for name, row in table["scenarios"].items():
        for engine, counts in row["engines"].items():
            for scorer in scorers:
                cells.append(
                    {
                        "engine": engine,
                        "scenario": name,
                        "scorer": scorer,
                        "conversations": counts["num_conversations"],
                        "violated": counts["conversations_violated"].get(scorer, 0),
                        "turns": counts["num_turns"],
                        "turn_violations": counts["num_violations"].get(scorer, 0),
                    }
                )
    totals = []
    for engine in engines:
        total = table["totals"].get(engine)
        if not total or not total["num_conversations"]:
            continue
        scenarios_run = sum(1 for row in table["scenarios"].values() if engine in row["engines"])
        for scorer in scorers:
            violated = total["conversations_violated"].get(scorer, 0)
            interval = _interval(violated, total["num_conversations"])
            totals.append(
                {
                    "engine": engine,
                    "scorer": scorer,
                    "scenarios": scenarios_run,
                    "conversations": total["num_conversations"],
                    "violated": violated,
                    "rate": interval["rate"],
                    "low": interval["low"],
                    "high": interval["high"],
                    "turns": total["num_turns"],
                    "turn_violations": total["num_violations"].get(scorer, 0),
                }
            )
    threads: dict[tuple[str, str, int], dict] = {}
    for turn in transcripts:
        thread = threads.setdefault(
            (turn["engine"], turn["scenario"], turn["conversation"]),
            {
                "engine": turn["engine"],
                "scenario": turn["scenario"],
                "domain": turn["domain"],
                "conversation": turn["conversation"],
                "turns": [],
            },
        )
        thread["turns"].append({k: turn[k] for k in ("turn", "prompt", "answer", "duration_ms", "scores")})
    engine_order = {e: i for i, e in enumerate(engines)}
    scenario_order = {s["name"]: i for i, s in enumerate(scenarios)}
    ordered = sorted(
        threads.values(),
        key=lambda t: (scenario_order.get(t["scenario"], 1e9), t["conversation"], engine_order.get(t["engine"], 1e9)),
    )
    return {
        "unit": "conversation",
        "engines": engines,
        "scenarios": scenarios,
        "scorers": scorers,
        "cells": cells,
        "per_turn": per_turn,
        "totals": totals,
        "comparisons": {s: table["comparisons"].get(s, []) for s in scorers},
        "transcripts": ordered,
    }


# -- comparison ------------------------------------------------------------------------

_KNOWN_CASE = (
    "case_id",
    "variant_id",
    "a",
    "b",
    "p_regression",
    "p_improvement",
    "p_adjusted",
    "flagged",
    "mde",
    "can_be_flagged",
    "verdict",
)


def comparison_section(comparison) -> dict:
    """The compare page's data from `compare_runs()`'s result: the one place that knows
    its fields. Per case B − A with Newcombe's interval, overall the Mantel-Haenszel
    difference with its stratified interval, and the gate's own reason."""
    result = comparison.to_dict()
    cases = []
    for case in result["cases"]:
        row = {k: case.get(k) for k in _KNOWN_CASE}
        row["difference"] = case.get("delta")
        row["low"], row["high"] = case.get("delta_ci_95") or (None, None)
        cases.append(row)
    overall = result["overall"]
    return {
        "run_a": result["run_a"],
        "run_b": result["run_b"],
        "alpha": result["alpha"],
        "gate": result["gate"],
        "fail_on": result["fail_on"],
        "margin": result["margin"],
        "verdict": result["verdict"],
        "failed": result["failed"],
        "gate_reason": result["reason"],
        "warnings": result["warnings"],
        "unit": result["unit"],
        "engines": result["engines"],
        "informative_cases": overall["informative_cases"],
        "overall_p_regression": overall["p_regression"],
        "overall_p_improvement": overall["p_improvement"],
        "difference": overall["delta"],
        "low": overall["delta_ci_95"][0],
        "high": overall["delta_ci_95"][1],
        "mde": overall["mde"],
        "delta_upper": overall["delta_upper"],
        "shifts": result["shifts"],
        "cases": cases,
    }


# -- the embedded copy ------------------------------------------------------------------


def patch(base: str, text: str) -> list:
    """`text` as edits of `base`, word by word: a number n >= 0 keeps the next n characters
    of base, -n skips n of them, a string is added text. `apply_patch` undoes it."""
    ops: list = []
    for op, chunk in word_diff_ops(base, text):
        ops.append(len(chunk) if op == "equal" else -len(chunk) if op == "delete" else chunk)
    return ops


def apply_patch(base: str, ops: list) -> str:
    out, at = [], 0
    for op in ops:
        if isinstance(op, str):
            out.append(op)
        elif op >= 0:
            out.append(base[at : at + op])
            at += op
        else:
            at -= op
    return "".join(out)


# What a record's own counts (n, successes) determine: the embedded copy does not repeat
# them in a decision taken on those same counts.
FROM_COUNTS = ("success_rate", "wilson_low", "wilson_high", "success_lower_95", "success_upper_95", "chance_agreement")


def _lean(record: dict) -> dict:
    """A group as embedded: its decision without what the group's counts determine (a
    decision on other counts than its group's keeps its `n` and everything else)."""
    decision = record.get("decision")
    if not decision or "n" in decision:
        return record
    return {**record, "decision": {k: v for k, v in decision.items() if k not in FROM_COUNTS}}


def for_embedding(data: dict) -> dict:
    """The page's data as embedded in it, each text once: a case's instruction only in
    `suite.cases`, and each variant's and level's instruction as a patch of its base
    (adversarial) or of the level below (stress), `instruction_patch`, since most of a
    variant is its base again. Nothing is lost: `apply_patch` restores every text, a
    variant's generator is its id's first segment, and what a record's counts determine
    (rate, Wilson interval, one-sided bounds, chance agreement) follows from them."""
    out = dict(data)
    if "baseline" in data:
        out["baseline"] = {
            **data["baseline"],
            "cases": [
                _lean({k: v for k, v in case.items() if k != "instruction"}) for case in data["baseline"]["cases"]
            ],
        }
    if "adversarial" in data:
        cases = []
        for case in data["adversarial"]["cases"]:
            variants = []
            for variant in case["variants"]:
                named = (variant["variant_id"] or "").startswith(f"{variant['generator']}/")
                shown = {k: v for k, v in variant.items() if k != "instruction" and not (k == "generator" and named)}
                variants.append(
                    {**_lean(shown), "instruction_patch": patch(case["instruction"], variant["instruction"])}
                )
            cases.append({**{k: v for k, v in case.items() if k != "instruction"}, "variants": variants})
        out["adversarial"] = {**data["adversarial"], "cases": cases}
    if "stress" in data:
        ladders = []
        for ladder in data["stress"]["ladders"]:
            levels, below = [], ladder["instruction"]
            for level in ladder["levels"]:
                shown = _lean({k: v for k, v in level.items() if k != "instruction"})
                if level.get("instruction"):
                    shown["instruction_patch"] = patch(below, level["instruction"])
                    below = level["instruction"]
                levels.append(shown)
            ladders.append({**{k: v for k, v in ladder.items() if k != "instruction"}, "levels": levels})
        out["stress"] = {**data["stress"], "ladders": ladders}
    return out
