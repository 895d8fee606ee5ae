import json
import math
import sqlite3

import pytest

from ironbench.analysis.query import run_query
from ironbench.core.events import DecisionTaken, InvocationCompleted, VariantDropped, VariantGenerated
from ironbench.run.options import DEFAULT_OPTIONS, RunOptions
from ironbench.run.runner import start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET, fenced

INSTRUCTION = "Write a Python class implementing a simple cache with get, set and a maximum size."


def adversarial_suite(generators, instruction=INSTRUCTION):
    return parse_suite(
        {
            "suite_id": "adv",
            "mode": "adversarial",
            "target": SCRIPTED_TARGET,
            "timeout_seconds": 30,
            "cases": [{"id": "c", "instruction": instruction, "generators": generators}],
        },
        "adv.yaml",
    )


def stress_suite(ladder):
    return parse_suite(
        {
            "suite_id": "st",
            "mode": "stress",
            "target": SCRIPTED_TARGET,
            "timeout_seconds": 30,
            "cases": [{"id": "c", "instruction": INSTRUCTION, "ladder": ladder}],
        },
        "st.yaml",
    )


def recorded(paths, run_id, kind):
    with open_store(paths.store_path) as store:
        return [e for e in store.read(run_id) if isinstance(e.event, kind)]


def decisions(paths, run_id):
    return {e.event.group: e.event for e in recorded(paths, run_id, DecisionTaken)}


def test_variants_are_judged_against_a_fresh_reference_run(paths, script):
    script(
        {
            "c/baseline": ["success"],
            "c/punctuation_noise/variant_0001": ["success"],
            "c/punctuation_noise/variant_0002": ["generation", "success"],
            "c/punctuation_noise/variant_0003": ["generation", "validation", "generation", "repair"],
        }
    )
    run_id = start_run(adversarial_suite([{"generator": "punctuation_noise", "count": 3, "seed": 5}]), paths)
    found = decisions(paths, run_id)
    reference = found["adversarial/c/baseline"]
    assert reference.decision == "reference" and reference.reference_source == "this run"
    assert reference.reference == [True, None, 1, 0]
    assert found["adversarial/c/punctuation_noise/variant_0001"].decision == "not_material"
    assert found["adversarial/c/punctuation_noise/variant_0002"].decision == "stochastic"
    structural = found["adversarial/c/punctuation_noise/variant_0003"]
    assert (structural.decision, structural.n) == ("structural", 4)
    runs = [e.event for e in recorded(paths, run_id, InvocationCompleted)]
    assert max((r.variant_id, r.run_index) for r in runs) == ("punctuation_noise/variant_0003", 4)
    assert len(runs) == 1 + 1 + 2 + 4


def test_the_latest_stored_baseline_is_the_reference(paths, script):
    script({"c": ["validation"]})
    baseline = parse_suite(
        {
            "suite_id": "b",
            "mode": "baseline",
            "target": SCRIPTED_TARGET,
            "cases": [{"id": "c", "instruction": INSTRUCTION, "runs": 5}],
        },
        "b.yaml",
    )
    baseline_run = start_run(baseline, paths)
    script({"c/baseline": ["success"], "c": ["validation"]})
    run_id = start_run(adversarial_suite([{"generator": "whitespace_noise", "count": 2, "seed": 1}]), paths)
    reference = decisions(paths, run_id)["adversarial/c/baseline"]
    assert reference.reference_source == baseline_run
    assert reference.reference == [False, "validation", 4, 3]
    groups = {e.event.group for e in recorded(paths, run_id, InvocationCompleted)}
    assert "adversarial/c/baseline" not in groups  # no fresh reference run needed
    assert all(d.decision == "not_material" for g, d in decisions(paths, run_id).items() if "variant_" in g)


def test_variants_and_contract_drops_are_events_and_rows(paths, script):
    script({"c": ["success"]})
    suite = adversarial_suite(
        [
            {
                "generator": "synonym_substitution",
                "count": 3,
                "seed": 2,
                "max_replacements": 2,
                "synonyms": {"simple": ["benchmark-grade"], "cache": ["store"]},
                "whitelist": ["cache"],
            }
        ],
        instruction="Write a simple cache.",
    )
    run_id = start_run(suite, paths)
    generated = [e.event for e in recorded(paths, run_id, VariantGenerated)]
    dropped = [e.event for e in recorded(paths, run_id, VariantDropped)]
    assert generated and all("benchmark" not in v.instruction for v in generated)
    assert dropped and all("forbidden word 'benchmark'" in d.reason for d in dropped)
    with sqlite3.connect(paths.store_path) as conn:
        rows = conn.execute(
            "SELECT dropped, count(*) FROM variants WHERE run_id=? GROUP BY dropped", (run_id,)
        ).fetchall()
    assert dict(rows) == {0: len(generated), 1: len(dropped)}


def test_adversarial_tree_layout(paths, script):
    script({"c": ["success"]})
    run_id = start_run(adversarial_suite([{"generator": "whitespace_noise", "count": 2, "seed": 1}]), paths)
    folder = paths.out_dir / run_id / "adversarial" / "c" / "whitespace_noise"
    # the seed's layout: an aggregate per generator beside its variants
    assert sorted(p.name for p in folder.iterdir()) == ["aggregate.json", "variant_0001", "variant_0002"]
    generator = json.loads((folder / "aggregate.json").read_text())
    assert (generator["variant"], generator["total_runs"], generator["successes"]) == ("whitespace_noise", 2, 2)
    robustness = generator["robustness"]
    assert robustness["robust_pass"] is True and robustness["variants"] == 2
    assert robustness["worst_case_success_rate"] == 1.0 and robustness["robust_drop"] == 0.0
    assert robustness["flips_success_to_failure"] == {
        "count": 0,
        "n": 2,
        "rate": 0.0,
        "ci_95": [0.0, 0.65762],
    }  # Wilson: z²/(2 + z²)
    variant = folder / "variant_0001"
    assert sorted(p.name for p in variant.iterdir()) == ["aggregate.json", "run_001"]
    assert sorted(p.name for p in (variant / "run_001").iterdir()) == [
        "debug_ref.txt",
        "instruction.txt",
        "summary.json",
    ]
    aggregate = json.loads((variant / "aggregate.json").read_text())
    assert aggregate["variant"] == "whitespace_noise/variant_0001" and aggregate["generator"] == "whitespace_noise"
    assert aggregate["stop_decision"]["decision"] == "not_material"
    assert (variant / "run_001" / "instruction.txt").read_text().split() == INSTRUCTION.split()


def test_stress_ladder_stops_at_the_capability_boundary(paths, script):
    # c: 5 runs per level, level 3 fails every run; t: 3 runs per level, level 2 fails every run
    script(
        {
            "c/level_1": ["success"],
            "c/level_2": ["success", "generation", "success", "generation", "success"],
            "c/level_3": ["generation", "validation", "generation"],
            "c/level_4": ["success"],
            "t/level_2": ["generation"],
        }
    )
    suite = parse_suite(
        {
            "suite_id": "st",
            "mode": "stress",
            "target": SCRIPTED_TARGET,
            "timeout_seconds": 30,
            "cases": [
                {
                    "id": "c",
                    "instruction": INSTRUCTION,
                    "ladder": {"generator": "add_scope_detail", "additions": 4, "seed": 3},
                },
                {
                    "id": "t",
                    "instruction": INSTRUCTION,
                    "ladder": {"generator": "add_scope_detail", "additions": 3, "seed": 3, "runs_per_level": 3},
                },
            ],
        },
        "st.yaml",
    )
    run_id = start_run(suite, paths)
    found = decisions(paths, run_id)
    # level 0 is every level's reference: it runs all 5 runs, never stopping at 3/3
    assert (found["stress/c/level_0"].decision, found["stress/c/level_0"].n) == ("systematic_success", 5)
    assert (found["stress/c/level_1"].decision, found["stress/c/level_1"].n) == ("systematic_success", 3)
    assert (found["stress/c/level_2"].decision, found["stress/c/level_2"].n) == ("mixed", 5)
    # 0/3 against 5/5 gives p = 1/56 = 0.018 > 0.05/3: systematic, not yet worse, so level 3 runs on;
    # 0/4 gives p = 1/126 = 0.0079 <= 0.05/3: the verdict is reached, one run short of the cap
    level_3 = found["stress/c/level_3"]
    assert (level_3.decision, level_3.n, level_3.successes) == ("systematic_failure", 4, 0)
    assert math.isclose(level_3.p_value, 1 / 126) and "<= 0.05/3" in level_3.reason
    assert "stress/c/level_4" not in found  # stopped at the boundary
    boundary = found["stress/c"]
    assert (boundary.decision, boundary.level, boundary.n, boundary.successes) == ("boundary", 3, 4, 0)
    assert math.isclose(boundary.p_value, 1 / 126)
    assert round(boundary.success_upper_95, 2) == 0.53  # 0/4: the level succeeds at most 53% of the time
    for level in (0, 1, 2, 3):
        aggregate = json.loads(
            (paths.out_dir / run_id / "stress" / "c" / f"level_{level}" / "aggregate.json").read_text()
        )
        assert aggregate["level"] == level
    level_0 = paths.out_dir / run_id / "stress" / "c" / "level_0" / "run_001" / "instruction.txt"
    assert level_0.read_text() == INSTRUCTION  # the unchanged instruction
    ladder = json.loads((paths.out_dir / run_id / "stress" / "c" / "aggregate.json").read_text())
    assert (ladder["boundary_level"], ladder["ladder_decision"]) == (3, "boundary")
    assert [(lv["level"], lv["decision"]) for lv in ladder["levels"]] == [
        (0, "systematic_success"),
        (1, "systematic_success"),
        (2, "mixed"),
        (3, "systematic_failure"),
    ]

    # t: 0/3 against 3/3 is p = 0.05 > 0.05/2, and no 3 runs could do better: tentative, and it says so
    assert [(found[f"stress/t/level_{k}"].decision, found[f"stress/t/level_{k}"].n) for k in (0, 1, 2)] == [
        ("systematic_success", 3),
        ("systematic_success", 3),
        ("systematic_failure", 3),
    ]
    assert "stress/t/level_3" not in found
    tentative = found["stress/t"]
    assert (tentative.decision, tentative.level, tentative.successes) == ("tentative", 2, 0)
    assert math.isclose(tentative.p_value, 0.05) and round(tentative.success_upper_95, 2) == 0.63
    assert "with 3 runs no outcome could be (smallest p = 0.05)" in tentative.reason

    rows = run_query(paths.store_path, "stress_boundary", run_id=run_id)
    table = [dict(zip(rows.columns, r, strict=True)) for r in rows.rows]
    c = [r for r in table if r["case_id"] == "c"]
    assert [r["level"] for r in c] == [0, 1, 2, 3]
    assert [r["is_boundary"] for r in c] == [False, False, False, True]
    assert {r["ladder_decision"] for r in c} == {"boundary"} and c[3]["boundary_level"] == 3
    assert [round(r["success_upper_95"], 2) for r in c] == [1.0, 1.0, 0.92, 0.53]
    t = [r for r in table if r["case_id"] == "t"]
    assert [r["is_boundary"] for r in t] == [False, False, False]
    assert {r["ladder_decision"] for r in t} == {"tentative"} and t[2]["boundary_level"] == 2
    from ironbench.analysis.show import show_run

    _, shown, verdicts = show_run(paths.store_path, run_id)
    ladders = {r[0]: dict(zip(shown.columns, r, strict=True)) for r in shown.rows if r[1] == "ladder"}
    assert ladders["c"]["decision"].startswith("boundary at level 3, p=0.0079")
    assert ladders["t"]["decision"].startswith("tentative at level 2") and ladders["t"]["success_upper_95"] == 0.632
    texts = {v["case_id"]: v["text"] for v in verdicts}
    assert texts["c"].startswith("capability boundary at level 3: level 3 fails systematically and worse")
    assert texts["t"].startswith("tentative boundary at level 2:") and "no outcome could be" in texts["t"]


def test_a_ladder_whose_base_already_fails_names_no_boundary(paths, script):
    script({"c": ["generation"]})
    run_id = start_run(stress_suite({"generator": "add_scope_detail", "additions": 3, "seed": 3}), paths)
    found = decisions(paths, run_id)
    # level 0 never stops early: 3 failures of 3 could still become 3 of 5, not systematic
    assert (found["stress/c/level_0"].decision, found["stress/c/level_0"].n) == ("systematic_failure", 5)
    assert "stress/c/level_1" not in found  # nothing above a failing base is run
    verdict = found["stress/c"]
    assert (verdict.decision, verdict.level) == ("fails_at_base", 0)
    assert "unchanged instruction" in verdict.reason
    ladder = json.loads((paths.out_dir / run_id / "stress" / "c" / "aggregate.json").read_text())
    assert (ladder["boundary_level"], ladder["ladder_decision"]) == (0, "fails_at_base")


def test_stress_ladder_can_run_past_the_boundary(paths, script):
    script({"c": ["generation"]})
    ladder = {"generator": "add_ambiguity", "additions": 3, "seed": 3, "runs_per_level": 2, "stop_at_boundary": False}
    run_id = start_run(stress_suite(ladder), paths)
    found = decisions(paths, run_id)
    assert [found[f"stress/c/level_{k}"].n for k in (0, 1, 2, 3)] == [2, 2, 2, 2]
    assert (found["stress/c"].decision, found["stress/c"].level) == ("fails_at_base", 0)


def test_sensitivity_query(paths, script):
    script(
        {"c/baseline": ["success"], "c/whitespace_noise": ["success"], "c/constraint_injection_light": ["generation"]}
    )
    suite = adversarial_suite(
        [
            {"generator": "whitespace_noise", "count": 2, "seed": 1},
            {"generator": "constraint_injection_light", "count": 2, "seed": 1},
        ]
    )
    run_id = start_run(suite, paths)
    result = run_query(paths.store_path, "sensitivity_by_generator", run_id=run_id)
    rows = {r[2]: dict(zip(result.columns, r, strict=True)) for r in result.rows}
    assert rows["whitespace_noise"]["material_change_rate"] == 0
    assert rows["constraint_injection_light"]["material_change_rate"] == 1
    assert rows["constraint_injection_light"]["structural"] == 2


@pytest.mark.slow
def test_mixed_suite_runs_every_mode_and_is_deterministic_under_concurrency(tmp_path, script):
    from ironbench.run.runner import RunPaths

    script(
        {
            "b": ["success", "generation"] * 5,
            "a/baseline": ["success"],
            "a/whitespace_noise": ["generation"],
            "s": ["success", "success", "generation"],
        },
        sleep_ms=10,
    )
    suite = parse_suite(
        {
            "suite_id": "mix",
            "mode": "mixed",
            "target": SCRIPTED_TARGET,
            "cases": [
                {"id": "b", "mode": "baseline", "instruction": INSTRUCTION, "runs": 6},
                {
                    "id": "a",
                    "mode": "adversarial",
                    "instruction": INSTRUCTION,
                    "generators": [{"generator": "whitespace_noise", "count": 2}],
                },
                {
                    "id": "s",
                    "mode": "stress",
                    "instruction": INSTRUCTION,
                    "ladder": {"generator": "add_multi_objective", "additions": 2},
                },
            ],
        },
        "mix.yaml",
    )
    results = []
    for jobs in (1, 3):
        paths = RunPaths.resolve(tmp_path / f"j{jobs}", None)
        run_id = start_run(suite, paths, RunOptions(jobs=jobs))
        results.append(sorted((g, d.decision, d.n, d.successes) for g, d in decisions(paths, run_id).items()))
    assert results[0] == results[1]
    assert {g for g, *_ in results[0]} >= {"baseline/b", "adversarial/a/baseline", "stress/s"}


class _InterruptAfter:
    """A reporter that interrupts the run after n invocations, like Ctrl-C would."""

    def __init__(self, n):
        self.n = n

    def note(self, text):
        pass

    def started(self, *args):
        pass

    def decision(self, *args):
        pass

    def finished(self, *args):
        pass

    def invocation(self, *args):
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt


@pytest.mark.slow
def test_interrupted_adversarial_and_stress_runs_resume_to_the_same_decisions(tmp_path, script):
    import pytest

    from ironbench.core.errors import RunInterrupted
    from ironbench.run.runner import RunPaths, resume_run

    script(
        {
            "a/baseline": ["success"],
            "a/punctuation_noise": ["generation", "validation"],
            "s/level_1": ["success"],
            "s/level_2": ["generation"],
        }
    )
    suite = parse_suite(
        {
            "suite_id": "mix",
            "mode": "mixed",
            "target": SCRIPTED_TARGET,
            "cases": [
                {
                    "id": "a",
                    "mode": "adversarial",
                    "instruction": INSTRUCTION,
                    "generators": [{"generator": "punctuation_noise", "count": 3}],
                },
                {
                    "id": "s",
                    "mode": "stress",
                    "instruction": INSTRUCTION,
                    "ladder": {"generator": "add_scope_detail", "additions": 3},
                },
            ],
        },
        "mix.yaml",
    )
    reference = RunPaths.resolve(tmp_path / "reference", None)
    expected = sorted((g, d.decision, d.n) for g, d in decisions(reference, start_run(suite, reference)).items())

    paths = RunPaths.resolve(tmp_path / "interrupted", None)
    with pytest.raises(RunInterrupted):
        start_run(suite, paths, reporter=_InterruptAfter(6))
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
    assert resume_run(run_id, paths) == "finished"
    assert sorted((g, d.decision, d.n) for g, d in decisions(paths, run_id).items()) == expected
    keys = [e.event.key for e in recorded(paths, run_id, InvocationCompleted)]
    # Every group's decision counts its own runs; the ladder's boundary decision repeats a level's.
    assert len(keys) == len(set(keys)) == sum(n for group, _, n in expected if group != "stress/s")


def test_a_resumed_run_keeps_the_reference_it_started_with(paths, script):
    import pytest

    from ironbench.core.errors import RunInterrupted
    from ironbench.run.runner import resume_run

    baseline = parse_suite(
        {
            "suite_id": "b",
            "mode": "baseline",
            "target": SCRIPTED_TARGET,
            "cases": [{"id": "c", "instruction": INSTRUCTION, "runs": 3}],
        },
        "b.yaml",
    )
    script({"c": ["success"]})
    first_baseline = start_run(baseline, paths)
    with pytest.raises(RunInterrupted):
        start_run(
            adversarial_suite([{"generator": "whitespace_noise", "count": 3, "seed": 1}]),
            paths,
            reporter=_InterruptAfter(1),
        )
    script({"c": ["generation"]})
    start_run(baseline, paths)  # a newer baseline of the same instruction, behaving differently
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[1]
    script({"c": ["success"]})
    assert resume_run(run_id, paths) == "finished"
    found = decisions(paths, run_id)
    assert found["adversarial/c/baseline"].reference_source == first_baseline
    assert all(d.decision == "not_material" for g, d in found.items() if "variant_" in g)


UNSTABLE = ["success", "success", "generation"] * 3 + ["success"]  # 7/10, never 3 alike in a row


def _unstable_baseline_then_variants(paths, script, options=DEFAULT_OPTIONS):
    script({"c": UNSTABLE})
    baseline = parse_suite(
        {
            "suite_id": "b",
            "mode": "baseline",
            "target": SCRIPTED_TARGET,
            "cases": [{"id": "c", "instruction": INSTRUCTION, "runs": 10}],
        },
        "b.yaml",
    )
    start_run(baseline, paths)
    script(
        {
            "c/whitespace_noise/variant_0001": ["generation"],
            "c/whitespace_noise/variant_0002": ["validation"],
            "c/whitespace_noise/variant_0003": ["success"],
        }
    )
    return start_run(adversarial_suite([{"generator": "whitespace_noise", "count": 3, "seed": 1}]), paths, options)


def test_variants_are_judged_against_an_unstable_baselines_outcomes(paths, script):
    run_id = _unstable_baseline_then_variants(paths, script)
    found = decisions(paths, run_id)
    reference = found["adversarial/c/baseline"]
    assert reference.reference == [True, None, 1, 0] and len(reference.reference_outcomes) == 10
    # 0/4 where the baseline failed 3/10 the same way: its own noise explains it
    noise = found["adversarial/c/whitespace_noise/variant_0001"]
    assert (noise.decision, noise.n, noise.direction) == ("within_noise", 4, "success lost")
    assert round(noise.p_value, 3) == 0.070
    # a failure stage the baseline never showed, 4 times: beyond its noise
    new = found["adversarial/c/whitespace_noise/variant_0002"]
    assert (new.decision, new.direction) == ("structural", "success lost") and new.p_value <= 0.05
    assert found["adversarial/c/whitespace_noise/variant_0003"].decision == "not_material"
    aggregate = json.loads(
        (
            paths.out_dir / run_id / "adversarial" / "c" / "whitespace_noise" / "variant_0001" / "aggregate.json"
        ).read_text()
    )
    assert aggregate["stop_decision"]["direction"] == "success lost"
    assert len(aggregate["stop_decision"]["baseline_reference"]["outcomes"]) == 10
    rows = run_query(paths.store_path, "sensitivity_by_generator", run_id=run_id)
    row = dict(zip(rows.columns, rows.rows[0], strict=True))
    assert (row["variants"], row["within_noise"], row["structural"]) == (3, 1, 1)


def test_a_resumed_run_keeps_the_unstable_reference(paths, script):
    from concurrent.futures import ThreadPoolExecutor

    import pytest

    from ironbench.core.errors import RunInterrupted
    from ironbench.run.runner import resume_run

    class Interrupting(ThreadPoolExecutor):
        submitted = 0

        def submit(self, *args, **kwargs):
            Interrupting.submitted += 1
            if Interrupting.submitted == 3:  # variant 1 has run twice
                raise KeyboardInterrupt
            return super().submit(*args, **kwargs)

    with pytest.raises(RunInterrupted):
        _unstable_baseline_then_variants(paths, script, RunOptions(pool=lambda jobs: Interrupting(1)))
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[-1]
    assert resume_run(run_id, paths) == "finished"
    found = decisions(paths, run_id)
    # judged by the seed's single signature it would be `structural`
    assert found["adversarial/c/whitespace_noise/variant_0001"].decision == "within_noise"


def _baseline_suite(target=SCRIPTED_TARGET, **fields):
    return parse_suite(
        {
            "suite_id": "b",
            "mode": "baseline",
            "target": target,
            "cases": [{"id": "c", "instruction": INSTRUCTION, "runs": 3}],
            **fields,
        },
        "b.yaml",
    )


def test_a_baseline_of_another_target_is_never_the_reference(paths, script, tmp_path):
    import shutil
    import sys

    from tests.conftest import SCRIPTED

    other = tmp_path / "other_agent.py"
    shutil.copy(SCRIPTED, other)
    script({"c": ["validation"]})
    start_run(_baseline_suite([sys.executable, str(other), "{instruction}"]), paths)  # another target
    script({"c": ["success"]})
    run_id = start_run(adversarial_suite([{"generator": "whitespace_noise", "count": 2, "seed": 1}]), paths)
    found = decisions(paths, run_id)
    assert found["adversarial/c/baseline"].reference_source == "this run"
    assert all(d.decision == "not_material" for g, d in found.items() if "variant_" in g)


def test_the_reference_matches_the_recorded_environment_and_show_names_it(paths, script, monkeypatch):
    from ironbench.analysis.show import show_run

    script({"c": ["validation"]})
    monkeypatch.setenv("IRONBENCH_TEST_BACKEND", "http://one:11434")
    one = start_run(_baseline_suite(record_env=["IRONBENCH_TEST_BACKEND"]), paths)
    monkeypatch.setenv("IRONBENCH_TEST_BACKEND", "http://two:11434")
    two = start_run(_baseline_suite(record_env=["IRONBENCH_TEST_BACKEND"]), paths)
    script({"c": ["success"]})
    adversarial = parse_suite(
        {
            **adversarial_suite([{"generator": "whitespace_noise", "count": 1, "seed": 1}]).to_dict(),
            "record_env": ["IRONBENCH_TEST_BACKEND"],
        },
        "adv.yaml",
    )
    monkeypatch.setenv("IRONBENCH_TEST_BACKEND", "http://one:11434")
    run_id = start_run(adversarial, paths)
    reference = decisions(paths, run_id)["adversarial/c/baseline"]
    assert (reference.reference_source, reference.reference_group) == (one, "baseline/c")  # not the later `two`
    _, _, verdicts = show_run(paths.store_path, run_id)
    references = [v for v in verdicts if v["kind"] == "reference"]
    assert references == [
        {
            "case_id": "c",
            "kind": "reference",
            "source_run": one,
            "text": f"judged against baseline baseline/c of run {one} (stable; same instruction, "
            "target, version and environment)",
        }
    ]
    monkeypatch.setenv("IRONBENCH_TEST_BACKEND", "http://three:11434")
    fresh = start_run(adversarial, paths)
    assert decisions(paths, fresh)["adversarial/c/baseline"].reference_source == "this run"
    assert two != one


def test_a_baseline_made_mostly_of_infrastructure_errors_is_no_reference(paths, monkeypatch, tmp_path):
    from tests.core.test_ironclad_transcripts import REPLAY_TARGET

    sequence = tmp_path / "sequence"
    sequence.write_text("outage_during_generation\noutage_during_generation\nvalidation_exhausted\n" * 3)
    monkeypatch.setenv("REPLAY_SEQUENCE", str(sequence))
    options = RunOptions(sandbox=fenced(write=[sequence]))  # the target takes its transcripts from it
    flaky = start_run(_baseline_suite(REPLAY_TARGET), paths, options)
    assert decisions(paths, flaky)["baseline/c"].decision == "stable"  # 3 valid runs among 9 attempts
    run_id = start_run(
        adversarial_suite([{"generator": "whitespace_noise", "count": 1, "seed": 1}]).model_copy(
            update={"target": REPLAY_TARGET}
        ),
        paths,
        options,
    )
    assert decisions(paths, run_id)["adversarial/c/baseline"].reference_source == "this run"
