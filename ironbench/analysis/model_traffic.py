"""What a run's invocations asked of its model gateway (`--serve-model`, `--replay`): calls,
tokens and model seconds, for the run and per case. `show` says it in lines, the report
draws it as a section; both read it here.

Every attempt counts: an invocation a re-run superseded, or one past its group's decision
(surplus), made its calls too, and they were paid for.
"""

from dataclasses import dataclass
from pathlib import Path

from ironbench.analysis.query import run_sql
from ironbench.console.numbers import number
from ironbench.core.labels import natural_key

# The run's (grouping 1), then each case's. An invocation of a run that served no model has
# no model_calls (NULL); one that served a model and made no call has 0.
_TRAFFIC = """
SELECT grouping(case_id) AS whole, case_id, count(*) AS invocations, sum(model_calls) AS calls,
       min(model_calls) AS fewest, max(model_calls) AS most, sum(prompt_tokens) AS prompt_tokens,
       sum(completion_tokens) AS completion_tokens, coalesce(sum(model_seconds), 0) AS model_seconds
FROM (SELECT case_id, model_calls, prompt_tokens, completion_tokens, model_seconds FROM invocations
      UNION ALL SELECT case_id, model_calls, prompt_tokens, completion_tokens, model_seconds
      FROM superseded_invocations
      UNION ALL SELECT case_id, model_calls, prompt_tokens, completion_tokens, model_seconds
      FROM surplus_invocations)
WHERE model_calls IS NOT NULL
GROUP BY GROUPING SETS ((), (case_id)) HAVING count(*) > 0
ORDER BY whole DESC, case_id
"""


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def cost(prompt_tokens: int | None, completion_tokens: int | None, model_seconds: float | None) -> str:
    """Tokens (when the model reported them) and model time: `40 prompt + 12 completion tokens, 1.5 s of model time`."""
    tokens = (
        f"{prompt_tokens or 0:,} prompt + {completion_tokens or 0:,} completion tokens, "
        if prompt_tokens is not None or completion_tokens is not None
        else ""
    )
    return f"{tokens}{number(model_seconds or 0.0)} s of model time"


@dataclass(frozen=True, slots=True)
class Traffic:
    """What some invocations (a case's, or the whole run's) asked of the model."""

    case_id: str | None
    """The case (None: the whole run)."""
    invocations: int
    """Invocations that had the gateway, every attempt counted."""
    calls: int
    """Model calls they made."""
    fewest: int
    """The fewest calls one of them made."""
    most: int
    """The most calls one of them made."""
    prompt_tokens: int | None
    """Prompt tokens (None: no call's model reported them)."""
    completion_tokens: int | None
    """Completion tokens (None: no call's model reported them)."""
    model_seconds: float
    """The gateway's time answering them, waiting for the model included."""

    @property
    def mean(self) -> float:
        """Calls per invocation."""
        return self.calls / self.invocations

    @property
    def each(self) -> str:
        """Calls per invocation, the fewest to the most: `1–3` (`2`: every one made 2)."""
        return f"{self.fewest}" if self.fewest == self.most else f"{self.fewest}–{self.most}"

    def sentence(self) -> str:
        """All of it in one phrase: `12 model calls by 6 invocations (1–3 each), ...`."""
        return (
            f"{plural(self.calls, 'model call')} by {plural(self.invocations, 'invocation')} ({self.each} each), "
            f"{cost(self.prompt_tokens, self.completion_tokens, self.model_seconds)}"
        )


@dataclass(frozen=True, slots=True)
class ModelTraffic:
    """A run's model traffic: the whole run's, and each case's."""

    run: Traffic
    """The whole run."""
    cases: list[Traffic]
    """Each case, by id (humaneval_2 before humaneval_12)."""


def model_traffic(store_path: Path, run_id: str) -> ModelTraffic | None:
    """The run's model traffic; None when it served no model."""
    found = run_sql(store_path, _TRAFFIC, run_id)
    rows = [Traffic(*row[1:]) for row in found.rows]
    if not rows:
        return None
    return ModelTraffic(rows[0], sorted(rows[1:], key=lambda case: natural_key(case.case_id)))
