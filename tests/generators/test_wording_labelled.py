"""lexical_shuffle and synonym_substitution on labelled instructions
(tests/fixtures/instructions/labelled.yaml): what they make is exactly what was read and
judged to keep the task, and never a wording labelled as changing it."""

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ironbench.generators import get_generator
from ironbench.generators.registry import seeded_rng
from ironbench.generators.shuffle import shuffles
from ironbench.run.planner import generate_variants
from ironbench.suite.models import AdversarialCase, parse_suite

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"


@dataclass(frozen=True)
class Labelled:
    instruction: str
    generator: str
    seed: int
    keeps: tuple[str, ...]
    changes: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.generator}:{self.instruction[:40]}"


def labelled() -> list[Labelled]:
    data = yaml.safe_load((FIXTURES / "labelled.yaml").read_text(encoding="utf-8"))
    return [
        Labelled(i["instruction"], i["generator"], i["seed"], tuple(i["keeps"]), tuple(i.get("changes") or ()))
        for i in data["items"]
    ]


def made(instruction: str, generator: str, seed: int, count: int = 10) -> list[str]:
    """The variants a suite asking for `count` of them gets, as the planner makes them."""
    data = {
        "suite_id": "labelled",
        "mode": "adversarial",
        "cases": [
            {
                "id": "c",
                "instruction": instruction,
                "generators": [{"generator": generator, "count": count, "seed": seed}],
            }
        ],
    }
    case = parse_suite(data, "labelled.yaml").cases[0]
    assert isinstance(case, AdversarialCase)
    variants, drops = generate_variants(case)
    assert not drops
    return [v.instruction for v in variants]


ITEMS = labelled()


def test_the_labelled_set_covers_both_generators_and_names_what_must_never_happen():
    assert {i.generator for i in ITEMS} == {"lexical_shuffle", "synonym_substitution"}
    assert len({i.instruction for i in ITEMS}) >= 20
    assert sum(len(i.changes) for i in ITEMS) >= 60
    for item in ITEMS:
        assert not set(item.keeps) & set(item.changes), item
        assert item.instruction not in item.keeps


@pytest.mark.parametrize("item", ITEMS, ids=str)
def test_the_generator_makes_exactly_the_variants_judged_to_keep_the_task(item):
    variants = made(item.instruction, item.generator, item.seed)
    unlabelled = set(variants) - set(item.keeps)
    assert not unlabelled, f"read these and label them in labelled.yaml: {sorted(unlabelled)}"
    assert set(variants) == set(item.keeps), "a labelled variant is no longer made: relabel"


@pytest.mark.parametrize("item", [i for i in ITEMS if i.changes], ids=str)
def test_no_wording_labelled_as_changing_the_task_is_ever_made(item):
    if item.generator == "lexical_shuffle":
        possible = set(shuffles(item.instruction))  # every single move
    else:
        generator = get_generator(item.generator)
        params = generator.params(max_replacements=3)
        possible = {
            generator.function(item.instruction, params, seeded_rng(item.generator, seed, 0, item.instruction))
            for seed in range(200)
        }
    assert not possible & set(item.changes)
