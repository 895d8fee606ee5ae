import math
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.errors import IronbenchError
from ironbench.core.outcome import UNKNOWN, Outcome
from ironbench.run.guards import Backoff, RunGuard, resume_command
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


# -- outages: backoff with jitter, a stop only after --max-outage ----------------------------


@given(st.floats(0.01, 10), st.floats(1, 600), st.integers(1, 80), st.floats(0, 0.999999))
def test_a_backoff_doubles_within_its_cap_and_jitters_in_its_upper_half(first, most, rounds, draw):
    backoff = Backoff(first, max(first, most))
    full = min(backoff.most, first * 2.0 ** (rounds - 1))
    delay = backoff.delay(rounds, draw)
    assert full / 2 <= delay <= full
    assert backoff.delay(rounds + 1, draw) >= delay  # never shorter for a longer outage


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def ride(down_for: float, max_outage: float = 300.0, seed: int = 0, retry_after: float | None = None):
    """One slot re-run against a backend down for `down_for` seconds (inf: for good): each
    attempt starts when the guard lets it and takes 1 s. (attempts, the stop or None, when)."""
    rng = random.Random(seed)
    clock = Clock()
    g = RunGuard("run_x", "ironbench resume run_x", Path("out"), None, max_outage, Backoff(), clock, rng.random)
    attempts = 0
    while True:
        clock.now += g.hold()
        started = clock.now
        clock.now += 1.0
        attempts += 1
        result = INFRA if started < down_for else OK
        stop = g.after("baseline/c run 1", "c", ["x"], *result, started, retry_after if result is INFRA else None)
        if stop is not None or result is OK:
            return attempts, stop, clock.now


@pytest.mark.parametrize("seed", range(20))
def test_an_outage_of_2_s_or_30_s_is_ridden_out_with_few_attempts(seed):
    attempts, stop, _ = ride(2.0, seed=seed)
    assert stop is None and attempts <= 3  # waits of 0.5..1 s, then 1..2 s
    attempts, stop, ended = ride(30.0, seed=seed)
    # Doubling waits: a few attempts, not one every second; back within a doubling of the outage.
    assert stop is None and attempts <= 7 and ended <= 30 + 32 + 1


@pytest.mark.parametrize("seed", range(20))
def test_a_backend_down_for_good_stops_the_run_once_max_outage_has_passed(seed):
    attempts, stop, ended = ride(math.inf, max_outage=300.0, seed=seed)
    assert stop is not None and stop.exit_code == 1
    assert 300 <= ended <= 300 + 60 + 1  # at most one capped wait (60 s) and one attempt past it
    assert attempts <= 7 + 300 // 30  # doubling up to the cap of 60 s, then at least 30 s apart
    message = str(stop)
    assert "the backend has failed for 5 min" in message and "more than the 5 min 0 s --max-outage allows" in message
    assert f"{attempts} infrastructure errors" in message and "ironbench resume run_x" in message


def test_a_retry_after_from_the_backend_is_waited_at_least():
    g = RunGuard("r", "resume", Path("out"), None, 300.0, Backoff(0.1, 0.1), Clock(), lambda: 0.5)
    g.after("g run 1", "c", ["x"], *INFRA, 0.0, 45.0)
    assert g.hold() == 45.0
    assert "nothing starts for 45 s" in (g.waiting() or "")


def test_errors_of_invocations_already_running_add_no_round_of_waiting():
    clock = Clock()
    g = RunGuard("r", "resume", Path("out"), None, 300.0, Backoff(1.0, 60.0), clock, lambda: 0.999999)
    clock.now = 10.0
    for _ in range(4):  # four jobs, all started before the backend failed
        g.after("g run 1", "c", ["x"], *INFRA, 5.0)
    assert g.outage is not None and g.outage.rounds == 1 and g.hold() == pytest.approx(1.0)
    clock.now = 12.0
    g.after("g run 1", "c", ["x"], *INFRA, 11.0)  # started after the wait: a second round
    assert g.outage.rounds == 2 and g.hold() == pytest.approx(2.0)
    g.after("g run 2", "c", ["x"], *OK, 11.5)  # the backend answers again: no more waiting
    assert g.outage is None and g.hold() == 0.0


@pytest.mark.parametrize("value", ["x", "1,2,3", "-1", "inf"])
def test_a_bad_backoff_setting_is_one_line_naming_it(monkeypatch, value):
    monkeypatch.setenv("IRONBENCH_BACKOFF", value)
    with pytest.raises(IronbenchError, match=r"IRONBENCH_BACKOFF=.*expected FIRST or FIRST,MOST"):
        Backoff.from_environ()
