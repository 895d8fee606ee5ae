"""What a page lists of a run too large to list whole. Pure.

Every aggregate and verdict is drawn from the whole run; the rows of single groups (a case
and its run strip, a variant and its diff, a ladder's card, a compared case, a transcript)
are listed for all of them up to a size, and past it only for the groups that need a look
(failures, material differences, boundaries), with a note of what was left out and the
command that shows it. So a run of 100,000 invocations still gives a page of a few MB.
"""

from collections.abc import Callable, Sequence
from typing import Any

LISTED_CASES = 300  # baseline cases with a row and a run strip
LISTED_VARIANT_CASES = 40  # adversarial cases whose variants are listed
LISTED_HEATMAP_CASES = 150  # rows of the case x generator heatmap
LISTED_LADDERS = 40  # stress ladders drawn as a card
LISTED_COMPARED = 300  # compared cases with a row (a comparison page)
LISTED_FOREST = 150  # compared cases in the forest plot
LISTED_REJECTIONS = 200  # AI rewrites the harness rejected
LISTED_CONVERSATIONS = 200  # gauntlet transcripts

STABLE_CODES = "Ss"  # gather.CODE: a success, with or without repairs
EXCLUDED_CODES = "HIX"  # not evidence about the target


def listed(data: dict) -> dict:
    """The page's data with each long list cut to the groups that need a look, in their
    order; a cut list's section says so in `left_out` ({listed, of, which, see})."""
    run = data["run"]["run_id"]
    out = dict(data)
    if "baseline" in data:
        out["baseline"] = _baseline(data["baseline"], run)
    if "adversarial" in data:
        out["adversarial"] = _adversarial(data["adversarial"], run)
    if "stress" in data:
        out["stress"] = _stress(data["stress"], run)
    if "gauntlet" in data:
        out["gauntlet"] = _gauntlet(data["gauntlet"], run)
    if "compare" in data:
        out["compare"] = _compare(data["compare"])
    cut = [key for key in ("baseline", "adversarial", "stress") if "left_out" in out.get(key, {})]
    if cut:
        # the suite as recorded is embedded for the listed groups' instructions: those cases only
        kept = {c["case_id"] for key in ("baseline", "adversarial") for c in out.get(key, {}).get("cases", [])}
        kept |= {ladder["case_id"] for ladder in out.get("stress", {}).get("ladders", [])}
        cases = data["suite"].get("cases", [])
        out["suite"] = {
            **data["suite"],
            "cases": [c for c in cases if c.get("id") in kept],
            "left_out": _left_out(
                len(kept & {c.get("id") for c in cases}),
                len(cases),
                "the listed ones",
                "the run's run_started event (`ironbench query` over the events view, or `ironbench export`)",
            ),
        }
    return out


def most_needed(items: Sequence[dict], limit: int, need: Callable[[dict], Any]) -> list[dict]:
    """The `limit` items that need a look most (smallest `need`), in their own order."""
    if len(items) <= limit:
        return list(items)
    keep = sorted(sorted(range(len(items)), key=lambda i: need(items[i]))[:limit])
    return [items[i] for i in keep]


def _left_out(listed: int, total: int, which: str, see: str) -> dict:
    return {"listed": listed, "of": total, "which": which, "see": see}


def sentence(left_out: dict | None, noun: str) -> str:
    """`Lists 300 of 6,553 cases: ...; the rest: ...` (empty when nothing was left out)."""
    if not left_out:
        return ""
    return (
        f"This run is too large to list whole: this lists {left_out['listed']:,} of {left_out['of']:,} {noun}, "
        f"{left_out['which']}. Every figure above counts them all; the others' rows: {left_out['see']}."
    )


def _evidence(codes: str) -> str:
    return "".join(c for c in codes if c not in EXCLUDED_CODES)


def _baseline(section: dict, run: str) -> dict:
    cases = section["cases"]
    if len(cases) <= LISTED_CASES:
        return section
    ranks = {None: 0, "exhausted": 1}

    def need(case: dict) -> tuple:
        decision = (case["decision"] or {}).get("decision")
        runs = _evidence(case["codes"])
        settled_on_failure = decision == "stable" and runs[-1:] not in ("", *STABLE_CODES)
        failed = any(c not in STABLE_CODES for c in runs)
        return (ranks.get(decision, 4 if not failed else 3 if not settled_on_failure else 2), case["low"])

    kept = most_needed(cases, LISTED_CASES, need)
    return {
        **section,
        "cases": kept,
        "left_out": _left_out(
            len(kept),
            len(cases),
            "the undecided and the exhausted first, then those stable on a failure, then those with failed runs "
            "and the lowest success rates",
            f"`ironbench query stability.sql --run {run}` (every decision), `ironbench query success_by_case.sql "
            f"--run {run}` (every success rate), `ironbench log {run} CASE` (a case's runs)",
        ),
    }


MATERIAL = ("structural", "stochastic")


def _adversarial(section: dict, run: str) -> dict:
    out = dict(section)
    cases = section["cases"]
    if sum(len(c["variants"]) for c in cases) > LISTED_CASES or len(cases) > LISTED_VARIANT_CASES:

        def moved(case: dict) -> list[dict]:
            return [v for v in case["variants"] if (v["decision"] or {}).get("decision") != "not_material"]

        def need(case: dict) -> tuple:
            material = sum(1 for v in case["variants"] if (v["decision"] or {}).get("decision") in MATERIAL)
            return (-material, -len(moved(case)))

        kept = [c for c in most_needed(cases, LISTED_VARIANT_CASES, need) if moved(c) or c["dropped"]]
        out["cases"] = [{**c, "variants": moved(c), "not_listed": len(c["variants"]) - len(moved(c))} for c in kept]
        out["left_out"] = _left_out(
            len(kept),
            len(cases),
            "those with the most variants that changed the outcome, and of each only the variants that did "
            "(or are not decided yet)",
            f"`ironbench query sensitivity_by_generator.sql --run {run}` (every case and generator), "
            f"`ironbench log {run} CASE --variant VARIANT` (a variant's runs)",
        )
    case_ids = list(dict.fromkeys(c["case_id"] for c in section["cells"]))
    if len(case_ids) > LISTED_HEATMAP_CASES:
        share: dict[str, list[int]] = {}
        for cell in section["cells"]:
            tally = share.setdefault(cell["case_id"], [0, 0])
            tally[0] += cell["material"]
            tally[1] += cell["variants"]
        rows = most_needed(
            [{"case_id": c} for c in case_ids],
            LISTED_HEATMAP_CASES,
            lambda c: -share[c["case_id"]][0] / max(1, share[c["case_id"]][1]),
        )
        kept_ids = {r["case_id"] for r in rows}
        out["cells"] = [c for c in section["cells"] if c["case_id"] in kept_ids]
        out["heatmap_left_out"] = _left_out(
            len(kept_ids),
            len(case_ids),
            "the most sensitive",
            f"`ironbench query sensitivity_by_generator.sql --run {run}`",
        )
    if len(section["rejections"]) > LISTED_REJECTIONS:
        out["rejections"] = section["rejections"][:LISTED_REJECTIONS]
        out["rejections_left_out"] = _left_out(
            LISTED_REJECTIONS,
            len(section["rejections"]),
            "the first rejected",
            f"`ironbench query ai_acceptance.sql --run {run}`, and each slot's ai_generation_failure.json in the "
            "output tree",
        )
    return out


FLAGGED_LADDER = ("boundary", "tentative", "fails_at_base")


def _stress(section: dict, run: str) -> dict:
    ladders = section["ladders"]
    if len(ladders) <= LISTED_LADDERS:
        return section

    def need(ladder: dict) -> tuple:
        verdict = ladder["verdict"]
        return (0 if verdict is None else 1 if verdict in FLAGGED_LADDER else 2, ladder["case_id"])

    kept = most_needed(ladders, LISTED_LADDERS, need)
    return {
        **section,
        "ladders": kept,
        # every ladder's verdict, one line each: the section's aggregate
        "verdicts": [
            {
                "case_id": ladder["case_id"],
                "generator": ladder.get("generator"),
                "verdict": ladder["verdict"],
                "level": ladder["verdict_level"],
                "levels": len(ladder["levels"]),
                "runs": sum(level["n"] for level in ladder["levels"]),
            }
            for ladder in ladders
        ],
        "left_out": _left_out(
            len(kept),
            len(ladders),
            "the unfinished first, then those with a boundary, a tentative one or failing at base",
            f"`ironbench query stress_boundary.sql --run {run}` (every level), `ironbench log {run} CASE` (a "
            "ladder's runs)",
        ),
    }


def _gauntlet(section: dict, run: str) -> dict:
    threads = section["transcripts"]
    if len(threads) <= LISTED_CONVERSATIONS:
        return section

    def need(thread: dict) -> int:
        violated = any(score.get("violated") for turn in thread["turns"] for score in turn.get("scores") or ())
        return 0 if violated else 1

    kept = most_needed(threads, LISTED_CONVERSATIONS, need)
    return {
        **section,
        "transcripts": kept,
        "left_out": _left_out(
            len(kept),
            len(threads),
            "those with a violating turn first",
            f"`ironbench query violation_by_engine.sql --run {run}`, and the run's gauntlet/results.json in the "
            "output tree (every turn)",
        ),
    }


def _compared_need(case: dict) -> tuple:
    return (
        not case.get("flagged"),
        case.get("difference") is None,
        case.get("p_adjusted") if case.get("p_adjusted") is not None else 2.0,
        case.get("difference") or 0.0,
    )


def _compare(section: dict) -> dict:
    cases = section["cases"]
    if len(cases) <= LISTED_COMPARED:
        return section
    return {
        **section,
        "cases": most_needed(cases, LISTED_COMPARED, _compared_need),
        "left_out": _left_out(
            LISTED_COMPARED,
            len(cases),
            "the flagged first, then by adjusted p",
            f"`ironbench compare {section['run_a']} {section['run_b']} --format json` (every case)",
        ),
    }


def forest(cases: Sequence[dict]) -> list[dict]:
    """The compared cases a forest plot draws: all, or past a size the flagged first, then by adjusted p."""
    return most_needed([c for c in cases if c.get("difference") is not None], LISTED_FOREST, _compared_need)
