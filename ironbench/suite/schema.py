"""The JSON Schema of suite files, generated from the models that validate them.

Editors (through yaml-language-server) and CI linters read it; because it comes
from `ironbench.suite` and the generator registry, it cannot drift from what
`ironbench run` accepts. Generators from installed plugins appear in it too. It
describes the spec's form, and accepts the short form ironbench's loader also reads.
"""

import copy
import json

from ironbench.generators import generator_aliases, get_generator, registered_generators
from ironbench.suite.entries import SPEC_ENTRY_PARAMS

SCHEMA_ID = "https://ironbench.dev/schema/suite.schema.json"
MODE_NAMES = ["baseline", "adversarial", "stress", "mixed", "gauntlet", "canonical"]


def _names(name: str) -> list[str]:
    return [name, *sorted(a for a, n in generator_aliases().items() if n == name)]


def _generator_entry(name: str, fixed: dict, defs: dict, spec_keys: dict) -> dict:
    """One generator's entry: the entry's own keys, and the generator's parameters both at
    the top level and under `params` (the spec's schema shows both)."""
    generator = get_generator(name)
    assert generator is not None  # `name` comes from registered_generators()
    params = generator.params.model_json_schema(ref_template="#/$defs/{model}")
    defs.update(params.pop("$defs", {}))
    own = {
        **{k: v for k, v in spec_keys.items() if k not in params.get("properties", {})},
        **params.get("properties", {}),
    }
    names = _names(name)
    properties = {
        "generator": {
            **({"const": name} if len(names) == 1 else {"enum": names}),
            "description": generator.description or f"the {name} generator",
        },
        **fixed,
        "params": {
            "type": "object",
            "description": f"{name}'s parameters (each may be given at the entry's top level instead)",
            # the entry's own count and seed may be written among them too, as the spec's files do
            "properties": {**{k: v for k, v in fixed.items() if k != "level"}, **own},
            "additionalProperties": False,
        },
        **own,
    }
    return {
        "type": "object",
        "title": name,
        "properties": properties,
        "required": ["generator", *params.get("required", [])],
        "additionalProperties": False,
    }


def _entries(schema: dict, definition: str, kind: str, spec_keys: dict) -> None:
    """Replace a generator-entry definition (open: its parameters depend on the
    generator) by one closed alternative per registered generator."""
    defs = schema["$defs"]
    fixed = {k: v for k, v in defs[definition]["properties"].items() if k not in ("generator", "params")}
    alternatives = [_generator_entry(name, fixed, defs, spec_keys) for name in registered_generators(kind)]
    described = "ladder level" if kind == "ladder" else "variant generator"
    defs[definition] = {
        "title": defs[definition].get("title", definition),
        "description": defs[definition].get("description") or f"A {described} and its parameters.",
        "type": "object",
        "required": defs[definition].get("required", ["generator"]),
        "properties": {"generator": {"enum": [n for g in registered_generators(kind) for n in _names(g)]}},
        "oneOf": alternatives,
    }


def _ladder_shorthand(defs: dict) -> dict:
    """The short form `ladder: {generator, additions, seed, runs_per_level, ...}`: one
    generator, one addition per level."""
    stress = defs["StressCase"]["properties"]
    alternatives = []
    for level in defs["LadderLevel"]["oneOf"]:
        properties = {k: v for k, v in level["properties"].items() if k not in ("level", "params")}
        if "additions" in properties:
            properties["additions"] = {
                **properties["additions"],
                "description": "a number of additions drawn from the generator's bank, or a list: one level each",
            }
        properties["runs_per_level"] = stress["runs_per_level"]
        properties["stop_at_boundary"] = stress["stop_at_boundary"]
        alternatives.append({**level, "properties": properties, "required": ["generator"]})
    return {
        "title": "Ladder (shorthand)",
        "description": "Shorthand for stress_ladder: one generator, level N the instruction plus N additions.",
        "type": "object",
        "required": ["generator"],
        "oneOf": alternatives,
    }


def _either(case: dict, pairs: list[tuple[str, str]]) -> None:
    """A case may write the spec's key or its shorthand, not both."""
    required = [r for r in case.get("required", []) if r not in {name for name, _ in pairs}]
    case["required"] = required
    case["allOf"] = [{"oneOf": [{"required": [name]}, {"required": [shorthand]}]} for name, shorthand in pairs]


def _shorthands(schema: dict) -> None:
    defs = schema["$defs"]
    for name in ("AdversarialCase", "StressCase"):
        case = defs[name]["properties"]
        case["instruction"] = {**case["base_instruction"], "description": "shorthand for base_instruction"}
    adversarial, stress = defs["AdversarialCase"], defs["StressCase"]
    adversarial["properties"]["generators"] = {
        **adversarial["properties"]["variants"],
        "description": "shorthand for variants",
    }
    defs["LadderShorthand"] = _ladder_shorthand(defs)
    stress["properties"]["ladder"] = {"$ref": "#/$defs/LadderShorthand"}
    _either(adversarial, [("base_instruction", "instruction"), ("variants", "generators")])
    _either(stress, [("base_instruction", "instruction"), ("stress_ladder", "ladder")])
    # A canonical suite's groups hold baseline cases; `category` is the spec's name of the mode.
    properties = schema["properties"]
    for group in ("small", "mid", "large"):
        properties[group] = {
            "type": "array",
            "description": f"a canonical suite's {group} cases (each may repeat complexity: {group})",
            "items": {"$ref": "#/$defs/BaselineCase"},
        }
    properties["category"] = {
        "enum": MODE_NAMES,
        "description": "the spec's name of the mode (adversarial and stress suites): the same as mode",
    }
    schema["required"] = [r for r in schema.get("required", []) if r != "mode"]
    schema["anyOf"] = [{"required": ["mode"]}, {"required": ["category"]}]


def suite_schema() -> dict:
    """The JSON Schema (draft 2020-12) every valid suite file satisfies."""
    from ironbench.suite.models import Suite

    schema = Suite.model_json_schema(ref_template="#/$defs/{model}")
    defs = schema["$defs"]
    proportion = {"type": "number", "minimum": 0, "maximum": 1}
    spec_keys = {
        key: {**proportion, "description": "the spec's entry key; unused by generators without it"}
        for key in SPEC_ENTRY_PARAMS
    }
    _entries(schema, "VariantEntry", "variant", spec_keys)
    _entries(schema, "LadderLevel", "ladder", {})
    defs.pop("GeneratorParams", None)
    _shorthands(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "ironbench suite",
        "description": "An ironbench suite file: see docs/guides/suites.md and docs/reference/suite-schema.md.",
        **{k: v for k, v in copy.deepcopy(schema).items() if k not in ("title", "description")},
    }


def schema_text() -> str:
    return json.dumps(suite_schema(), indent=2, sort_keys=True) + "\n"
