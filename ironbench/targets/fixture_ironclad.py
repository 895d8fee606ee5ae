"""A simulated Ironclad shipped with ironbench: honours Ironclad's printed contract.

Outcomes are a deterministic function of the instruction, the run index the harness
passes in IRONBENCH_RUN_INDEX and IRONBENCH_FIXTURE_SEED, so runs are reproducible
and still vary from run to run like a real model-driven system. It lets the harness
be tried and tested without a model; it generates no real code.
"""

import hashlib
import os
import sys
import time
from pathlib import Path

MAX_ATTEMPTS = 3


def _unit(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _debug(name: str, text: str) -> None:
    if os.environ.get("IRONCLAD_DEBUG") == "1":
        folder = Path("build/.ironclad_debug")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        print("usage: fixture_ironclad INSTRUCTION", file=sys.stderr)
        return 2
    instruction = argv[0]
    seed = os.environ.get("IRONBENCH_FIXTURE_SEED", "0")
    run_index = os.environ.get("IRONBENCH_RUN_INDEX", "1")
    sleep_ms = int(os.environ.get("IRONBENCH_FIXTURE_SLEEP_MS", "0"))
    if sleep_ms:
        time.sleep(sleep_ms / 1000)

    # Each instruction has its own difficulty, and every sentence beyond the first
    # (a stress ladder's additions) makes it harder; each run draws against it.
    extra_sentences = max(0, instruction.count(". ") + instruction.count("? "))
    difficulty = min(1.0, 0.5 * _unit(seed, instruction) + 0.22 * extra_sentences)
    draw = _unit(seed, instruction, run_index)
    _debug("generate.txt", f"Phase: generate\nInstruction: {instruction}\n")
    if draw < 0.05 + 0.9 * difficulty**2:
        print("[!] Validation Failed: Model output was not valid JSON.")
        print("[X] INCINERATED: Output invalid.")
        return 1
    repairs_needed = int(_unit(seed, instruction, run_index, "repairs") * (2 + 3 * difficulty))
    repair_breaks = _unit(seed, instruction, run_index, "repair") < 0.1
    for attempt in range(1, MAX_ATTEMPTS + 2):
        if attempt - 1 >= repairs_needed:
            if attempt > 1:
                print(f"[+] Verified after {attempt - 1} repairs.")
            name = "".join(c if c.isalnum() else "_" for c in instruction.lower())[:40].strip("_") or "brick"
            Path("verified_bricks").mkdir(exist_ok=True)
            Path(f"verified_bricks/{name}.py").write_text("def brick():\n    return None\n")
            print(f"[SUCCESS] Verified brick saved to: verified_bricks/{name}.py")
            return 0
        _debug(f"validate_brick_attempt{attempt}.txt", f"Phase: validate\nAttempt: {attempt}\n")
        if attempt > MAX_ATTEMPTS:
            print("[-] FINAL FAILURE.")
            return 1
        print(f"[-] FAIL (Attempt {attempt}/{MAX_ATTEMPTS}). Triggering repair...")
        print("[*] Attempting repair...")
        _debug("repair.txt", f"Phase: repair\nAttempt: {attempt}\n")
        if repair_breaks:
            print("[!] Repair produced invalid JSON. Aborting.")
            return 1
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
