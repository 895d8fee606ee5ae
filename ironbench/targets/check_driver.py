"""The program a python check runs in its folder (copied there, never imported by ironbench).

    python -S check_driver.py MARK MODULE ENTRY_POINT SOURCE_FILE

Imports the brick by its module name, finds the entry point, and calls check(candidate) from
the check's source in the brick's namespace (HumanEval's tests may call helpers its prompt
defines); prints one verdict line starting with MARK, which is taken off the command line
before the brick is imported. Only what a passing check needs is imported up front.
"""

import importlib
import os
import sys
from typing import NoReturn


def verdict(mark: str, name: str, detail: str = "") -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    detail = " ".join(str(detail).split())[:500]
    os.write(1, f"\n{mark} {name} {detail}\n".encode("utf-8", "replace"))
    os._exit(0)


def failed() -> str:
    import traceback  # only when something failed

    traceback.print_exc()
    lines = traceback.format_exc().strip().splitlines()
    return lines[-1] if lines else ""


def main() -> None:
    mark, module, entry, source_file = sys.argv[1:5]
    del sys.argv[1:]
    try:
        brick = importlib.import_module(module)
    except BaseException:  # noqa: BLE001 (whatever the brick raises, SystemExit too, is its verdict)
        verdict(mark, "import_error", failed())
    candidate = getattr(brick, entry, None)
    if not callable(candidate):
        verdict(mark, "no_entry_point", f"module {module} defines no callable {entry}")
    namespace = dict(vars(brick))
    try:
        with open(source_file, encoding="utf-8") as handle:
            exec(compile(handle.read(), "check.py", "exec"), namespace)  # noqa: S102 (the suite's own check)
        check = namespace["check"]
    except BaseException:  # noqa: BLE001 (whatever the brick raises, SystemExit too, is its verdict)
        verdict(mark, "harness_fault", f"the check's source does not define check(candidate): {failed()}")
    try:
        check(candidate)
    except BaseException:  # noqa: BLE001 (whatever the brick raises, SystemExit too, is its verdict)
        verdict(mark, "wrong", failed())
    verdict(mark, "correct")


if __name__ == "__main__":
    main()
