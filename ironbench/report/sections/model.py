"""Model traffic: what the target asked of the model the run served (`--serve-model`, a
recording with `--replay`), for the whole run and per case, every attempt counted."""

from ironbench.console import numbers
from ironbench.report.markup import Markup, el
from ironbench.report.records import ModelSection
from ironbench.report.widgets import Col, commands, left_out, number, section, table


def model(found: ModelSection) -> Markup:
    rows = [
        [
            case.case_id,
            (_count(case.invocations), case.invocations),
            (_count(case.calls), case.calls),
            (case.each, case.fewest),
            (number(case.mean), case.mean),
            (_count(case.prompt_tokens), case.prompt_tokens),
            (_count(case.completion_tokens), case.completion_tokens),
            (numbers.number(case.model_seconds), case.model_seconds),
        ]
        for case in found.cases
    ]
    columns = [
        Col("case"),
        Col("invocations", True, "every attempt: superseded and surplus ones too"),
        Col("calls", True),
        Col("per invocation", True, "the fewest and the most calls one invocation made"),
        Col("mean", True, "calls per invocation"),
        Col("prompt tokens", True, "as the model reported them (– : it reported none)"),
        Col("completion tokens", True),
        Col("model s", True, "the gateway's time answering, waiting for the model included"),
    ]
    return section(
        "model",
        "Model traffic",
        commands(
            "What the target asked of the model this run served, as the gateway recorded each call. Every "
            "attempt counts, those a re-run superseded and those past their case's decision too: they were "
            "paid for. Model seconds are the gateway's time answering, waiting for the model included. Each "
            "call, its messages and its answer are on its invocation's page in `ironbench view`, and in the "
            "view `model_calls` of `ironbench query`."
        ),
        el("p", None, el("b", None, "The run: "), found.run.sentence(), "."),
        table(columns, rows, filterable=len(rows) > 10),
        left_out(found.left_out, "cases"),
    )


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"
