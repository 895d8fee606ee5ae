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

GENERATE = """You write Python. Reply with one JSON object and nothing else:
{{"filename": "<module_name>.py", "code": "<the Python source>", "test": "<pytest tests importing the module>"}}

Task: {instruction}"""

REPAIR = """The code below failed its tests. Reply with one corrected JSON object and nothing else:
{{"filename": "...", "code": "...", "test": "..."}}

Task: {instruction}
Code:
{code}
Tests:
{test}
Failure:
{failure}"""


def _debug(name: str, phase: str, message: str, raw: str, extra: str = "") -> None:
    if os.environ.get("IRONCLAD_DEBUG") != "1":
        return
    DEBUG_DIR.mkdir(parents=True, exist_ok=True)
    (DEBUG_DIR / name).write_text(f"Phase: {phase}\n{extra}Message: {message}\n\nRAW DATA:\n{raw}")


def parse_candidate(text: str) -> dict | None:
    """The first JSON object with string filename, code and test, or None."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for end in range(start, len(text)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        data = json.loads(text[start:end + 1])
                    except json.JSONDecodeError:
                        break
                    if isinstance(data, dict) and all(isinstance(data.get(k), str) and data[k].strip()
                                                      for k in ("filename", "code", "test")):
                        return data
                    break
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
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", folder.name],
                                cwd=folder.parent, capture_output=True, text=True, timeout=PYTEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "pytest timed out"
    output = result.stdout + result.stderr
    _debug(f"validate_{name}_attempt{attempt}.txt", "validate", "Validation passed" if result.returncode == 0
           else "Validation failed", output, f"Component: {name}.py\nAttempt: {attempt}\n")
    return result.returncode == 0, output


class Model:
    def __init__(self) -> None:
        import llm

        from ironbench.models import EMBEDDED_MODEL, applicable_options

        self.model = llm.get_model(os.environ.get("IRONBENCH_FORGE_MODEL", EMBEDDED_MODEL))
        seed = os.environ.get("IRONBENCH_FORGE_SEED")
        self.rng = random.Random(int(seed) if seed else None)
        self.options = applicable_options(self.model, {"temperature": 0.7, "max_tokens": 256})

    def __call__(self, prompt: str) -> str:
        from ironbench.models import applicable_options

        seed = applicable_options(self.model, {"seed": self.rng.randrange(2**31)})
        return self.model.prompt(prompt, **self.options, **seed).text()


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        print("usage: python -m ironbench.targets.forge INSTRUCTION", file=sys.stderr)
        return 2
    instruction = argv[0]
    repair_enabled = os.environ.get("IRONBENCH_REPAIR_ENABLED", "1") != "0"
    model = Model()
    raw = model(GENERATE.format(instruction=instruction))
    candidate = parse_candidate(raw)
    _debug("generate.txt", "generate", "Model output was valid JSON" if candidate else
           "Model output was not valid JSON", raw)
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
        raw = model(REPAIR.format(instruction=instruction, code=candidate["code"], test=candidate["test"],
                                  failure=failure[-2000:]))
        repaired = parse_candidate(raw)
        _debug("repair.txt", "repair", "Repair output was valid JSON" if repaired else
               "Repair output was not valid JSON", raw)
        if repaired is None:
            print("[!] Repair produced invalid JSON. Aborting.")
            return 1
        candidate = repaired
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
