"""A run's options: what `ironbench run` (or `resume`) was asked, one record handed down whole.

The command line builds a RunOptions once; `start_run` and `resume_run` hand it to the session,
and the session to every invocation, on local threads or on a Dask cluster's workers (so it is
frozen and picklable). What a run was started with is recorded in its RunStarted; a resumed run
runs with what it recorded there, and with the resume's own jobs, scheduler and limits
(`resumed`). An option is added here, where the command line sets it and where it is used.
"""

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from decimal import Decimal

from ironbench.core.events import RunStarted
from ironbench.core.prices import Rate
from ironbench.gateway import Serving
from ironbench.run.guards import MAX_OUTAGE_SECONDS
from ironbench.sandbox import SandboxPolicy

DEFAULT_DROP = 0.1  # a 10-point drop in success: what a release should not miss


@dataclass(frozen=True)
class Against:
    """What `run --against` asked for: the reference run and the design's error rates."""

    run: str
    """The stored run of the same suite the run is gated against (A)."""
    drop: float = DEFAULT_DROP
    """The drop in success the gate must find with `power` (--drop)."""
    alpha: float = 0.05
    """The chance of a false alarm (--alpha)."""
    power: float = 0.8
    """The chance to find a drop of `drop` (--power)."""

    def to_dict(self) -> dict:
        return {"run": self.run, "drop": self.drop, "alpha": self.alpha, "power": self.power}

    @classmethod
    def from_dict(cls, data: dict) -> "Against":
        return cls(str(data["run"]), float(data["drop"]), float(data["alpha"]), float(data["power"]))


@dataclass(frozen=True, slots=True)
class Limits:
    """When a run stops before its work is done (it is recorded as aborted; `resume` continues it)."""

    max_failures: int | None = None
    """Rejected AI outputs (AI generators' rewrites) after which the run stops (--max-failures); None: no limit."""
    max_infra_errors: int | None = None
    """Consecutive infrastructure errors after which the run also stops (--max-infra-errors); None: no limit,
    `max_outage` decides."""
    max_outage: float = MAX_OUTAGE_SECONDS
    """Seconds the target's backend may fail before the run stops (--max-outage); until then, after an
    infrastructure error nothing starts until a backoff has passed."""
    budget: Decimal | None = None
    """USD this start or resume may spend on model calls (--budget): a new run's cap on its recorded cost
    (None: the suite's `budget:`, if it sets one); a resume's cap is what the run had spent, and this. Once
    the recorded cost reaches the cap no invocation starts; the run stops (exit 3) and `resume` continues
    it. None on a resume: the cap the run last recorded."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run a suite: everything `ironbench run` takes besides the suite and where things go."""

    target: str | None = None
    """A registered target or a command line with {instruction} (--target); None: the suite's. A resumed
    run invokes the command it recorded."""
    rules: str | None = None
    """Outcome rules, a shipped name or a rules file (--rules); None: the suite's, else Ironclad's. A
    resumed run reads outputs with the rules it recorded."""
    jobs: int | None = None
    """Invocations run at once (--jobs); None: 1, or with a scheduler the cluster's worker threads."""
    scheduler: str | None = None
    """The Dask scheduler whose workers run the invocations (--scheduler, tcp://HOST:PORT); None:
    $IRONBENCH_SCHEDULER's, else this process's threads."""
    speculate: bool = False
    """Also start runs past a group's next possible decision on idle capacity (--speculate)."""
    label: str | None = None
    """What the person running it calls the run (--label), kept in its metadata."""
    redact: tuple[str, ...] = ()
    """Environment variables whose values are redacted besides the secret-looking ones (--redact); a
    resume adds to those the run was started with."""
    serve_model: Serving | None = None
    """The llm model that answers the target's model calls through the run's gateway, which records
    them (--serve-model); None: the suite's serve_model, if it names one."""
    replay_of: str | None = None
    """A run whose recorded model calls answer this run's instead, in order (--replay)."""
    against: Against | None = None
    """The sequential regression gate the run's cases run under (--against and its error rates)."""
    limits: Limits = field(default_factory=Limits)
    """When the run stops before its work is done."""
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    """The fence around every target and check (--sandbox, --allow-read, --allow-write, --allow-net,
    --pass-env, --memory; the suite's `sandbox:`); the run adds its answer key to what is hidden. A
    resumed run is fenced as it recorded."""
    prices: tuple[tuple[str, Rate], ...] = ()
    """Prices of models by id, USD per million tokens (--price MODEL=IN/OUT): over the suite's `prices:`
    and the price table. A resume adds to those the run was given."""
    pool: Callable[[int], Executor] | None = None
    """Makes the pool of local threads for `jobs` (a test's own executor); None: a ThreadPoolExecutor.
    Never used with a scheduler."""

    def resumed(self, started: RunStarted) -> "RunOptions":
        """A resumed run's options: these for where and how long it runs (jobs, scheduler, limits,
        pool) and for what more it redacts; the rest as the run recorded them when it started."""
        return replace(
            self,
            speculate=started.speculate,
            label=started.label,
            redact=(*started.redact, *self.redact),
            serve_model=Serving.from_dict(started.serve_model) if started.serve_model is not None else None,
            replay_of=started.replay_of,
            against=Against.from_dict(started.against) if started.against else None,
            sandbox=SandboxPolicy.from_dict(started.sandbox) if started.sandbox else self.sandbox,
        )


DEFAULT_OPTIONS = RunOptions()  # every option as `ironbench run` leaves it
