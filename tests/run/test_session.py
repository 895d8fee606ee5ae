"""Runs within a case overlap, decisions stay those of one job, speculation leaves surplus apart."""

import json
import sqlite3

import pytest

from ironbench.core.errors import RunInterrupted
from ironbench.core.events import DecisionTaken, InvocationCompleted, InvocationStarted
from ironbench.run.options import RunOptions
from ironbench.run.runner import RunPaths, start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET, cli, fenced, make_suite, write_suite
from tests.run.test_adversarial_stress import _InterruptAfter
from tests.run.test_runner import events_of

INSTRUCTION = "Write a Python function that adds two numbers and returns the sum."


def decisions(events):
    return {e.event.group: e.event for e in events if isinstance(e.event, DecisionTaken)}


def test_the_runs_a_decision_needs_start_together_and_no_more(paths, script):
    script({"c": ["success"]}, sleep_ms=200)
    run_id = start_run(make_suite({"c": 10}), paths, RunOptions(jobs=8))
    events = events_of(paths, run_id)
    kinds = [
        (type(e.event).__name__, e.event.run_index)
        for e in events
        if isinstance(e.event, (InvocationStarted, InvocationCompleted))
    ]
    # runs 1-3 start before any completes: the seed's rule cannot decide with fewer
    assert kinds[:3] == [("InvocationStarted", 1), ("InvocationStarted", 2), ("InvocationStarted", 3)]
    assert len(kinds) == 6 and decisions(events)["baseline/c"].n == 3


def test_variants_run_side_by_side_once_the_reference_is_known(paths, script):
    script({"c/baseline": ["success"], "c/whitespace_noise": ["success"]}, sleep_ms=100)
    suite = parse_suite(
        {
            "suite_id": "a",
            "mode": "adversarial",
            "target": SCRIPTED_TARGET,
            "cases": [
                {"id": "c", "instruction": INSTRUCTION, "generators": [{"generator": "whitespace_noise", "count": 4}]}
            ],
        },
        "a.yaml",
    )
    run_id = start_run(suite, paths, RunOptions(jobs=8))
    events = events_of(paths, run_id)
    order = [
        (type(e.event).__name__, e.event.variant_id)
        for e in events
        if isinstance(e.event, (InvocationStarted, InvocationCompleted))
    ]
    assert order[:2] == [("InvocationStarted", "baseline"), ("InvocationCompleted", "baseline")]
    assert [kind for kind, _ in order[2:6]] == ["InvocationStarted"] * 4
    assert {d.decision for g, d in decisions(events).items() if "variant_" in g} == {"not_material"}


def _mixed_suite():
    return parse_suite(
        {
            "suite_id": "mix",
            "mode": "mixed",
            "target": SCRIPTED_TARGET,
            "cases": [
                {"id": "b", "mode": "baseline", "instruction": INSTRUCTION, "runs": 8},
                {"id": "late", "mode": "baseline", "instruction": INSTRUCTION + " Twice.", "runs": 10},
                {
                    "id": "a",
                    "mode": "adversarial",
                    "instruction": INSTRUCTION + " Thrice.",
                    "generators": [{"generator": "whitespace_noise", "count": 3}],
                },
                {
                    "id": "s",
                    "mode": "stress",
                    "instruction": INSTRUCTION + " Again.",
                    "ladder": {"generator": "add_multi_objective", "additions": 2, "runs_per_level": 5},
                },
            ],
        },
        "mix.yaml",
    )


def _facts(paths, run_id):
    events = events_of(paths, run_id)
    found = sorted((g, d.decision, d.n, d.successes) for g, d in decisions(events).items())
    with sqlite3.connect(paths.store_path) as conn:
        evidence = conn.execute(
            "SELECT group_path, run_index, success, attempts FROM invocations WHERE run_id = ? ORDER BY 1, 2", (run_id,)
        ).fetchall()
        surplus = conn.execute(
            "SELECT group_path, run_index FROM surplus_invocations WHERE run_id = ? ORDER BY 1, 2", (run_id,)
        ).fetchall()
    return found, evidence, surplus


@pytest.mark.slow
def test_any_jobs_and_speculation_reach_the_decisions_of_one_job(tmp_path, script, monkeypatch):
    script(
        {
            "b": ["success", "generation"] * 4,
            "late": ["validation", "success_r1", "success", "success", "success"],
            "a/baseline": ["success"],
            "a/whitespace_noise/variant_0001": ["generation", "generation", "success"],
            "a/whitespace_noise/variant_0002": ["generation"],
            "s/level_1": ["success", "generation"],
            "s/level_2": ["generation"],
        },
        sleep_ms=30,
    )
    results = {}
    for name, options in {
        "one": RunOptions(jobs=1),
        "eight": RunOptions(jobs=8),
        "speculating": RunOptions(jobs=6, speculate=True),
    }.items():
        if options.speculate:
            # every group's first run is slow, so capacity idles while decisions wait: speculation starts
            monkeypatch.setenv("SCRIPTED_SLEEP_BY_RUN", json.dumps({"1": 800}))
        paths = RunPaths.resolve(tmp_path / name, None)
        results[name] = _facts(paths, start_run(_mixed_suite(), paths, options))
    assert results["one"][0] == results["eight"][0] == results["speculating"][0]
    # the same invocations; speculation's extra ones are kept apart, past their decisions
    assert results["one"][1] == results["eight"][1] == results["speculating"][1]
    assert results["one"][2] == results["eight"][2] == []
    decided = {g: n for g, _, n, _ in results["one"][0]}
    assert results["speculating"][2] and all(index > decided[g] for g, index in results["speculating"][2])


@pytest.mark.slow
def test_surplus_runs_are_kept_shown_and_counted_in_nothing(tmp_path, script, monkeypatch):
    # runs 1-3 agree (the decision); run 4 comes back before it, runs 5-8 after it
    script({"c": ["success"]})
    monkeypatch.setenv(
        "SCRIPTED_SLEEP_BY_RUN",
        json.dumps({"1": 1200, "2": 1200, "3": 1200, "4": 0, "5": 3000, "6": 3000, "7": 3000, "8": 3000}),
    )
    suite = make_suite({"c": 8})
    paths = RunPaths.resolve(tmp_path / "spec", None)
    run_id = start_run(suite, paths, RunOptions(jobs=8, speculate=True))
    events = events_of(paths, run_id)
    decision = decisions(events)["baseline/c"]
    assert (decision.decision, decision.n, decision.surplus_runs) == ("stable", 3, [4])
    completed = {e.event.run_index: e.event.surplus for e in events if isinstance(e.event, InvocationCompleted)}
    assert completed == {1: False, 2: False, 3: False, 4: False, 5: True, 6: True, 7: True, 8: True}
    with sqlite3.connect(paths.store_path) as conn:
        assert conn.execute("SELECT count(*) FROM invocations").fetchone()[0] == 3
        assert [r[0] for r in conn.execute("SELECT run_index FROM surplus_invocations ORDER BY 1")] == [4, 5, 6, 7, 8]
    group = paths.out_dir / run_id / "baseline" / "c"
    assert json.loads((group / "aggregate.json").read_text())["total_runs"] == 3
    assert json.loads((group / "run_004" / "summary.json").read_text())["surplus"] is True
    assert json.loads((group / "run_007" / "summary.json").read_text())["surplus"] is True
    assert "surplus" not in json.loads((group / "run_003" / "summary.json").read_text())
    out = ["--out", str(paths.out_dir)]
    shown = json.loads(cli("show", run_id, *out, "--format", "json", check=True).stdout)
    assert shown["invocations"] == 3 and shown["surplus"].startswith("5 runs past")
    assert shown["cases"][0]["runs"] == 3 and shown["cases"][0]["surplus"] == 5
    assert "surplus: past the decision" in cli("log", run_id, "c", "--run", "5", *out, check=True).stdout
    rates = json.loads(cli("query", "success_by_case.sql", *out, "-f", "json", check=True).stdout)
    assert [r["runs"] for r in rates] == [3]
    # a rebuilt tree says the same, from events alone
    before = (group / "run_004" / "summary.json").read_text()
    cli("project", run_id, "--rebuild", *out, check=True)
    assert (group / "run_004" / "summary.json").read_text() == before
    # compare sees 3 runs a side, as against a run without speculation
    monkeypatch.delenv("SCRIPTED_SLEEP_BY_RUN")
    plain = start_run(suite, paths, RunOptions(jobs=1))
    compared = json.loads(cli("compare", plain, run_id, *out, "--format", "json").stdout)
    assert [(c["a"]["n"], c["b"]["n"]) for c in compared["cases"]] == [(3, 3)]


def test_run_and_resume_take_speculate_and_scheduler_options(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"c": 3}))
    result = cli("run", str(suite), "--out", str(tmp_path / "out"), "--scheduler", "http://nowhere")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "expected tcp://HOST:PORT" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_an_interrupted_speculative_run_resumes_to_the_decisions_of_one_job(tmp_path, script):
    import pytest

    from ironbench.run.runner import resume_run

    script(
        {
            "b": ["success", "generation"] * 4,
            "late": ["validation", "success_r1", "success", "success", "success"],
            "a/baseline": ["success"],
            "a/whitespace_noise": ["generation", "success"],
            "s/level_1": ["success", "generation"],
            "s/level_2": ["generation"],
        },
        sleep_ms=30,
    )
    one = RunPaths.resolve(tmp_path / "one", None)
    expected = _facts(one, start_run(_mixed_suite(), one, RunOptions(jobs=1)))
    paths = RunPaths.resolve(tmp_path / "spec", None)
    with pytest.raises(RunInterrupted):
        start_run(_mixed_suite(), paths, RunOptions(jobs=6, speculate=True), reporter=_InterruptAfter(12))
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
    assert resume_run(run_id, paths, RunOptions(jobs=6)) == "finished"
    found, evidence, _extra = _facts(paths, run_id)
    assert (found, evidence) == expected[:2]
    assert events_of(paths, run_id)[0].event.speculate


def _story(paths, run_id):
    """What a run did, in the order it did it: every event but its ids and clock."""
    shown = []
    for e in events_of(paths, run_id):
        facts = {k: v for k, v in e.event.to_dict().items() if k not in ("duration_ms", "workdir", "debug_path")}
        text = json.dumps(facts).replace(str(paths.out_dir), "OUT").replace(run_id, "RUN")
        shown.append((e.stream, e.event.event, json.loads(text)))
    return shown


@pytest.mark.slow
def test_planning_only_the_track_whose_outcome_arrived_runs_what_planning_every_track_runs(
    tmp_path, script, monkeypatch
):
    from ironbench.run.session import Session

    script(
        {
            "b": ["success", "generation"] * 4,
            "late": ["validation", "outage_once", "success", "success", "success"],
            "a/baseline": ["generation", "success"],
            "a/whitespace_noise/variant_0001": ["success", "generation", "success"],
            "s/level_1": ["success", "generation"],
            "s/level_2": ["generation"],
        }
    )

    def options(name: str) -> RunOptions:
        state = tmp_path / f"{name} state"  # where the outage remembers it happened (written through the fence)
        state.mkdir()
        monkeypatch.setenv("SCRIPTED_STATE", str(state))
        return RunOptions(jobs=1, sandbox=fenced(write=[state]))

    incremental = RunPaths.resolve(tmp_path / "incremental", None)
    found = _story(incremental, start_run(_mixed_suite(), incremental, options("incremental")))
    plan = Session.plan

    def every_track(self):  # the loop as it was: every track planned after every outcome
        self._due.update(range(len(self.tracks)))
        return plan(self)

    monkeypatch.setattr(Session, "plan", every_track)
    reference = RunPaths.resolve(tmp_path / "every track", None)
    stories = {
        "incremental": found,
        "every track": _story(reference, start_run(_mixed_suite(), reference, options("every track"))),
    }
    assert stories["incremental"] == stories["every track"]
    streams = [stream for stream, kind, _ in stories["incremental"] if kind == "invocation_started"]
    # one job: the cases take turns, and a re-run slot (the outage) is started again
    assert streams[:4] == ["baseline/b/run_001", "baseline/late/run_001", "adversarial/a/baseline/run_001",
                           "stress/s/level_0/run_001"]  # fmt: skip
    assert streams.count("baseline/late/run_002") == 2
