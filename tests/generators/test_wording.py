"""lexical_shuffle and synonym_substitution (issue #40): what their rules do and never do,
properties over any text, and the figures a suite asking for `count: 10` gets on the
development instructions (tests/fixtures/instructions/development.yaml)."""

import difflib
import re
import statistics
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.generators import get_generator
from ironbench.generators.registry import seeded_rng
from ironbench.generators.shuffle import LexicalShuffle, lexical_shuffle, shuffles
from ironbench.generators.synonyms import (
    SynonymSubstitution,
    ing_form,
    map_data,
    plural,
    s_form,
    sites,
    synonym_substitution,
)
from ironbench.generators.wording import DATA, sentences, tokenize
from tests.generators.test_wording_labelled import made

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"
DEVELOPMENT = yaml.safe_load((FIXTURES / "development.yaml").read_text(encoding="utf-8"))["instructions"]
SPEC_EXAMPLE = "Compile a list of email patterns into regex objects."
TYPE_WORDS = {
    "list", "dict", "dictionary", "tuple", "set", "string", "str", "int", "integer", "float", "bool",
    "boolean", "None", "True", "False", "bytes",
}  # fmt: skip
HUMANEVAL_LIKE = """Write a Python function `below_zero(operations: List[int]) -> bool`.

You're given a list of deposit and withdrawal operations on a bank account that starts with
zero balance. Your task is to detect if at any point the balance of account falls below zero, and
at that point function should return True. Otherwise it should return False.
>>> below_zero([1, 2, 3])
False
>>> below_zero([1, 2, -4, 5])
True"""

# Text of every kind an instruction holds: words the rules act on, protected spans, marks.
VOCABULARY = [
    "Write", "Implement", "Return", "Given", "Using", "If", "a", "an", "the", "function", "class", "that", "which",
    "returns", "converts", "removes", "keeping", "using", "ignoring", "while", "preserving", "sum", "elements",
    "of", "in", "into", "from", "to", "by", "with", "without", "for", "on", "and", "or", ",", ",", "if", "when",
    "each", "every", "whether", "at", "most", "least", "largest", "simple", "repeated", "given", "list", "dict",
    "string", "True", "None", "sort", "split", "count", "number", "words", "stacks", "queue", "recursively",
    "`foo`", "`bar(x)`", '"quoted text"', "'x, y'", "(key, value)", "snake_case", "camelCase", "os.path",
    "sort()", "42", "3.5", "-1", "2D", "e.g.", "it", "them", "its", "is", "are", "such", "as", "than",
]  # fmt: skip
texts = st.one_of(
    st.sampled_from([*DEVELOPMENT, HUMANEVAL_LIKE]),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=30).map(lambda ws: " ".join(ws) + "."),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=30).map(" ".join),
    st.tuples(
        st.lists(st.sampled_from(VOCABULARY), min_size=3, max_size=15), st.sampled_from(["\n>>> f(1, 2)\n3\n", "\n"])
    ).map(lambda parts: " ".join(parts[0]) + "." + parts[1] + "Return the sum of the elements in a list."),
)
seeds = st.integers(0, 2**32)


def words(text: str) -> Counter:
    """The text's words as written, without case or the marks around them."""
    return Counter(w.lower().strip(",.;:!?") for w in text.split() if w.strip(",.;:!?"))


def protected_spans(text: str) -> list[str]:
    """Numbers, quoted and backticked text, parenthesised groups and identifiers, in order."""
    return re.findall(
        r"`[^`\n]*`|\"[^\"\n]*\"|(?<![\w'])'[^'\n]*'(?![\w'])|\([^()\n]*\)|[-+]?\d+(?:\.\d+)?|"
        r"\b\w*_\w*\b|\b[a-z]+[A-Z]\w*\b|\b\w+(?:\.\w+)+\b",
        text,
    )


def code_lines(text: str) -> list[str]:
    """Doctest prompts and the output line after each."""
    lines = text.splitlines()
    return [line for n, line in enumerate(lines) if line.startswith(">>>") or (n and lines[n - 1].startswith(">>>"))]


def shuffle(base: str, seed: int, max_swaps: int = 1) -> str | None:
    return lexical_shuffle(base, LexicalShuffle(max_swaps=max_swaps), seeded_rng("lexical_shuffle", seed, 0, base))


def substitute(base: str, seed: int, **params) -> str | None:
    return synonym_substitution(base, SynonymSubstitution(**params), seeded_rng("synonym_substitution", seed, 0, base))


# lexical_shuffle -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        (
            SPEC_EXAMPLE,
            {
                "Into regex objects, compile a list of email patterns.",
                "Compile into regex objects a list of email patterns.",
                "A list of email patterns, compile into regex objects.",
            },
        ),
        ("Implement a queue using two stacks.", {"Using two stacks, implement a queue."}),
        (
            "Return None if the list is empty.",
            {"If the list is empty, return None."},
        ),
        (
            "Given a list of integers, return the largest.",
            {"Return the largest, given a list of integers.", "Return, given a list of integers, the largest."},
        ),
        ("Write a Python function to reverse a string.", {"To reverse a string, write a Python function."}),
        (
            "Write a function that returns the n-th Fibonacci number using memoization.",
            {
                "Using memoization, write a function that returns the n-th Fibonacci number.",
                "Write a function that, using memoization, returns the n-th Fibonacci number.",
            },
        ),
        (
            "Write a Python class implementing a simple in-memory key-value cache with get, set and a maximum size.",
            {"Write a Python class implementing a simple in-memory key-value cache with set, get and a maximum size."},
        ),
        ("Reverse a singly linked list iteratively.", {"Iteratively reverse a singly linked list."}),
        (
            # "add" cannot be the list's verb: the phrase is not the clause's
            "Return the indices of the numbers in a list that add up to a target.",
            {"In a list, return the indices of the numbers that add up to a target."},
        ),
        (
            "Check if the parentheses in an expression are nested.",
            {"Check if, in an expression, the parentheses are nested."},
        ),
        (
            "Write a function that, given a date string, returns the day of the week.",
            {
                "Write a function that returns the day of the week, given a date string.",
                "Given a date string, write a function that returns the day of the week.",
            },
        ),
        ("Implement binary search over a sorted list.", {"Over a sorted list, implement binary search."}),
        (
            "The function returns the sum of the numbers in a list.",
            {"In a list, the function returns the sum of the numbers."},
        ),
        (
            "Sort a list of dictionaries by name in descending order.",
            {"Sort a list of dictionaries in descending order by name."},
        ),
        (
            "Write a class that stores the balance and refuses large withdrawals.",
            {"Write a class that refuses large withdrawals and stores the balance."},
        ),
    ],
)
def test_lexical_shuffle_fronts_moves_and_swaps_phrases(base, expected):
    assert expected <= set(shuffles(base))


@pytest.mark.parametrize(
    ("base", "never"),
    [
        # the order of what is returned is the answer's
        ("Return the minimum and maximum of a list.", "Return the maximum and minimum of a list."),
        ("Write a function that returns the sum and product of a list.", "product and sum"),
        # "otherwise" ties the two outcomes to the condition's place
        ("Return True if the list is sorted and False otherwise.", "If the list is sorted,"),
        # a member that points back stays after what it points to
        ("Replace each run with the character and its count.", "its count and the character"),
        # a phrase that completes the word before it stays with it
        ("Find the element closest to zero in a list.", "To zero,"),
        ("Return a dict mapping words to counts.", "Return to counts"),
        ("Write a function that returns the integer closest to it.", "to it the"),
        # a phrase followed by a clause of its own noun stays with it (the verb agrees with it)
        ("Return the indices of the numbers in a list that contains no duplicates.", "In a list,"),
        ("Return the indices of the numbers in a list that contains no duplicates.", "returns in a list"),
        # "check if" is the verb's object, not a condition
        ("Write a function that checks if two strings are anagrams.", "that, if two strings"),
        # a function's steps keep their order
        ("Write a function that splits a sentence and capitalizes each word.", "capitalizes each word and splits"),
        # "only" keeps its scope
        ("Return digits or letters only.", "letters only or digits"),
        # a range is one phrase
        ("Convert a temperature from Celsius to Fahrenheit.", "To Fahrenheit,"),
    ],
)
def test_lexical_shuffle_never_reorders_what_carries_meaning(base, never):
    assert all(never not in variant for variant in shuffles(base))


def test_lexical_shuffle_leaves_code_and_other_sentences_as_written():
    for variant in shuffles(HUMANEVAL_LIKE):
        assert code_lines(variant) == code_lines(HUMANEVAL_LIKE)
        assert variant.startswith("Write a Python function `below_zero(operations: List[int]) -> bool`.\n\n")
    assert shuffles("Write a function.\n>>> f(a, b)\n3") == []


def test_lexical_shuffle_says_nothing_when_no_phrase_may_move():
    assert shuffle("Write a function that checks whether a string is a palindrome.", 1) is None
    assert shuffle("", 1) is None


@given(texts, seeds, st.integers(1, 4))
def test_a_shuffle_keeps_every_word_and_every_protected_span(base, seed, max_swaps):
    variant = shuffle(base, seed, max_swaps)
    if variant is None:
        assert shuffles(base) == []
        return
    assert variant != base
    assert words(variant) == words(base)  # same words: only order, a capital and commas change
    assert Counter(protected_spans(variant)) == Counter(protected_spans(base))
    assert code_lines(variant) == code_lines(base)


@given(texts, seeds, st.integers(1, 4))
def test_a_shuffle_is_the_same_for_the_same_seed(base, seed, max_swaps):
    assert shuffle(base, seed, max_swaps) == shuffle(base, seed, max_swaps)


@settings(max_examples=40)
@given(st.sampled_from(DEVELOPMENT), seeds)
def test_more_swaps_combine_moves_of_different_phrases_never_a_move_of_a_move(base, seed):
    # max_swaps: moves on disjoint stretches of the sentence as written, each one a move alone
    variant = shuffle(base, seed, max_swaps=3)
    singles = set(shuffles(base))
    if variant is None or variant in singles:
        return
    matcher = difflib.SequenceMatcher(a=base.split(), b=variant.split())
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    assert len(changed) >= 2


# synonym_substitution --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "some_variant"),
    [
        (SPEC_EXAMPLE, "Convert a list of email patterns into regex objects."),
        (SPEC_EXAMPLE, "Compile a list of e-mail patterns into regex objects."),
        ("Write a function that returns the sum.", "Write a function that gives back the sum."),
        ("Write a function that returns the sum.", "Write a function which returns the sum."),
        ("Write a function that returns the sum.", "Create a function that returns the sum."),
        ("Return the sum without using a loop.", "Return the sum without employing a loop."),
        ("Remove duplicate characters while keeping the order.", "Remove repeated characters while keeping the order."),
        ("Count the vowels in each word.", "Tally the vowels in each word."),
        ("Count the vowels in each word.", "Count the vowels in every word."),
        ("Split a list into chunks of at most `n` elements.", "Split a list into chunks of no more than `n` elements."),
        ("Find the largest element of a list.", "Find the largest item of a list."),
        ("Find the largest element of a list.", "Find the biggest element of a list."),
    ],
)
def test_synonym_substitution_replaces_words_in_their_part_of_speech_and_form(base, some_variant):
    variants = {substitute(base, seed, max_replacements=1) for seed in range(300)}
    assert some_variant in variants


@pytest.mark.parametrize(
    ("base", "never"),
    [
        # technical terms and fixed phrases
        ("Return the greatest common divisor of two numbers.", ("largest common", "biggest common")),
        ("Check if two strings are anagrams of each other.", ("every other",)),
        ("Implement binary search on a sorted list.", ("binary look",)),
        # a verb of making says what the code does away from the imperative
        ("Write a class implementing a cache.", ("class writing", "class coding", "class creating")),
        # a noun is not a verb: "the count" is not "the tally up"
        ("Return the count of vowels.", ("Tally", "gives back")),
        # "it" goes inside a phrasal verb, so the phrasal verb is not used
        ("Write a function that returns it.", ("gives back it", "hands back it")),
        # no replacement repeats the word beside it
        ("Count the number of vowels.", ("count of",)),
        # "make" keeps its other senses
        ("Make the result lowercase.", ("Create the result", "Build the result")),
    ],
)
def test_synonym_substitution_never_touches_terms_or_changes_a_sense(base, never):
    for seed in range(200):
        variant = substitute(base, seed, max_replacements=3)
        assert variant is None or not any(n in variant for n in never), variant


def test_an_article_agrees_with_its_new_word():
    variants = {substitute("Return an element of a list.", s, synonyms={"element": ["member"]}) for s in range(60)}
    assert "Return a member of a list." in variants
    assert not any("an member" in v or "a item" in v for v in variants if v)


def test_a_suite_extends_the_map_and_whitelists_a_term():
    extended = {substitute("Write a quick function.", seed, synonyms={"quick": ["fast"]}) for seed in range(60)}
    assert "Write a fast function." in extended
    assert all("operations" not in (substitute("Implement get and set methods.", s) or "") for s in range(60))
    allowed = {substitute("Implement get and set methods.", s, whitelist=["methods"]) for s in range(60)}
    assert "Implement get and set operations." in allowed


def test_verb_and_noun_forms_follow_english_rules():
    irregular = map_data()["forms"]
    assert [s_form(v, irregular) for v in ("give back", "match", "carry", "play", "deal with")] == [
        "gives back",
        "matches",
        "carries",
        "plays",
        "deals with",
    ]
    assert [ing_form(v, irregular) for v in ("write", "split", "begin", "tie", "see", "open", "work out")] == [
        "writing",
        "splitting",
        "beginning",
        "tying",
        "seeing",
        "opening",
        "working out",
    ]
    assert [plural(n) for n in ("entry", "box", "item", "key", "helper function")] == [
        "entries",
        "boxes",
        "items",
        "keys",
        "helper functions",
    ]


def test_the_map_is_data_and_every_replacement_is_safe():
    """Every entry a string (YAML reads a bare `on` as true), and no replacement brings a
    number, a Python type word or a word the single-string contract forbids."""
    from ironbench.core.contract import forbidden_word

    for name in ("synonyms.yaml", "wording.yaml"):
        data = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
        for section, value in data.items():
            entries = value.items() if isinstance(value, dict) else [(None, value)]
            for key, options in entries:
                assert key is None or isinstance(key, str), (name, section, key)
                assert all(isinstance(o, str) for o in options), (name, section, key)
    data = map_data()
    for section in ("imperatives", "verbs", "nouns", "adjectives", "words", "relatives"):
        for key, options in data[section].items():
            for option in options:
                assert not re.search(r"\d", option) and not set(option.split()) & TYPE_WORDS, (key, option)
                assert forbidden_word(option) is None, (key, option)


@given(texts, seeds, st.integers(1, 4))
def test_a_substitution_keeps_every_protected_span_and_type_word(base, seed, max_replacements):
    variant = substitute(base, seed, max_replacements=max_replacements)
    if variant is None:
        assert sites(base, SynonymSubstitution()) == []
        return
    assert variant != base
    assert protected_spans(variant) == protected_spans(base)
    type_words = lambda text: Counter(w.strip(",.;:!?") for w in text.split() if w.strip(",.;:!?") in TYPE_WORDS)
    assert type_words(variant) == type_words(base)
    assert code_lines(variant) == code_lines(base)


def replaced_sites(base: str, variant: str) -> list[tuple[str, str]] | None:
    """How the variant reads against the base: (stretch as written, what it became) for each
    site of the map the variant changed; None when the variant differs anywhere else (an
    "a" before a site may become "an", and back)."""
    found = sentences(base)
    pattern, last = [], 0
    for site in sites(base, SynonymSubstitution()):
        tokens = found[site.sentence].tokens
        start, end = tokens[site.start].start, tokens[site.end - 1].end
        before = base[last:start]
        article = re.search(r"\b([Aa])n? $", before)
        if article:
            before = before[: article.start()]
        pattern.append(re.escape(before))
        if article:
            pattern.append(f"{article.group(1)}n? ")
        choices = sorted({base[start:end], *site.options}, key=len, reverse=True)
        pattern.append("(" + "|".join(f"(?i:{re.escape(c[:1])}){re.escape(c[1:])}" for c in choices) + ")")
        last = end
    pattern.append(re.escape(base[last:]))
    match = re.fullmatch("".join(pattern), variant)
    if match is None:
        return None
    originals = [
        base[found[s.sentence].tokens[s.start].start : found[s.sentence].tokens[s.end - 1].end]
        for s in sites(base, SynonymSubstitution())
    ]
    return [(old, new) for old, new in zip(originals, match.groups(), strict=True) if old.lower() != new.lower()]


@given(texts, seeds, st.integers(1, 4))
def test_a_substitution_replaces_at_most_max_replacements_stretches_the_map_offers(base, seed, max_replacements):
    variant = substitute(base, seed, max_replacements=max_replacements)
    if variant is None:
        return
    replaced = replaced_sites(base, variant)
    assert replaced is not None, "the variant changed text outside the map's sites"
    assert 1 <= len(replaced) <= max_replacements


@given(texts, seeds)
def test_a_substitution_is_the_same_for_the_same_seed(base, seed):
    assert substitute(base, seed) == substitute(base, seed)


# What a suite asking for ten gets ---------------------------------------------------------


def counts(generator: str, instructions: list[str]) -> list[int]:
    return [len(made(text, generator, seed=index + 1)) for index, text in enumerate(instructions)]


def share(values: list[int], at_least: int) -> float:
    return sum(v >= at_least for v in values) / len(values)


def test_the_development_instructions_get_the_variants_a_suite_asks_for():
    """Issue #40's bar, measured as a run makes variants (python tests/perf/wording_figures.py
    prints these figures for the held-out part and HumanEval too)."""
    assert len(DEVELOPMENT) >= 40
    synonyms = counts("synonym_substitution", DEVELOPMENT)
    shuffled = counts("lexical_shuffle", DEVELOPMENT)
    assert share(synonyms, 5) >= 0.8, sorted(synonyms)
    assert share(shuffled, 1) >= 0.8, sorted(shuffled)
    assert share(shuffled, 3) >= 0.4, sorted(shuffled)
    assert statistics.median(synonyms) == 10


def test_the_spec_example_gets_three_variants_of_each():
    assert len(made(SPEC_EXAMPLE, "lexical_shuffle", seed=1)) >= 3
    assert len(made(SPEC_EXAMPLE, "synonym_substitution", seed=1)) >= 3


def test_the_instruction_sets_cover_what_users_write():
    """Numbers, quoted text, backticks, identifiers, classes and more than one shape of sentence."""
    for part in ("development", "held_out"):
        texts = yaml.safe_load((FIXTURES / f"{part}.yaml").read_text(encoding="utf-8"))["instructions"]
        assert len(texts) >= 40 and len(set(texts)) == len(texts)
        kinds = Counter()
        for text in texts:
            tokens = [t for s in sentences(text) for t in tokenize(text[s.start : s.end])]
            kinds.update({t.kind for t in tokens})
            kinds.update({"class"} if " class" in text else set())
            kinds.update({"imperative task"} if not text.startswith(("Write", "Create", "Implement")) else set())
        assert {"number", "quote", "code", "identifier", "class", "imperative task"} <= set(kinds), part
    assert get_generator("lexical_shuffle") is not None


# How many wordings an instruction has, and why no more -----------------------------------


@pytest.mark.parametrize("name", ["lexical_shuffle", "synonym_substitution"])
@settings(max_examples=30)
@given(base=st.sampled_from([*DEVELOPMENT, "Reverse a string.", "Write a function that checks whether x is odd."]))
def test_a_generator_says_how_many_wordings_an_instruction_has(name, base):
    generator = get_generator(name)
    room = generator.room(base, generator.params())
    variants = made(base, name, seed=3)
    assert len(variants) <= room.wordings
    assert (room.wordings == 0) == (variants == [])
    assert room.reason


def test_the_room_counts_every_distinct_wording_and_names_the_reason():
    shuffle_room = get_generator("lexical_shuffle").room
    synonym_room = get_generator("synonym_substitution").room
    assert shuffle_room(SPEC_EXAMPLE, LexicalShuffle()).wordings == 3
    assert (
        shuffle_room(SPEC_EXAMPLE, LexicalShuffle()).reason == "3 safe moves of a phrase or clause in this instruction"
    )
    assert shuffle_room("Reverse a string.", LexicalShuffle()).reason == (
        "no phrase or clause of this instruction may move safely"
    )
    # convert -> transform, change: two wordings, both made when ten are asked
    assert synonym_room("Convert a Roman numeral string to an integer.", SynonymSubstitution()).wordings == 2
    assert len(made("Convert a Roman numeral string to an integer.", "synonym_substitution", seed=1)) == 2
    # two sites of 2 and 1 options, at most two replaced: 2 + 1 + 2 * 1
    assert synonym_room(SPEC_EXAMPLE, SynonymSubstitution()).wordings == 5
    assert synonym_room("Reverse a string.", SynonymSubstitution()).reason == (
        "the synonym map has no word of this instruction outside protected text"
    )
    # moves on disjoint stretches combine: two coordinations, each one swap
    two = "Sort the letters and digits of a string, ignoring spaces and tabs."
    assert shuffle_room(two, LexicalShuffle(max_swaps=2)).wordings > shuffle_room(two, LexicalShuffle()).wordings
