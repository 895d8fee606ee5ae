"""A stored run as it recorded itself: its first event, typed, through the store's one event read
path (`EventStore.read`), and the suite it ran as the typed Suite (`ironbench.suite.recorded`)."""

from dataclasses import dataclass
from pathlib import Path

from ironbench.core.errors import RunNotFound
from ironbench.core.events import CheckProven, RecordedEvent, RunStarted, SandboxApplied
from ironbench.core.kinds import lowest_fence
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


@dataclass(frozen=True)
class FenceSeen:
    """The fences a run's targets ran in: what it asked for and what each machine gave."""

    mode: str | None  # auto | on | off; None: recorded before runs were fenced
    machines: tuple[SandboxApplied, ...]

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


def fences_of(store: EventStore, run_id: str) -> FenceSeen:
    """What a run asked of its fence and what each machine gave (each machine's latest word)."""
    started = started_event(store, run_id).event
    assert isinstance(started, RunStarted)
    machines = {}
    for recorded in store.read(run_id, types=("sandbox_applied",)):
        if isinstance(recorded.event, SandboxApplied):
            machines[recorded.event.worker] = recorded.event
    return FenceSeen((started.sandbox or {}).get("mode"), tuple(machines.values()))


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
