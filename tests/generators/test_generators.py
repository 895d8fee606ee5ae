import itertools
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.contract import forbidden_word
from ironbench.generators import get_generator, registered_generators
from ironbench.generators.deterministic import phrases, strip_punctuation_words
from ironbench.generators.registry import seeded_rng
from ironbench.generators.synonyms import map_data
from tests.conftest import REPO

BASES = [
    "Write a Python function that compiles and returns a regular expression matching common email addresses.",
    "Write a Python function that converts a list of (key, value) pairs into a dictionary, keeping the last value for repeated keys.",
    "Write a Python class implementing a simple in-memory key-value cache with get, set and a maximum size.",
]
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC-'()", min_size=1, max_size=10)
sentences = st.one_of(
    st.sampled_from(BASES),
    st.lists(words, min_size=1, max_size=25).map(lambda ws: " ".join(ws) + "."),
    st.lists(
        st.one_of(words, st.sampled_from(["and", "or", "get,", "set", "write", "simple", "common"])),
        min_size=2,
        max_size=25,
    ).map(" ".join),
)
seeds = st.integers(0, 2**32)


def run(name, base, seed, **params):
    generator = get_generator(name)
    return generator.function(base, generator.params(**params), seeded_rng(name, seed, 0, base))


@given(sentences, seeds, st.floats(0, 0.5), st.floats(0, 0.5))
def test_whitespace_noise_preserves_every_token_in_order(base, seed, a, b):
    low, high = sorted((a, b))
    variant = run("whitespace_noise", base, seed, intensity_min=low, intensity_max=high)
    assert variant.split() == base.split()
    assert variant != base
    assert set(variant) - set(base) <= {" ", "\n", "\t"}


@given(sentences, seeds, st.floats(0.05, 0.20))
def test_punctuation_noise_only_touches_commas_periods_colons(base, seed, intensity):
    variant = run("punctuation_noise", base, seed, intensity=intensity)
    assert variant != base
    assert strip_punctuation_words(variant) == strip_punctuation_words(base)
    assert Counter(c for c in variant if c not in ",.:") == Counter(c for c in base if c not in ",.:")


@pytest.mark.parametrize("name", ["ambiguity_injection_light", "constraint_injection_light"])
@given(base=st.sampled_from(BASES), seed=seeds)
def test_light_injections_add_one_mild_phrase_and_keep_the_task(name, base, seed):
    variant = run(name, base, seed)
    body = base.rstrip(".")
    assert variant.startswith(body)
    added = variant[len(body) :].strip(" ,.")
    assert any(added.strip(" .") == p.strip(" .") or added.endswith(p.strip(" .")) for p in phrases(name))


def climb(base: str, levels: list[tuple[str, dict, int]]) -> list[str]:
    """Each level's text, as the planner builds it: the level below plus its generator's additions."""
    texts, text = [], base
    for name, params, seed in levels:
        generator = get_generator(name)
        text = generator.function(text, base, generator.params(**params), seeded_rng(name, seed, base))
        texts.append(text)
    return texts


@given(
    base=st.sampled_from(BASES),
    levels=st.lists(
        st.tuples(st.sampled_from(registered_generators("ladder")), st.integers(1, 2), seeds), min_size=1, max_size=6
    ),
)
def test_ladder_levels_are_cumulative_whatever_generator_each_level_has(base, levels):
    texts = climb(base, [(name, {"additions": n}, seed) for name, n, seed in levels])
    assert texts[0].startswith(base.rstrip("."))
    for lower, higher in itertools.pairwise(texts):
        assert higher.startswith(lower.rstrip("."))
        # the same text: the generator's bank has no phrase left (the planner stops the ladder there)
        assert len(higher) > len(lower) or higher == lower


@pytest.mark.parametrize("name", registered_generators("ladder"))
@given(base=st.sampled_from(BASES), seed=seeds, additions=st.integers(1, 6))
def test_levels_of_one_generator_and_seed_draw_its_bank_in_turn_and_never_repeat(name, base, seed, additions):
    texts = climb(base, [(name, {"additions": 1}, seed)] * additions)
    added = [higher[len(lower) :].strip() for lower, higher in itertools.pairwise([base, *texts])]
    assert len(set(added)) == additions and all(a in phrases(name) for a in added)


def test_explicit_ladder_additions_are_used_verbatim_sentences_after_clauses_before_the_mark():
    texts = climb(
        "Do x.",
        [
            ("add_scope_detail", {"additions": ["Also y.", "Also z."]}, 0),
            ("add_ambiguity", {"additions": ["where appropriate"]}, 0),
        ],
    )
    assert texts == ["Do x. Also y. Also z.", "Do x. Also y. Also z, where appropriate."]


def test_shipped_phrases_and_synonyms_respect_the_contract():
    for bank in (
        "ambiguity_injection_light",
        "constraint_injection_light",
        "add_scope_detail",
        "add_constraints_tension",
        "add_ambiguity",
        "add_multi_objective",
    ):
        for phrase in phrases(bank):
            assert forbidden_word(phrase) is None, (bank, phrase)
    data = map_data()
    for section in ("imperatives", "verbs", "nouns", "adjectives", "words", "relatives"):
        for word, options in data[section].items():
            assert forbidden_word(" ".join([word, *options])) is None, (section, word)


@settings(max_examples=30)
@given(
    base=st.sampled_from(BASES),
    seed=seeds,
    name=st.sampled_from([n for n in registered_generators("variant") if get_generator(n).kind == "variant"]),
)
def test_same_inputs_same_variant(base, seed, name):
    assert run(name, base, seed) == run(name, base, seed)


def test_variants_are_identical_across_processes_and_hash_seeds():
    outputs = []
    for hash_seed in ("1", "2", "random"):
        result = subprocess.run(
            [sys.executable, "-m", "ironbench.cli.main", "variants", "suites/adversarial.yaml", "--format", "json"],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            check=True,
        )
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(outputs[0]) > 30
