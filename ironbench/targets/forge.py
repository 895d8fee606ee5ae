"""forge: ironbench's built-in reference target, a single-string code generator on a
local model that honours Ironclad's printed contract and debug files.

    python -m ironbench.targets.forge "Write a Python function that ..."

It asks the model for JSON {filename, code, test}, runs pytest on it in its working
directory, repairs up to 3 times, and saves the brick to verified_bricks/. The model
is IRONBENCH_FORGE_MODEL (default: the embedded SmolLM2); sampling is seeded from
IRONBENCH_FORGE_SEED when set, else random, like any real model-driven system.
"""

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

MAX_REPAIRS = 3
PYTEST_TIMEOUT_S = 60
DEBUG_DIR = Path("build/.ironclad_debug")

# The model is asked for JSON in chat form, with two worked examples as earlier turns:
# a 135M model copies an example given inside the prompt text, but adapts one given
# as a previous exchange. A model that supports schemas (llm's `schema=`) is held to
# CANDIDATE_SCHEMA by constrained decoding, so its reply is always a parseable
# candidate and the run reaches validation; the string bounds make every reply close.
SYSTEM = "Reply with JSON: filename, code (Python source) and test (pytest tests importing it)."
EXAMPLES = (  # short: every token of them is read before each generation
    (
        "Write a Python function that returns the larger of two numbers.",
        {
            "filename": "larger.py",
            "code": "def larger(a, b):\n    return a if a > b else b\n",
            "test": "from larger import larger\n\n\ndef test_larger():\n    assert larger(2, 5) == 5\n",
        },
    ),
    (
        "Write a Python function that returns the first letter of a text.",
        {
            "filename": "first.py",
            "code": "def first(text):\n    return text[0]\n",
            "test": "from first import first\n\n\ndef test_first():\n    assert first('abc') == 'a'\n",
        },
    ),
)
MAX_FIELD_CHARS = 240
CANDIDATE_SCHEMA = {
    "type": "object",
    "properties": {
        "filename": {"type": "string", "minLength": 1, "maxLength": 40},
        "code": {"type": "string", "minLength": 1, "maxLength": MAX_FIELD_CHARS},
        "test": {"type": "string", "minLength": 1, "maxLength": MAX_FIELD_CHARS},
    },
    "required": ["filename", "code", "test"],
    "additionalProperties": False,
}
TEMPERATURE = 0.4  # low, as code generators run: a 135M model's code falls apart when sampled hotter
MAX_TOKENS = 768  # above the schema's longest reply, so a constrained reply always closes
# Asked for a repair, a 135M model often loops on blank lines inside a string until the
# schema's bound ends it (~15 s of a 2-core CPU per reply, most of a failing run's time).
# Four newlines in a row (three blank lines: more than PEP 8 ever puts in code) end a
# repair there; cut, it is not JSON, and the run ends as Ironclad's do on an invalid
# repair. First replies are never cut, so every run still reaches validation.
LOOP_STOP = "\\n" * 4
FAILURE_CHARS = 600
REPAIR = "The tests failed:\n{failure}\nReply with one corrected JSON object."


def failure_summary(output: str) -> str:
    """pytest's error lines and its closing summary: what a repair needs, in few tokens."""
    lines = output.splitlines()
    errors = [line for line in lines if line.startswith("E ")]
    summary = [line for line in lines[-3:] if line.strip()]
    return "\n".join(dict.fromkeys(errors + summary))[-FAILURE_CHARS:]


Messages = list[tuple[str, str]]  # (role, text)


def generate_messages(instruction: str) -> Messages:
    messages: Messages = [("system", SYSTEM)]
    for task, reply in EXAMPLES:
        messages += [("user", task), ("assistant", json.dumps(reply))]
    return messages + [("user", instruction)]


def repair_messages(instruction: str, candidate: dict, failure: str) -> Messages:
    return generate_messages(instruction) + [
        ("assistant", json.dumps(candidate)),
        ("user", REPAIR.format(failure=failure_summary(failure))),
    ]


def _debug(name: str, phase: str, message: str, raw: str, extra: str = "") -> None:
    if os.environ.get("IRONCLAD_DEBUG") != "1":
        return
    DEBUG_DIR.mkdir(parents=True, exist_ok=True)
    (DEBUG_DIR / name).write_text(f"Phase: {phase}\n{extra}Message: {message}\n\nRAW DATA:\n{raw}")


def parse_candidate(text: str) -> dict | None:
    """The first JSON object with string filename, code and test, or None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            data, _ = decoder.raw_decode(text, start)  # braces inside strings are the decoder's business
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and all(
            isinstance(data.get(k), str) and data[k].strip() for k in ("filename", "code", "test")
        ):
            return data
        start = text.find("{", start + 1)
    return None


def module_name(filename: str) -> str:
    stem = Path(filename).name.removesuffix(".py")
    name = re.sub(r"\W", "_", stem).strip("_") or "brick"
    return name if not name[0].isdigit() else f"m_{name}"


def validate(candidate: dict, attempt: int) -> tuple[bool, str]:
    name = module_name(candidate["filename"])
    folder = Path("build") / f"attempt_{attempt}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(candidate["code"])
    (folder / f"test_{name}.py").write_text(candidate["test"])
    try:
        # The brick's tests alone: no third-party pytest plugin from this environment
        # (loading them costs more than the tests themselves).
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", folder.name],
            cwd=folder.parent,
            capture_output=True,
            text=True,
            timeout=PYTEST_TIMEOUT_S,
            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
            check=False,
        )
    except subprocess.TimeoutExpired:
        output = f"pytest timed out after {PYTEST_TIMEOUT_S} s"
        _debug(
            f"validate_{name}_attempt{attempt}.txt",
            "validate",
            "Validation failed",
            output,
            f"Component: {name}.py\nAttempt: {attempt}\n",
        )
        return False, output
    output = result.stdout + result.stderr
    _debug(
        f"validate_{name}_attempt{attempt}.txt",
        "validate",
        "Validation passed" if result.returncode == 0 else "Validation failed",
        output,
        f"Component: {name}.py\nAttempt: {attempt}\n",
    )
    return result.returncode == 0, output


class Model:
    def __init__(self) -> None:
        import llm

        from ironbench.llms import EMBEDDED_MODEL, applicable_options

        self.model = llm.get_model(os.environ.get("IRONBENCH_FORGE_MODEL", EMBEDDED_MODEL))
        seed = os.environ.get("IRONBENCH_FORGE_SEED")
        self.rng = random.Random(int(seed) if seed else None)
        self.options = applicable_options(self.model, {"temperature": TEMPERATURE, "max_tokens": MAX_TOKENS})
        self.repair_options = applicable_options(self.model, {"stop": LOOP_STOP})
        self.schema = CANDIDATE_SCHEMA if getattr(self.model, "supports_schema", False) else None

    def __call__(self, messages: Messages, repair: bool = False) -> str:
        import llm

        from ironbench.llms import applicable_options

        seed = applicable_options(self.model, {"seed": self.rng.randrange(2**31)})
        chain = [getattr(llm, role)(text) for role, text in messages]
        options = {**self.options, **(self.repair_options if repair else {}), **seed}
        return self.model.prompt(messages=chain, schema=self.schema, **options).text()


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        print("usage: python -m ironbench.targets.forge INSTRUCTION", file=sys.stderr)
        return 2
    instruction = argv[0]
    repair_enabled = os.environ.get("IRONBENCH_REPAIR_ENABLED", "1") != "0"
    model = Model()
    raw = model(generate_messages(instruction))
    candidate = parse_candidate(raw)
    _debug(
        "generate.txt",
        "generate",
        "Model output was valid JSON" if candidate else "Model output was not valid JSON",
        raw,
    )
    if candidate is None:
        print("[!] Validation Failed: Model output was not valid JSON.")
        print("[X] INCINERATED: Output invalid.")
        return 1
    for attempt in range(1, MAX_REPAIRS + 2):
        passed, failure = validate(candidate, attempt)
        if passed:
            if attempt > 1:
                print(f"[+] Verified after {attempt - 1} repairs.")
            name = module_name(candidate["filename"])
            Path("verified_bricks").mkdir(exist_ok=True)
            Path(f"verified_bricks/{name}.py").write_text(candidate["code"])
            print(f"[SUCCESS] Verified brick saved to: verified_bricks/{name}.py")
            return 0
        if attempt > MAX_REPAIRS or not repair_enabled:
            print("[-] FINAL FAILURE.")
            return 1
        print(f"[-] FAIL (Attempt {attempt}/{MAX_REPAIRS}). Triggering repair...")
        print("[*] Attempting repair...")
        raw = model(repair_messages(instruction, candidate, failure), repair=True)
        repaired = parse_candidate(raw)
        _debug(
            "repair.txt",
            "repair",
            "Repair output was valid JSON" if repaired else "Repair output was not valid JSON",
            raw,
        )
        if repaired is None:
            print("[!] Repair produced invalid JSON. Aborting.")
            return 1
        candidate = repaired
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
