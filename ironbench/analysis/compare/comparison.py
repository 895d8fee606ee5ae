"""A comparison's values: each side's runs per case, the compared cases, the overall estimate,
the secondary shifts and the comparison itself (what `decide` returns, `prose` words and
`format`, JUnit and the report show)."""

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ironbench.core.kinds import CaseVerdict, FailOn, Gate, Unit, Verdict
from ironbench.stats import percentile, wilson_interval

POWER = 0.8  # the power every minimum detectable effect is computed and quoted at


@dataclass(frozen=True)
class Runs:
    """One side of one case: every evidence run's outcome label and attempts, in run order,
    plus the runs that are not evidence about the target."""

    outcomes: tuple[str, ...]  # "success", a failure stage, or "timeout"
    attempts: tuple[int, ...] = ()
    repairs: tuple[int, ...] = ()
    durations_ms: tuple[int, ...] = ()
    harness_errors: int = 0
    infra_errors: int = 0
    unresolved_infra: tuple[str, ...] = ()  # run slots with only infrastructure-errored attempts

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def successes(self) -> int:
        return self.outcomes.count("success")

    @property
    def timeouts(self) -> int:
        return self.outcomes.count("timeout")


Key = tuple[str, str]  # (case, variant), or (engine, scenario) in a gauntlet


@dataclass(frozen=True)
class Evidence:
    """What two runs hold, per case and variant: each side's runs, the runs' names, and what
    one of their runs is (an invocation, or a gauntlet conversation)."""

    a: dict[Key, Runs]
    b: dict[Key, Runs]
    run_a: str = "A"
    run_b: str = "B"
    unit: Unit = "run"

    @property
    def keys(self) -> list[Key]:
        """Every case either run holds, in order."""
        return sorted(set(self.a) | set(self.b))

    @property
    def common(self) -> list[Key]:
        """The cases both runs hold evidence for, in order."""
        return [k for k in self.keys if k in self.a and k in self.b and self.a[k].n and self.b[k].n]


@dataclass(frozen=True)
class Gating:
    """How a comparison gates: its one primary test (`gate`: overall or per case), what fails
    it (`fail_on`: a regression, or any change), at `alpha`, with an optional margin (a drop
    no larger than it is not a regression)."""

    alpha: float = 0.05
    gate: Gate = Gate.overall
    fail_on: FailOn = FailOn.regression
    margin: float | None = None


@dataclass(frozen=True)
class Side:
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    mean_attempts: float
    mean_repairs: float
    p95_duration_ms: float
    timeouts: int = 0
    harness_errors: int = 0
    infra_errors: int = 0
    outcomes: dict = field(default_factory=dict)

    @classmethod
    def of(cls, runs: Runs) -> "Side":
        low, high = wilson_interval(runs.successes, runs.n)
        mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
        return cls(
            runs.n,
            runs.successes,
            runs.successes / runs.n if runs.n else 0.0,
            low,
            high,
            mean(runs.attempts),
            mean(runs.repairs),
            percentile(list(runs.durations_ms), 95),
            runs.timeouts,
            runs.harness_errors,
            runs.infra_errors,
            dict(sorted(Counter(runs.outcomes).items())),
        )


@dataclass(frozen=True)
class CaseComparison:
    case_id: str
    variant_id: str
    a: Side | None
    b: Side | None
    delta: float | None = None
    delta_ci_95: tuple[float, float] | None = None
    p_regression: float | None = None
    p_improvement: float | None = None
    p_adjusted: float | None = None  # regression, Westfall-Young min-p over the compared cases
    flagged: bool = False
    mde: float | None = None  # smallest drop found with 80% power at alpha / cases
    can_be_flagged: bool = True
    verdict: CaseVerdict | Literal[""] = ""


@dataclass(frozen=True)
class Overall:
    delta: float
    delta_ci_95: tuple[float, float]
    delta_upper: float  # one-sided (1 − alpha) upper bound: what --margin reads
    p_regression: float
    p_improvement: float
    informative_cases: int
    cases: int
    mde: float | None  # smallest uniform drop the gate finds with 80% power
    mde_method: str = ""  # how: the simulated exact test, or the normal approximation (few or many cases)


@dataclass(frozen=True)
class Shift:
    """A secondary test: another way B may differ from A."""

    name: str
    a: str
    b: str
    effect: float
    direction: str
    p_value: float
    gating: bool  # a member of the --fail-on change family
    p_adjusted: float | None = None


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    alpha: float
    gate: Gate
    fail_on: FailOn
    margin: float | None
    cases: list[CaseComparison]
    overall: Overall
    shifts: list[Shift]
    verdict: Verdict
    failed: bool
    reason: str
    warnings: list[str]
    unit: Unit = "run"
    engines: list[str] = field(default_factory=list)  # gauntlet: one sentence per engine
    # adversarial: per generator, did sensitivity to rewording change (sensitivity.py); reported only
    sensitivity: list = field(default_factory=list)
    # what B costs against A where their calls were priced (cost.py's CostComparison); reported only
    cost: Any = None

    @property
    def regressed(self) -> bool:
        return self.verdict == "regression"

    @property
    def overall_p_regression(self) -> float:
        return self.overall.p_regression

    def to_dict(self) -> dict:
        return {**asdict(self), "cost": None if self.cost is None else self.cost.to_dict()}
