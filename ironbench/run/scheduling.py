"""Which runs to start now: the runs a group's next possible decision needs, together. Pure.

A group's decision reads its outcomes in run-index order, so it is taken on the
longest prefix of run indexes whose outcomes are known, however many ran at once.
Before that prefix can be decided, its decision rule must see at least `horizon`
runs: every run up to the horizon is needed whatever the outcomes, so they all start
together, and none past it starts (unless speculating), so no run lies past its
group's decision and any number of jobs runs the same invocations as one job.

The horizon is found by asking the rule itself (the pure decision function) about
hypothetical continuations of the prefix, so it follows any change to a rule: a
continuation is built from the behaviours seen so far, the ones the rule compares
with (a reference), and fresh successes and failures nobody has seen.
"""

import heapq
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Generic, TypeVar

from ironbench.core.outcome import Outcome
from ironbench.run.planner import Group, Track
from ironbench.run.stopping import StopDecision

Decide = Callable[[Sequence[Outcome]], StopDecision | None]  # a pure decision rule: None = not yet
T = TypeVar("T")

EXHAUSTIVE = 1296  # continuations tried one by one up to this many (6 behaviours, 4 runs)
TAIL = 3  # past that: any last TAIL runs after a run of one behaviour
MAX_BEHAVIOURS = 6


@dataclass(frozen=True, slots=True)
class Slots:
    """What one group needs now."""

    prefix: tuple[Outcome, ...]  # outcomes of runs 1..n, the runs a decision reads
    decision: StopDecision | None  # the rule's decision on the prefix, if it takes one
    horizon: int  # no decision is possible before this many runs
    needed: tuple[int, ...]  # run indexes to start now: not running, no outcome, <= horizon
    speculative: tuple[int, ...] = ()  # past the horizon: only with --speculate, only on idle capacity


def prefix_of(outcomes: Mapping[int, Outcome]) -> tuple[Outcome, ...]:
    """Outcomes of runs 1, 2, ... up to the first run without one."""
    found: list[Outcome] = []
    while len(found) + 1 in outcomes:
        found.append(outcomes[len(found) + 1])
    return tuple(found)


def _fresh(number: int, success: bool) -> Outcome:
    # attempts < 0: a behaviour no real run has, so it equals nothing seen
    return Outcome(success, None if success else "hypothetical", -number, 0)


def behaviours(prefix: Sequence[Outcome], known: Sequence[Outcome] = ()) -> list[Outcome]:
    """The outcomes a hypothetical continuation is made of: one per behaviour, the latest
    seen and the most common first, then what the rule compares with, then fresh ones."""
    by_signature: dict[tuple, Outcome] = {}
    counts: dict[tuple, int] = {}
    for outcome in prefix:
        counts[outcome.signature()] = counts.get(outcome.signature(), 0) + 1
    latest = list(dict.fromkeys(o.signature() for o in reversed(prefix[-TAIL:])))
    common = sorted(counts, key=lambda s: -counts[s])[:2]
    for signature in latest + common:
        by_signature.setdefault(signature, next(o for o in prefix if o.signature() == signature))
    for outcome in known:
        if len(by_signature) >= MAX_BEHAVIOURS - 2:
            break
        by_signature.setdefault(outcome.signature(), outcome)
    return list(by_signature.values())[: MAX_BEHAVIOURS - 2] + [_fresh(1, True), _fresh(1, False)]


def continuations(alphabet: Sequence[Outcome], k: int) -> Iterator[tuple[Outcome, ...]]:
    """Hypothetical next k runs: every sequence when there are few; otherwise a run of one
    behaviour followed by any TAIL runs (rules that look at the latest runs, or count),
    and k runs that all differ (rules that give up when nothing agrees)."""
    if len(alphabet) ** k <= EXHAUSTIVE:
        yield from product(alphabet, repeat=k)
    else:
        for head in alphabet:
            for tail in product(alphabet, repeat=TAIL):
                yield (head,) * (k - TAIL) + tail
    yield tuple(_fresh(i, False) for i in range(1, k + 1))
    yield tuple(_fresh(i, i % 2 == 0) for i in range(1, k + 1))


def horizon(
    decide: Decide, prefix: Sequence[Outcome], max_runs: int, known: Sequence[Outcome] = (), floor: int = 0
) -> int:
    """The fewest runs after which `decide` could take a decision, given the prefix:
    the smallest n > len(prefix) for which some continuation is decided at n. When no
    continuation within max_runs is, one more run (as a sequential run would).

    `floor`: the horizon found for a shorter prefix of the same group. This prefix is one
    of that prefix's continuations, so none of its own decides before the floor: the search
    starts there, and asking the rule costs O(1) per outcome, not O(runs x continuations)."""
    alphabet = behaviours(prefix, known)
    for n in range(max(len(prefix) + 1, floor), max_runs + 1):
        if any(decide([*prefix, *more]) is not None for more in continuations(alphabet, n - len(prefix))):
            return n
    return len(prefix) + 1


def schedule(
    decide: Decide,
    outcomes: Mapping[int, Outcome],
    running: Collection[int],
    max_runs: int,
    known: Sequence[Outcome] = (),
    speculate: bool = False,
    earliest: Callable[[Sequence[Outcome]], int] | None = None,
    undecided: int = 0,
    floor: int = 0,
) -> Slots:
    """What a group needs now, from the outcomes known by run index (runs whose attempt
    hit an infrastructure error have none: their slot runs again) and the runs still
    running.

    What an earlier call learnt is not asked again: `undecided`, the prefix lengths the
    rule was already asked about (and did not decide), and `floor`, the horizon found then.
    `earliest`, when the rule can say itself when it can next decide, replaces the search."""
    prefix = prefix_of(outcomes)
    for n in range(undecided + 1, len(prefix) + 1):
        # every length, as a sequential run would have asked: an outcome that arrived
        # early (speculation) never lets the rule skip the point where it decides
        decision = decide(prefix[:n])
        if decision is not None:
            return Slots(prefix[:n], decision, n, ())
    reach = earliest(prefix) if earliest is not None else horizon(decide, prefix, max_runs, known, floor)
    idle = [i for i in range(1, max(reach, max_runs) + 1) if i not in outcomes and i not in running]
    return Slots(
        prefix,
        None,
        reach,
        tuple(i for i in idle if i <= reach),
        tuple(i for i in idle if i > reach) if speculate else (),
    )


def surplus(outcomes: Mapping[int, object], decided_at: int) -> list[int]:
    """Runs that lie past their group's decision: started by speculation, never evidence."""
    return sorted(i for i in outcomes if i > decided_at)


def active_groups(track: Track, decisions: Mapping[str, str]) -> list[Group] | None:
    """The groups of a track that may run now; None once the track has nothing left to run.

    Variants depend only on the reference, so they run side by side once it is known;
    a stress ladder climbs one level at a time (a level's verdict decides whether the
    next runs at all, and a level is judged against level 0).
    """
    undecided = [g for g in track.groups if g.path not in decisions]
    if not undecided:
        return None
    if track.mode == "adversarial":
        reference = track.groups[0]
        return [reference] if reference.path not in decisions else undecided
    if track.mode == "stress":
        for group in track.groups:
            if group.path not in decisions:
                return [group]
            if track.stop_at_boundary and decisions[group.path] == "systematic_failure":
                return None
    return undecided[:1]


class Turns(Generic[T]):
    """Invocations waiting to start, per track, handed out least recently served track first,
    one at a time: `round_robin`'s picks, kept between calls. A track's queue is replaced only
    when the track is re-planned, and a pick costs log(tracks), so starting every invocation
    of a suite is linear in it. Lanes share the turns: lane 0 holds the runs decisions need,
    lane 1 the speculative ones started on idle capacity."""

    def __init__(self, tracks: int, lanes: int = 2) -> None:
        self.served = [0] * tracks  # when each track last started an invocation
        self.clock = 0
        self._queues: list[list[deque[T]]] = [[deque() for _ in range(tracks)] for _ in range(lanes)]
        # (served, track) entries; one whose served is out of date, or whose queue is empty,
        # is skipped when it comes up (cheaper than finding it in the heap)
        self._heaps: list[list[tuple[int, int]]] = [[] for _ in range(lanes)]

    def wait(self, track: int, *lanes: Sequence[T]) -> None:
        """Replace what `track` waits to start, lane by lane (after the track was re-planned)."""
        for lane, items in enumerate(lanes):
            self._queues[lane][track] = deque(items)
            if items:
                heapq.heappush(self._heaps[lane], (self.served[track], track))

    def waiting(self) -> bool:
        """Whether any invocation waits to start (in any lane)."""
        return any(queue for queues in self._queues for queue in queues)

    def take(self, lane: int, count: int) -> list[tuple[int, T]]:
        """Up to `count` (track, item) picks from `lane`, least recently served track first."""
        picks: list[tuple[int, T]] = []
        heap = self._heaps[lane]
        while heap and len(picks) < count:
            served, track = heapq.heappop(heap)
            queue = self._queues[lane][track]
            if served != self.served[track] or not queue:
                continue
            picks.append((track, queue.popleft()))
            self.clock += 1
            self.served[track] = self.clock
            for other, queues in enumerate(self._queues):  # its place in every lane moves back
                if queues[track]:
                    heapq.heappush(self._heaps[other], (self.clock, track))
        return picks


def round_robin(queues: Sequence[tuple[int, Sequence[T]]], count: int) -> list[tuple[int, T]]:
    """Up to `count` (queue position, item) picks from per-track queues, given as (when the
    track was last served, its items): the least recently served track first, one item at
    a time, so cases share the capacity (and one job runs them in turns, as it always did)."""
    turns: Turns[T] = Turns(len(queues), lanes=1)
    turns.served = [served for served, _ in queues]
    turns.clock = max(turns.served, default=0)
    for position, (_, items) in enumerate(queues):
        turns.wait(position, items)
    return turns.take(0, count)
