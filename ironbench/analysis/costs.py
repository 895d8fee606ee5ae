"""What a stored run cost, read from the `costs` view beside its invocations: the run's and each
case's cost, per invocation, per success and per correct brick, and the share spent on
ironbench's own calls. `show`, the end of a run, the report, `compare` and `plan` read it here.

Sums are exact (the calls' decimal text summed as DECIMAL); every attempt's calls count (an
invocation whose backend failed, one past its group's decision: they were paid for), while
successes and correct bricks are the runs that count as evidence.
"""

from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ironbench.analysis.query import connect
from ironbench.core.labels import natural_key
from ironbench.core.prices import SUBJECT, usd
from ironbench.projections.costs import money


def counted(keys: str, scope: str) -> str:
    """The CTEs `runs` and `spent`, by `keys` (columns), over the store's tables for the runs
    `scope` selects (a condition on store.runs: `run_id = ?`, a suite's): every attempt recorded
    (those a re-run superseded and those past a decision too, they were paid for), the runs that
    are evidence, their successes and correct bricks (NULL: none was checked); the target's cost
    (exact), calls and unpriced calls. Only the scope's rows are read, however large the store."""
    return f"""
WITH scope AS (SELECT run_id FROM store.runs WHERE {scope}),
attempts AS (
    SELECT run_id, case_id, variant_id, infra_error, success::BOOLEAN AS success, correct::BOOLEAN AS correct
    FROM store.invocations WHERE run_id IN (SELECT run_id FROM scope)
    UNION ALL SELECT run_id, case_id, variant_id, 'superseded', false, NULL FROM store.superseded_invocations
    WHERE run_id IN (SELECT run_id FROM scope)
    UNION ALL SELECT run_id, case_id, variant_id, 'surplus', false, NULL FROM store.surplus_invocations
    WHERE run_id IN (SELECT run_id FROM scope)
), runs AS (
    SELECT {keys}, count(*) AS attempts, count(*) FILTER (WHERE infra_error IS NULL) AS runs,
           count(*) FILTER (WHERE infra_error IS NULL AND success) AS successes,
           CASE WHEN count(correct) > 0 THEN count(*) FILTER (WHERE infra_error IS NULL AND correct) END AS correct
    FROM attempts GROUP BY {keys}
), spent AS (
    SELECT {keys}, sum(cost::DECIMAL(38, 18)) AS usd, count(*) AS calls,
           count(*) FILTER (WHERE pricing = 'unpriced') AS unpriced
    FROM store.call_costs WHERE caller = 'target' AND run_id IN (SELECT run_id FROM scope) GROUP BY {keys}
)"""


# Per case and variant: its counts and the target's cost (a gauntlet's scenarios: `_scenarios`).
_VARIANTS = (
    counted("case_id, variant_id", "run_id = ?")
    + """
SELECT case_id, variant_id, coalesce(s.usd, 0), coalesce(s.calls, 0), coalesce(s.unpriced, 0), r.attempts, r.runs,
       r.successes, r.correct
FROM runs r LEFT JOIN spent s USING (case_id, variant_id)
"""
)
# The whole run by who called: the target, or ironbench itself (AI rewrites, the rewrite guard,
# gauntlet engines); how each was priced, and what priced it.
_CALLERS = """
SELECT caller, coalesce(sum(cost::DECIMAL(38, 18)), 0), count(*), count(*) FILTER (WHERE pricing = 'unpriced'),
       coalesce(sum(model_seconds) FILTER (WHERE pricing = 'local'), 0),
       string_agg(DISTINCT price_table, ', ' ORDER BY price_table)
FROM costs GROUP BY 1 ORDER BY 1
"""
_CONVERSATIONS = """
SELECT scenario, count(DISTINCT (engine, conversation, turn)),
       count(DISTINCT (engine, conversation, turn)) FILTER (WHERE scorer = 'negation_aware' AND NOT violated)
FROM turn_scores GROUP BY 1
"""


def _per(cost: Decimal | None, count: int | None) -> Decimal | None:
    return cost / count if cost is not None and count else None


@dataclass(frozen=True, slots=True)
class CaseCost:
    """One case's (or one variant's) model calls (a gauntlet's: one scenario's, every engine's):
    what they cost, beside its runs."""

    case_id: str
    variant_id: str | None
    """The variant (None: the whole case)."""
    usd: Decimal
    """What the target's calls cost (priced ones; every attempt's)."""
    calls: int
    unpriced: int
    """Calls no price counted: `usd` is a lower bound when there are any."""
    attempts: int
    """Invocations recorded, every attempt."""
    runs: int
    """Runs that are evidence."""
    successes: int
    correct: int | None
    """Correct bricks (None: no run of the case was checked)."""

    @classmethod
    def total(cls, case_id: str, parts: list["CaseCost"]) -> "CaseCost":
        """Several variants' (or cases') as one."""
        checked = [p.correct for p in parts if p.correct is not None]
        return cls(
            case_id,
            None,
            sum((p.usd for p in parts), Decimal(0)),
            sum(p.calls for p in parts),
            sum(p.unpriced for p in parts),
            sum(p.attempts for p in parts),
            sum(p.runs for p in parts),
            sum(p.successes for p in parts),
            sum(checked) if checked else None,
        )

    @property
    def known(self) -> Decimal | None:
        """What its calls cost as far as prices tell (None: none was priced; never 0 then)."""
        return None if self.calls and self.unpriced == self.calls else self.usd

    @property
    def per_invocation(self) -> Decimal | None:
        return _per(self.known, self.attempts)

    @property
    def per_success(self) -> Decimal | None:
        return _per(self.known, self.successes)

    @property
    def per_correct(self) -> Decimal | None:
        return _per(self.known, self.correct)

    def to_dict(self) -> dict[str, Any]:
        """As `show --format json` gives it (built by hand: a large run has thousands)."""
        return {
            "case_id": self.case_id,
            "variant_id": self.variant_id,
            "usd": money(self.known),
            "calls": self.calls,
            "unpriced": self.unpriced,
            "attempts": self.attempts,
            "runs": self.runs,
            "successes": self.successes,
            "correct": self.correct,
            "per_invocation": money(self.per_invocation),
            "per_success": money(self.per_success),
            "per_correct": money(self.per_correct),
        }


@dataclass(frozen=True, slots=True)
class CallerCost:
    """The calls of one caller in a run: the target, or one of ironbench's own."""

    caller: str
    usd: Decimal
    calls: int
    unpriced: int
    local_seconds: float
    priced_by: str | None
    """What priced them: the table and its version, suite, --price."""


@dataclass(frozen=True, slots=True)
class RunCost:
    """A run's cost: its variants' and cases' (the target's calls), and every caller's."""

    variants: list[CaseCost]
    callers: list[CallerCost]
    gauntlet: bool = False
    """A gauntlet's: its invocations are turns, a success a turn without a violation."""

    @property
    def cases(self) -> list[CaseCost]:
        """Each case's variants as one, by case id."""
        by_case: dict[str, list[CaseCost]] = {}
        for variant in self.variants:
            by_case.setdefault(variant.case_id, []).append(variant)
        return [CaseCost.total(case_id, parts) for case_id, parts in by_case.items()]

    @property
    def target(self) -> CaseCost:
        """The whole run's target calls, as one case."""
        return CaseCost.total("(all cases)", self.variants)

    @property
    def usd(self) -> Decimal:
        """Everything the run's calls cost, ironbench's own included."""
        return sum((c.usd for c in self.callers), Decimal(0))

    @property
    def own(self) -> Decimal:
        return sum((c.usd for c in self.callers if c.caller not in SUBJECT), Decimal(0))

    @property
    def own_share(self) -> Decimal | None:
        return self.own / self.usd if self.usd else None

    @property
    def unpriced(self) -> int:
        return sum(c.unpriced for c in self.callers)

    @property
    def calls(self) -> int:
        return sum(c.calls for c in self.callers)

    @property
    def priced_by(self) -> str:
        names = sorted({n for c in self.callers if c.priced_by for n in c.priced_by.split(", ")})
        return ", ".join(names) or "no price"

    def to_dict(self) -> dict[str, Any]:
        """As `show --format json` gives it."""
        return {
            "usd": None if self.unpriced == self.calls else money(self.usd),
            "calls": self.calls,
            "unpriced_calls": self.unpriced,
            "own_usd": money(self.own),
            "own_share": money(self.own_share),
            "priced_by": self.priced_by,
            "target": self.target.to_dict(),
            "callers": [{**asdict(c), "usd": money(c.usd)} for c in self.callers],
            "cases": [c.to_dict() for c in self.cases],
            "variants": [c.to_dict() for c in self.variants],
        }

    def header(self) -> str:
        """`show`'s cost line: the run's cost, the target's per invocation and per correct brick
        (per success where nothing is checked), and the share spent on ironbench's own calls."""
        target = self.target
        calls = f"{self.calls} model call{'s' if self.calls != 1 else ''}"
        if self.unpriced == self.calls:
            return f"unpriced ({calls}, no price for their models: give one with --price MODEL=IN/OUT)"
        unpriced = f" + {self.unpriced} unpriced call{'s' if self.unpriced != 1 else ''}" if self.unpriced else ""
        parts = [f"{usd(self.usd)}{unpriced} ({calls}; {self.priced_by})"]
        if target.attempts:
            parts.append(f"{usd(target.per_invocation)} per {self.unit}")
        parts.append(per_brick(target, self.gauntlet))
        if self.own:
            parts.append(f"ironbench's own calls {usd(self.own)} ({float(self.own_share or 0):.0%})")
        return ", ".join(parts)

    @property
    def unit(self) -> str:
        return "turn" if self.gauntlet else "invocation"

    def case_lines(self) -> list[dict]:
        """A verdict line per case with calls: its cost, per invocation and per correct brick."""
        return [
            {
                "case_id": c.case_id,
                "kind": "cost",
                "text": f"{usd(c.known)} by {c.attempts} {self.unit}{'s' if c.attempts != 1 else ''}"
                f" ({usd(c.per_invocation)} each), {per_brick(c, self.gauntlet)}"
                + (f"; {c.unpriced} call{'s' if c.unpriced != 1 else ''} unpriced" if c.unpriced else ""),
            }
            for c in self.cases
            if c.calls
        ]


def per_brick(cost: CaseCost, gauntlet: bool = False) -> str:
    """Cost per correct brick where the runs were checked, else per success (a gauntlet's: per
    turn without a violation); none: said so."""
    if cost.correct is not None:
        return f"{usd(cost.per_correct)} per correct brick" if cost.correct else "no correct brick"
    success = "turn without a violation" if gauntlet else "success"
    return f"{usd(cost.per_success)} per {success}" if cost.successes else f"no {success}"


def run_cost(store_path: Path, run_id: str, con: Any = None) -> RunCost | None:
    """The run's cost; None when none of its calls was priced (a run before prices, or without
    model calls). `con`: a connection made for this run (`connect(store_path, run_id)`) to read
    with, else one is opened and closed here."""
    if con is None:
        con = connect(store_path, run_id)
        try:
            return run_cost(store_path, run_id, con)
        finally:
            con.close()
    callers = [CallerCost(*row) for row in con.execute(_CALLERS).fetchall()]
    if not callers:
        return None
    gauntlet = con.execute("SELECT mode FROM runs").fetchone()[0] == "gauntlet"
    if gauntlet:
        variants = _scenarios(con)
    else:
        variants = [CaseCost(*row) for row in con.execute(_VARIANTS, [run_id]).fetchall()]
    variants.sort(key=lambda c: (natural_key(c.case_id), natural_key(c.variant_id or "")))
    return RunCost(variants, callers, gauntlet)


def _scenarios(con: Any) -> list[CaseCost]:
    """A gauntlet's scenarios as cases: every engine's calls in it, its turns as invocations, a
    turn without a (negation-aware) violation as a success."""
    spent = {
        row[0]: row[1:]
        for row in con.execute(
            "SELECT case_id, sum(cost::DECIMAL(38, 18)), count(*), count(*) FILTER (WHERE pricing = 'unpriced') "
            "FROM costs WHERE caller = 'engine' GROUP BY 1"
        ).fetchall()
    }
    cases = []
    for scenario, turns, clean in con.execute(_CONVERSATIONS).fetchall():
        cost, calls, unpriced = spent.get(scenario, (Decimal(0), 0, 0))
        cases.append(CaseCost(scenario, None, cost or Decimal(0), calls, unpriced, turns, turns, clean, None))
    return cases
