"""A toy coding agent with its own printed output, to show outcome rules for another agent.

It prints what many agents print: numbered steps, a test summary per try, fixes, and a
final line. What it does on run N is TOY_AGENT_OUTCOMES[N-1] (a JSON list; the last entry
repeats), else a draw from the instruction and the run index:

  pass        tests pass at once                 fixed      one fix, then pass
  gave_up     three fixes, still failing         no_parse   the model's answer is unreadable
  crash       a traceback, none of its own lines
  rate_limit  its backend refuses (HTTP 429) on the run's first attempt; run again, it passes
"""

import hashlib
import json
import os
import sys
from pathlib import Path

OUTCOMES = ["pass", "pass", "fixed", "gave_up", "no_parse", "rate_limit"]


def planned(instruction: str, run_index: int) -> str:
    scripted = json.loads(os.environ.get("TOY_AGENT_OUTCOMES", "[]"))
    if scripted:
        return scripted[min(run_index, len(scripted)) - 1]
    digest = hashlib.sha256(f"{instruction}\x1f{run_index}".encode()).digest()
    return OUTCOMES[digest[0] % len(OUTCOMES)]


def main() -> int:
    outcome = planned(sys.argv[1], int(os.environ.get("IRONBENCH_RUN_INDEX", "1")))
    print("[agent] step 1: reading the task")
    if outcome == "crash":
        print("Traceback (most recent call last):\nRuntimeError: out of memory", file=sys.stderr)
        return 3
    if outcome == "rate_limit":
        if os.environ.get("IRONBENCH_RERUN", "0") == "0":  # the slot's first attempt (fenced: no memory kept)
            print("[agent] tool call failed: 429 Too Many Requests")
            return 1
        outcome = "pass"
    if outcome == "no_parse":
        print("[agent] ERROR: could not parse the model's answer")
        return 1
    print("[agent] step 2: wrote solution.py")
    Path("solution.py").write_text("def solution():\n    return None\n")
    fixes = {"pass": 0, "fixed": 1, "gave_up": 3}[outcome]
    for fix in range(1, fixes + 1):
        print("[agent] tests: 1 failed, 2 passed")
        print(f"[agent] step {fix + 2}: fixing the failing test")
    if outcome == "gave_up":
        print("[agent] tests: 1 failed, 2 passed")
        print("[agent] GAVE UP after 3 fixes")
        return 1
    print("[agent] tests: 3 passed")
    print("[agent] DONE: solution.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
