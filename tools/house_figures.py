"""The house's shape in figures: string-key lookups, dict-typed parameters, long signatures,
unused table classes and repeated module names, per subpackage of ironbench/.

    python tools/house_figures.py          # a table
    python tools/house_figures.py --json   # the same figures, for a script

A string-key lookup is `x["k"]` or `x.get("k")` with a literal string key; a dict-typed
parameter is one whose annotation names `dict`, `Dict`, `Mapping` or `MutableMapping`.
The read side is analysis/, projections/, report/ and view/.
"""

import ast
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ironbench"
READ_SIDE = ("analysis", "projections", "report", "view")
DICT_NAMES = {"dict", "Dict", "Mapping", "MutableMapping"}


def _names_dict(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    return any(
        (isinstance(node, ast.Name) and node.id in DICT_NAMES)
        or (isinstance(node, ast.Attribute) and node.attr in DICT_NAMES)
        for node in ast.walk(annotation)
    )


def _is_string_lookup(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    return False


def figures() -> dict:
    lookups: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    dict_params: Counter[str] = Counter()
    long_signatures: list[str] = []
    basenames: defaultdict[str, list[str]] = defaultdict(list)
    table_classes: set[str] = set()
    used_names: Counter[str] = Counter()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        room = rel.parts[0] if len(rel.parts) > 1 else "(top)"
        text = path.read_text()
        tree = ast.parse(text)
        lines[room] += len(text.splitlines())
        if path.name != "__init__.py":
            basenames[path.name].append(str(rel.parent))
        for node in ast.walk(tree):
            if _is_string_lookup(node):
                lookups[room] += 1
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                named = [a for a in every if a.arg not in ("self", "cls")]
                if len(named) >= 10 and room != "cli":
                    long_signatures.append(f"{rel}:{node.lineno} {node.name} ({len(named)})")
                dict_params[room] += sum(_names_dict(a.annotation) for a in every)
            if (
                rel == Path("store/tables.py")
                and isinstance(node, ast.ClassDef)
                and any(k.arg == "table" for k in node.keywords)
            ):
                table_classes.add(node.name)
            if rel != Path("store/tables.py") and isinstance(node, ast.Name | ast.alias | ast.Attribute):
                name = (
                    node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias) else node.attr
                )
                used_names[name] += 1
    rooms = sorted(lines)
    return {
        "lookups_per_100_lines": {r: round(100 * lookups[r] / lines[r], 2) for r in rooms},
        "lookups": dict(lookups),
        "dict_params_read_side": sum(dict_params[r] for r in READ_SIDE),
        "dict_params": {r: dict_params[r] for r in rooms if dict_params[r]},
        "functions_with_10_or_more_params_outside_cli": sorted(long_signatures),
        "table_classes_unused": sorted(c for c in table_classes if not used_names[c]),
        "basenames_in_three_places": {n: p for n, p in sorted(basenames.items()) if len(p) >= 3},
        "basenames_in_two_places": {n: p for n, p in sorted(basenames.items()) if len(p) == 2},
    }


def main() -> None:
    found = figures()
    if "--json" in sys.argv:
        print(json.dumps(found, indent=2))
        return
    print("string-key lookups per 100 lines:")
    for room, value in found["lookups_per_100_lines"].items():
        mark = "  (read side)" if room in READ_SIDE else ""
        print(f"  {room:<12} {value:>5}  ({found['lookups'].get(room, 0)}){mark}")
    print(f"dict-typed parameters on the read side: {found['dict_params_read_side']}  {found['dict_params']}")
    long = found["functions_with_10_or_more_params_outside_cli"]
    print(f"functions outside cli/ with 10 or more parameters: {len(long)}")
    for item in long:
        print(f"  {item}")
    print(f"table classes used by nothing in the package: {len(found['table_classes_unused'])}")
    print(f"  {', '.join(found['table_classes_unused'])}")
    print(f"module names in three or more places: {found['basenames_in_three_places']}")


if __name__ == "__main__":
    main()
