"""The suite JSON Schema: generated from the validating models, shipped, and in agreement with them."""

import json

import jsonschema
import pytest
import yaml

from ironbench.core.shipped import shipped
from tests.conftest import REPO, cli


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(cli("schema", check=True).stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_shipped_schema_is_what_the_models_generate():
    # The file editors point at must never drift from what `ironbench run` accepts.
    assert (shipped("suites") / "suite.schema.json").read_text(encoding="utf-8") == cli("schema", check=True).stdout


@pytest.mark.parametrize("suite", sorted(p.name for p in (REPO / "suites").glob("*.yaml")))
def test_every_shipped_suite_validates(validator, suite):
    data = yaml.safe_load((REPO / "suites" / suite).read_text(encoding="utf-8"))
    assert list(validator.iter_errors(data)) == []


@pytest.mark.parametrize(
    "broken, where",
    [
        ({"cases": [{"id": "a", "instruction": "x", "runs": 11}]}, "runs"),
        ({"cases": [{"id": "a", "instruction": "x", "color": "red"}]}, "color"),
        (
            {
                "mode": "adversarial",
                "cases": [
                    {"id": "a", "instruction": "x", "generators": [{"generator": "whitespace_noise", "max_swaps": 2}]}
                ],
            },
            "generators",
        ),
        (
            {
                "mode": "adversarial",
                "cases": [{"id": "a", "instruction": "x", "generators": [{"generator": "no_such_generator"}]}],
            },
            "generators",
        ),
        (
            {
                "mode": "stress",
                "cases": [
                    {"id": "a", "instruction": "x", "ladder": {"generator": "add_scope_detail", "runs_per_level": 9}}
                ],
            },
            "ladder",
        ),
    ],
)
def test_broken_suites_are_rejected_by_schema_and_by_loader(validator, tmp_path, broken, where):
    data = {"suite_id": "s", "mode": "baseline", **broken}
    errors = list(validator.iter_errors(data))
    assert errors, f"schema accepted {data}"
    assert any(where in "/".join(map(str, e.absolute_path)) or where in e.message for e in errors)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    # the loader refuses the same file: the two never disagree on these
    assert cli("variants", str(path)).returncode == 2


def test_schema_accepts_every_generator_with_its_own_parameters(validator):
    data = {
        "suite_id": "s",
        "mode": "adversarial",
        "cases": [
            {
                "id": "a",
                "instruction": "Write a cache.",
                "generators": [
                    {
                        "generator": "synonym_substitution",
                        "max_replacements": 2,
                        "synonyms": {"tiny": ["small"]},
                        "whitelist": ["cache"],
                        "seed": 3,
                        "count": 2,
                    }
                ],
            }
        ],
    }
    assert list(validator.iter_errors(data)) == []
