from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.outcome import UNKNOWN, Outcome
from ironbench.run.guards import RunGuard, resume_command
from ironbench.targets.command import ProcessResult

OK = (ProcessResult(0, "", "", 5, False, None), Outcome(True, None, 1, 0))
INFRA = (ProcessResult(1, "", "", 5, False, None), Outcome(False, "infra_error", 0, 0, infra_error="[!] down"))
BLIND = (ProcessResult(2, "", "python: can't open file 'x.py'\n", 5, False, None), UNKNOWN)


def guard(max_infra_errors=3):
    return RunGuard("run_x", "ironbench resume run_x", Path("out/workdirs"), max_infra_errors)


def feed(g, results):
    return [g.after(f"baseline/c run {i}", "c", ["python", "x.py", "hi"], *r) for i, r in enumerate(results, 1)]


@given(st.lists(st.sampled_from(["ok", "infra"]), max_size=12), st.integers(1, 4))
def test_the_run_stops_exactly_at_the_nth_consecutive_infrastructure_error(kinds, n):
    stops = feed(guard(n), [OK if k == "ok" else INFRA for k in kinds])
    streak, expected = 0, None
    for index, kind in enumerate(kinds):
        streak = streak + 1 if kind == "infra" else 0
        if streak >= n:
            expected = index
            break
    first_stop = next((i for i, s in enumerate(stops) if s is not None), None)
    assert first_stop == expected
    if expected is not None:
        assert "ironbench resume run_x" in str(stops[expected]) and stops[expected].exit_code == 1


def test_three_blind_failures_first_mean_the_target_cannot_start():
    stops = feed(guard(), [BLIND, BLIND, BLIND])
    assert stops[:2] == [None, None]
    message = str(stops[2])
    assert "cannot start" in message and "exited with code 2" in message and "can't open file 'x.py'" in message
    assert "python x.py hi" in message and "ironbench log run_x c" in message


def test_a_target_that_worked_once_among_its_first_runs_is_never_called_broken():
    assert feed(guard(), [BLIND, OK, BLIND, BLIND, BLIND, BLIND]) == [None] * 6


def test_resume_command_names_a_non_default_out_and_store():
    assert resume_command("r", Path("outputs"), Path("outputs/ironbench.db")) == "ironbench resume r"
    assert resume_command("r", Path("/o"), Path("/s.db")) == "ironbench resume r --out /o --store /s.db"
