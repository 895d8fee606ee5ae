"""A stored run as it recorded itself: its first event, typed, through the store's one event read
path (`EventStore.read`), and the suite it ran as the typed Suite (`ironbench.suite.recorded`)."""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.errors import RunNotFound
from ironbench.core.events import CheckProven, FenceDenied, RecordedEvent, RunStarted, SandboxApplied
from ironbench.core.kinds import lowest_fence
from ironbench.sandbox import Denial
from ironbench.store import EventStore, open_read_only
from ironbench.suite import Suite, suite_of_run


def started_event(store: EventStore, run_id: str) -> RecordedEvent:
    """The run's RunStarted as the store holds it (its id, time and stream with it)."""
    first = next(store.read(run_id, types=("run_started",), limit=1), None)
    if first is None or not isinstance(first.event, RunStarted):
        raise RunNotFound(f"run {run_id!r} not found in {store.path}")
    return first


def run_started(store_path: Path, run_id: str) -> RecordedEvent:
    """`started_event` of a store on disk, opened read-only for the one read."""
    store = open_read_only(store_path)
    try:
        return started_event(store, run_id)
    finally:
        store.close()


def run_suite(store_path: Path, run_id: str) -> Suite:
    """The suite a stored run ran, typed (read once per run: `suite_of_run`)."""
    return suite_of_run(run_started(store_path, run_id))


MAX_DENIALS_SAID = 5  # a sentence names this many denials, then counts the rest


@dataclass(frozen=True)
class Withheld:
    """One thing the fence withheld in a run (a `Denial`), in how many invocations, and in how
    many of them it explains the failure."""

    denial: Denial
    invocations: int
    failures: int

    def to_dict(self) -> dict:
        return {
            **self.denial.to_dict(),
            "line": self.denial.line(),
            "invocations": self.invocations,
            "failures": self.failures,
        }


@dataclass(frozen=True)
class FenceSeen:
    """The fences a run's targets ran in: what it asked for and what each machine gave; and
    what they withheld (`withheld`, the most failures first) and how many failed invocations
    they caused (`caused`)."""

    mode: str | None  # auto | on | off; None: recorded before runs were fenced
    machines: tuple[SandboxApplied, ...]
    withheld: tuple[Withheld, ...] = ()
    caused: int = 0

    def denied_sentence(self) -> str | None:
        """What the fence withheld that failed invocations, each with its flag (None: nothing)."""
        failing = [w for w in self.withheld if w.failures]
        if not self.caused or not failing:
            return None
        said = [f"{w.denial.line()} in {w.failures}" for w in failing[:MAX_DENIALS_SAID]]
        more = f'; and {len(failing) - MAX_DENIALS_SAID} more (`ironbench query "SELECT * FROM fence_denials"`)'
        return (
            f"The fence caused {self.caused} failed invocation{'s' if self.caused != 1 else ''}: it withheld what "
            f"{'they' if self.caused != 1 else 'it'} needed: {'; '.join(said)}"
            + (more if len(failing) > MAX_DENIALS_SAID else "")
            + "."
        )

    def denied_evidence(self) -> str:
        """How each denial is known (the fence saw it, or the target's output shows it)."""
        seen = sorted({w.denial.seen for w in self.withheld if w.failures})
        return (
            "read from "
            + " and ".join("the target's output" if s == "output" else f"the fence's {s}" for s in seen)
            + "; a target's output is its own word: allow only what you mean it to have"
        )

    @property
    def level(self) -> str | None:
        """The lowest level any machine gave (None: no machine fenced a target yet)."""
        return lowest_fence(m.level for m in self.machines)

    @property
    def below_full(self) -> bool:
        """A target ran with less than every fence (a run recorded before fences counts too)."""
        return self.mode is None or (self.level is not None and self.level != "full")

    def sentence(self) -> str:
        """Why the run's verdicts may be weaker than they look, in one line."""
        if self.mode is None:
            return "Targets ran unfenced: the run was recorded before ironbench fenced its targets."
        if self.mode == "off":
            return "Targets ran unfenced (--sandbox off): a target could read the checks and the store."
        parts = [
            f"{m.worker}: {m.level}" + (f" (no {', '.join(m.missing)})" if m.missing else "") for m in self.machines
        ]
        return f"Targets ran below the full fence ({'; '.join(parts)}): a target may have reached what it should not."

    def short(self) -> str:
        """A word or two for a table: the level, or why there is none."""
        return self.level or ("unfenced" if self.mode in (None, "off") else "no target started")

    def evidence(self) -> str:
        """Each machine's mechanism and what it left open."""
        return "; ".join(f"{m.worker}: {m.mechanism}, level {m.level}" for m in self.machines) or "no machine recorded"


def fences_of(store: EventStore, run_id: str, denials: bool = True) -> FenceSeen:
    """What a run asked of its fence and what each machine gave (each machine's latest word);
    with `denials`, what the fence withheld (each invocation's latest attempt's)."""
    started = started_event(store, run_id).event
    assert isinstance(started, RunStarted)
    machines = {}
    latest: dict[str, FenceDenied] = {}
    for recorded in store.read(run_id, types=("sandbox_applied", "fence_denied") if denials else ("sandbox_applied",)):
        event = recorded.event
        if isinstance(event, SandboxApplied):
            machines[event.worker] = event
        elif isinstance(event, FenceDenied) and (event.key not in latest or latest[event.key].rerun <= event.rerun):
            latest[event.key] = event
    return FenceSeen(
        (started.sandbox or {}).get("mode"),
        tuple(machines.values()),
        withheld(latest.values()),
        sum(1 for event in latest.values() if event.caused),
    )


def withheld(recorded: Iterable[FenceDenied]) -> tuple[Withheld, ...]:
    """What the fence withheld over these invocations, the denials that explain the most
    failures first (each denial once: its flag, how many invocations, how many failures)."""
    counts: dict[tuple[str, str], list] = {}
    for event in recorded:
        for data in event.denials:
            denial = Denial.from_dict(data)
            found = counts.setdefault((denial.kind, denial.what), [denial, 0, 0])
            found[1] += 1
            if event.caused and denial.explains:
                found[2] += 1
                if not found[0].explains:
                    found[0] = denial
    kept = [Withheld(d, n, failures) for d, n, failures in counts.values()]
    return tuple(sorted(kept, key=lambda w: (-w.failures, -w.invocations, w.denial.what)))


def run_proofs(store_path: Path, run_id: str) -> list[CheckProven]:
    """Each check's latest proof on its reference in a run (`ironbench check` proves again)."""
    store = open_read_only(store_path)
    try:
        latest = {}
        for recorded in store.read(run_id, types=("check_proven",)):
            if isinstance(recorded.event, CheckProven):
                latest[recorded.event.check_sha256] = recorded.event
        return list(latest.values())
    finally:
        store.close()


def run_fences(store_path: Path, run_id: str) -> FenceSeen:
    """`fences_of` a store on disk, opened read-only for the read."""
    store = open_read_only(store_path)
    try:
        return fences_of(store, run_id)
    finally:
        store.close()
