"""The JSON Schema of suite files, generated from the models that validate them.

Editors (through yaml-language-server) and CI linters read it; because it comes
from `ironbench.suite` and the generator registry, it cannot drift from what
`ironbench run` accepts. Generators from installed plugins appear in it too.
"""

import json

from ironbench.generators.registry import get_generator, registered_generators

SCHEMA_ID = "https://ironbench.dev/schema/suite.schema.json"


def _generator_entry(name: str, fixed: dict, defs: dict) -> dict:
    """One generator's entry: the fields every entry has plus the generator's own parameters."""
    generator = get_generator(name)
    assert generator is not None  # `name` comes from registered_generators()
    params = generator.params.model_json_schema(ref_template="#/$defs/{model}")
    defs.update(params.pop("$defs", {}))
    properties = {
        "generator": {"const": name, "description": generator.description or f"the {name} generator"},
        **fixed,
        **params.get("properties", {}),
    }
    entry = {
        "type": "object",
        "title": name,
        "properties": properties,
        "required": ["generator", *params.get("required", [])],
        "additionalProperties": False,
    }
    return entry


def _entries(schema: dict, definition: str, kind: str) -> None:
    """Replace a generator-entry definition (open: its parameters depend on the
    generator) by one closed alternative per registered generator."""
    defs = schema["$defs"]
    fixed = {k: v for k, v in defs[definition]["properties"].items() if k != "generator"}
    alternatives = [_generator_entry(name, fixed, defs) for name in registered_generators(kind)]
    defs[definition] = {
        "title": defs[definition].get("title", definition),
        "description": f"A {'ladder' if kind == 'ladder' else 'variant'} generator and its parameters.",
        "type": "object",
        "required": ["generator"],
        "properties": {"generator": {"enum": registered_generators(kind)}},
        "oneOf": alternatives,
    }


def suite_schema() -> dict:
    """The JSON Schema (draft 2020-12) every valid suite file satisfies."""
    from ironbench.suite.models import Suite

    schema = Suite.model_json_schema(ref_template="#/$defs/{model}")
    _entries(schema, "GeneratorEntry", "variant")
    _entries(schema, "LadderEntry", "ladder")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "ironbench suite",
        "description": "An ironbench suite file: see docs/guides/suites.md and docs/reference/suite-schema.md.",
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
    }


def schema_text() -> str:
    return json.dumps(suite_schema(), indent=2, sort_keys=True) + "\n"
