"""Runs within a group start together without changing a decision (ironbench/run/scheduling.py)."""

from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.outcome import Outcome
from ironbench.run.planner import Group, Track
from ironbench.run.scheduling import active_groups, horizon, prefix_of, schedule, surplus
from ironbench.run.stopping import (
    Reference,
    baseline_decision,
    baseline_horizon,
    confidence_decision,
    stress_level_decision,
    variant_decision,
)
from ironbench.suite.models import ConfidenceStop, FixedStop

SUCCESS = Outcome(True, None, 1, 0)
REPAIRED = Outcome(True, None, 2, 1)
GENERATION = Outcome(False, "generation", 1, 0)
VALIDATION = Outcome(False, "validation", 3, 2)
PALETTE = [SUCCESS, REPAIRED, GENERATION, VALIDATION]


def _rules():
    """(name, decide, max_runs, known): every decision rule the runner schedules."""
    baseline = st.integers(3, 10).map(lambda m: ("baseline", partial(baseline_decision, max_runs=m), m, ()))
    confidence = st.sampled_from([(0.8, 0.95, 30), (0.5, 0.9, 12)]).map(
        lambda r: ("confidence", lambda o, r=r: confidence_decision(o, *r), r[2], ())
    )
    stable_reference = st.sampled_from(PALETTE).map(lambda o: Reference.of([o], True))
    unstable_reference = st.lists(st.sampled_from(PALETTE), min_size=3, max_size=10).map(
        lambda outcomes: Reference.of(outcomes, False)
    )
    variant = st.one_of(stable_reference, unstable_reference).map(
        lambda ref: (
            "variant",
            lambda o, ref=ref: variant_decision(o, ref),
            4,
            tuple(Outcome(*s) for s in dict.fromkeys(ref.outcomes or (ref.signature,))),
        )
    )
    stress = st.integers(2, 5).map(lambda m: ("stress", lambda o, m=m: stress_level_decision(o, m), m, ()))
    return st.one_of(baseline, confidence, variant, stress)


def sequential(decide, world, infra):
    """--jobs 1: one run after another, each slot until an attempt without an infrastructure error."""
    outcomes: list[Outcome] = []
    attempts: list[tuple[int, int]] = []
    while True:
        index = len(outcomes) + 1
        attempt = 0
        while True:
            attempts.append((index, attempt))
            if (index, attempt) not in infra:
                break
            attempt += 1
        outcomes.append(world[(index - 1) % len(world)])
        decision = decide(outcomes)
        if decision is not None:
            return decision, sorted(attempts)


def parallel(decide, max_runs, known, world, infra, jobs, speculate, pick, cached=False):
    """--jobs N: the scheduler's choices, runs completing in the order `pick` chooses.
    `cached`: as the session calls it, passing on what the last call learnt of the rule."""
    outcomes: dict[int, Outcome] = {}
    running: dict[int, int] = {}  # run index -> attempt
    tries: dict[int, int] = {}
    attempts: list[tuple[int, int]] = []
    decision = None
    asked = (0, 0)
    while True:
        if decision is None:
            slots = schedule(decide, outcomes, running, max_runs, known, speculate, None, *asked)
            if cached:
                asked = (len(slots.prefix), slots.horizon)
            decision = slots.decision
            if decision is None:
                free = jobs - len(running)
                for index in [*slots.needed, *slots.speculative][:free]:
                    running[index] = tries.get(index, 0)
                    attempts.append((index, running[index]))
        if not running:
            assert decision is not None, "nothing running and nothing decided: the group would hang"
            return decision, sorted(attempts), surplus(outcomes, decision.n)
        index = pick(sorted(running))
        attempt = running.pop(index)
        tries[index] = attempt + 1
        if (index, attempt) not in infra and decision is None:
            outcomes[index] = world[(index - 1) % len(world)]


@settings(max_examples=300, deadline=None)
@given(
    rule=_rules(),
    world=st.lists(st.sampled_from(PALETTE), min_size=1, max_size=12),
    infra=st.sets(st.tuples(st.integers(1, 12), st.integers(0, 1)), max_size=4),
    jobs=st.integers(1, 12),
    cached=st.booleans(),
    data=st.data(),
)
def test_any_jobs_gives_the_decisions_and_invocations_of_one_job(rule, world, infra, jobs, cached, data):
    """Also when the scheduler is told what it learnt of the rule at its last call (as the
    session does: the rule is then asked O(1) times per outcome)."""
    _name, decide, max_runs, known = rule
    expected, expected_attempts = sequential(decide, world, infra)
    pick = lambda running: data.draw(st.sampled_from(running))
    decision, attempts, extra = parallel(decide, max_runs, known, world, infra, jobs, False, pick, cached)
    assert decision == expected
    assert attempts == expected_attempts  # the same invocations, none past the decision
    assert extra == []


@settings(max_examples=400, deadline=None)
@given(
    prefix=st.lists(st.sampled_from(PALETTE), max_size=14),
    rule=st.sampled_from(
        [
            None,
            FixedStop(rule="fixed", runs=5),
            FixedStop(rule="fixed", runs=20),
            ConfidenceStop(rule="confidence", reproduce=0.8, confidence=0.95, max_runs=30),
        ]
        + [ConfidenceStop(rule="confidence", reproduce=0.6, confidence=0.9, max_runs=12)]
    ),
    max_runs=st.integers(3, 15),
)
def test_baseline_rules_say_the_horizon_the_search_finds(prefix, rule, max_runs):
    decide = partial(baseline_decision, max_runs=max_runs, rule=rule)
    if any(decide(prefix[:n]) is not None for n in range(1, len(prefix) + 1)):
        return  # decided: no horizon is asked for
    cap = rule.max_runs if isinstance(rule, ConfidenceStop) else rule.runs if isinstance(rule, FixedStop) else max_runs
    assert baseline_horizon(prefix, max_runs, rule) == horizon(decide, prefix, cap)


@settings(max_examples=200, deadline=None)
@given(
    rule=_rules(),
    world=st.lists(st.sampled_from(PALETTE), min_size=1, max_size=12),
    jobs=st.integers(2, 12),
    data=st.data(),
)
def test_speculation_changes_no_decision_and_its_extra_runs_lie_past_it(rule, world, jobs, data):
    _name, decide, max_runs, known = rule
    expected, expected_attempts = sequential(decide, world, set())
    pick = lambda running: data.draw(st.sampled_from(running))
    decision, attempts, extra = parallel(decide, max_runs, known, world, set(), jobs, True, pick)
    assert decision == expected
    started = {index for index, _ in attempts}
    assert started >= {index for index, _ in expected_attempts}
    assert all(index > decision.n for index in started - {index for index, _ in expected_attempts})
    assert set(extra) <= started and all(index > decision.n for index in extra)


def test_the_runs_each_decision_needs_start_together():
    seed_rule = partial(baseline_decision, max_runs=10)
    assert schedule(seed_rule, {}, set(), 10).needed == (1, 2, 3)
    # two runs that differ: run 3 alone can decide nothing, run 4 might
    assert schedule(seed_rule, {1: SUCCESS, 2: GENERATION}, set(), 10).needed == (3, 4)
    assert schedule(seed_rule, {1: SUCCESS, 2: SUCCESS}, set(), 10).needed == (3,)
    # an outcome known out of order does not count until the runs before it are known
    slots = schedule(seed_rule, {1: SUCCESS, 3: SUCCESS}, {2}, 10)
    assert (slots.prefix, slots.needed) == ((SUCCESS,), ())
    assert schedule(seed_rule, {1: SUCCESS, 2: SUCCESS, 3: SUCCESS}, set(), 10).decision.decision == "stable"
    stress = lambda o: stress_level_decision(o, 5)
    assert schedule(stress, {}, set(), 5).needed == (1, 2, 3)
    assert schedule(stress, {1: SUCCESS, 2: SUCCESS, 3: GENERATION}, set(), 5).needed == (4, 5)
    stable = lambda o: variant_decision(o, Reference.of([SUCCESS], True))
    # the reference is what the rule compares with: a continuation may equal it
    assert schedule(stable, {}, set(), 4, known=[SUCCESS]).needed == (1,)
    assert schedule(stable, {1: GENERATION}, set(), 4, known=[SUCCESS]).needed == (2,)  # a repeat that agrees decides
    unstable = Reference.of([SUCCESS, GENERATION, SUCCESS], False)
    judged = lambda o: variant_decision(o, unstable)
    assert schedule(judged, {1: GENERATION}, set(), 4, known=[SUCCESS, GENERATION]).needed == (2, 3, 4)


def test_speculation_offers_the_rest_of_the_group():
    seed_rule = partial(baseline_decision, max_runs=6)
    slots = schedule(seed_rule, {}, {1}, 6, speculate=True)
    assert (slots.needed, slots.speculative) == ((2, 3), (4, 5, 6))


def test_the_horizon_follows_the_rule_it_is_given():
    # a rule that needs 7 runs before it can say anything
    late = lambda outcomes: "done" if len(outcomes) >= 7 else None
    assert horizon(late, (), 10) == 7
    # a rule deciding at the first success: one run at a time is all it allows
    on_success = lambda outcomes: "done" if outcomes[-1].success else None
    assert horizon(on_success, (GENERATION,), 10) == 2
    # the opt-in confidence rule: stable takes 16 agreeing runs of 16, but it gives up as
    # soon as two runs disagree with the rest (30 runs could then no longer be enough)
    confident = lambda o: confidence_decision(o, 0.8, 0.95, 30)
    assert horizon(confident, (), 30) == 3
    assert horizon(confident, (SUCCESS,) * 3, 30) == 5
    assert horizon(confident, (SUCCESS,) * 14 + (GENERATION,), 30) == 16


def test_prefix_and_surplus():
    assert prefix_of({1: SUCCESS, 2: GENERATION, 4: SUCCESS}) == (SUCCESS, GENERATION)
    assert surplus({1: SUCCESS, 2: SUCCESS, 3: SUCCESS, 5: SUCCESS}, 3) == [5]


def _group(mode, policy, variant, level=None):
    return Group(mode, policy, "c", variant, "x", 10, 4, f"{mode}/c/{variant}", level=level)


def test_variants_run_side_by_side_once_the_reference_is_known_and_a_ladder_climbs_in_order():
    reference, one, two = (
        _group("adversarial", "reference", "baseline"),
        _group("adversarial", "variant", "v1"),
        _group("adversarial", "variant", "v2"),
    )
    track = Track("adversarial", "c", "x", (reference, one, two))
    assert active_groups(track, {}) == [reference]
    assert active_groups(track, {reference.path: "reference"}) == [one, two]
    assert active_groups(track, {reference.path: "reference", one.path: "stochastic"}) == [two]
    assert active_groups(track, {g.path: "x" for g in track.groups}) is None
    levels = tuple(_group("stress", "stress_level", f"level_{i}", i) for i in range(3))
    ladder = Track("stress", "c", "x", levels, stop_at_boundary=True)
    assert active_groups(ladder, {}) == [levels[0]]
    assert active_groups(ladder, {levels[0].path: "systematic_success"}) == [levels[1]]
    assert active_groups(ladder, {levels[0].path: "systematic_success", levels[1].path: "systematic_failure"}) is None


def test_tracks_take_turns_least_recently_served_first():
    from ironbench.run.scheduling import round_robin

    queues = [(0, ["a1", "a2", "a3"]), (0, ["b1"]), (5, ["c1", "c2"])]
    assert round_robin(queues, 10) == [(0, "a1"), (1, "b1"), (2, "c1"), (0, "a2"), (2, "c2"), (0, "a3")]
    assert round_robin(queues, 2) == [(0, "a1"), (1, "b1")]
    # a track served long ago goes before one served just now
    assert round_robin([(9, ["x"]), (3, ["y"])], 1) == [(1, "y")]


def _round_robin_afresh(queues, count):
    """The picks as the loop made them before Turns: every track's queue gathered afresh."""
    import heapq

    heap = [(served, position, 0) for position, (served, items) in enumerate(queues) if items]
    heapq.heapify(heap)
    picks = []
    clock = max((served for served, _ in queues), default=0)
    while heap and len(picks) < count:
        _, position, taken = heapq.heappop(heap)
        picks.append((position, queues[position][1][taken]))
        clock += 1
        if taken + 1 < len(queues[position][1]):
            heapq.heappush(heap, (clock, position, taken + 1))
    return picks


@settings(max_examples=300, deadline=None)
@given(
    tracks=st.integers(1, 6),
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("wait"), st.integers(0, 5), st.integers(0, 3), st.integers(0, 2)),
            st.tuples(st.just("take"), st.integers(0, 1), st.integers(0, 4)),
        ),
        max_size=40,
    ),
)
def test_turns_kept_between_picks_pick_what_gathering_every_queue_afresh_picks(tracks, steps):
    from ironbench.run.scheduling import Turns

    turns = Turns(tracks)
    served = [0] * tracks
    queues = [[[] for _ in range(tracks)] for _ in range(2)]  # the model: lane -> track -> items
    made = 0
    for step in steps:
        if step[0] == "wait":
            _, track, needed, extra = step
            track %= tracks
            lanes = [[f"n{made + i}" for i in range(needed)], [f"x{made + i}" for i in range(extra)]]
            made += needed + extra
            turns.wait(track, *lanes)
            for lane in (0, 1):
                queues[lane][track] = list(lanes[lane])
        else:
            _, lane, count = step
            expected = _round_robin_afresh([(served[t], queues[lane][t]) for t in range(tracks)], count)
            assert turns.take(lane, count) == expected
            for track, item in expected:
                queues[lane][track].remove(item)
                served[track] = max(served) + 1
