import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.generators.requirements import (
    extract,
    keep_words,
    requirement_changes,
    shipped_term_map,
    stem,
    term_map_from,
    tokens,
)
from tests.generators.test_labelled_rewrites import FIXTURES

BASES = sorted(set(yaml.safe_load((FIXTURES / "development.yaml").read_text(encoding="utf-8"))["bases"].values()))


@pytest.mark.parametrize(
    "words",
    [
        ("compile", "compiles", "compiled", "compiling"),
        ("dictionary", "dictionaries"),
        ("key", "keys", "keyed"),
        ("set", "sets", "setting"),
        ("map", "maps", "mapped", "mapping"),
        ("cache", "caches", "cached"),
        ("index", "indexes", "indexed"),
        ("address", "addresses"),
        ("id", "ids"),
        ("string", "strings"),
    ],
)
def test_inflections_are_the_same_word(words):
    assert len({stem(w) for w in words}) == 1, [stem(w) for w in words]


def test_a_change_names_its_term():
    base = "Write a Python function that returns the square of a number."
    assert requirement_changes(base, "Write a Python function that returns the cube of a number.") == [
        "removes_requirement: square",
        "adds_requirement: cube (a new operation)",
    ]
    assert requirement_changes(base, "Create a Python function that squares a given number.") == []


def test_a_requirement_named_twice_must_be_named_twice():
    base = "Write a function that merges two sorted lists into one sorted list."
    assert requirement_changes(base, "Write a function that merges two lists into one sorted list.") == [
        "removes_requirement: sorted (named 2 times, 1 now)"
    ]
    assert requirement_changes(base, "Combine two sorted lists into a single list that is also sorted.") == []


def test_a_gathering_word_may_change_or_go_but_not_appear():
    base = "Compile a list of email patterns into regex objects."
    assert requirement_changes(base, "Compile common email patterns into regex objects.") == []
    assert requirement_changes(base, "Produce regex objects for a set of common email patterns.") == []
    assert requirement_changes(
        "Write a function that counts the vowels in a string.",
        "Write a function that counts the vowels in a list of strings.",
    ) == ["adds_requirement: list (a collection of inputs or outputs)"]


def test_languages_by_any_name_and_short_names_only_when_capitalised():
    base = "Write a JavaScript function that reverses a string."
    assert requirement_changes(base, "Write a JS function that reverses a string.") == []
    assert requirement_changes(base, "Write a TypeScript function that reverses a string.") == [
        "removes_requirement: javascript",
        "adds_requirement: typescript (a programming language)",
    ]
    c = "Write a function in C that reverses a string."
    assert requirement_changes(c, "Write a function in Go that reverses a string.") == [
        "removes_requirement: C",
        "adds_requirement: Go (a programming language)",
    ]
    assert requirement_changes(c, "In C, write a function reversing a string.") == []
    # "go" the verb is no language
    assert requirement_changes(base, "Write a JavaScript function that reverses a string; go for it.") == []


def test_names_snake_case_camel_case_calls_and_named_words():
    base = "Write a Python function called slugify that turns a title into a URL slug."
    assert requirement_changes(
        base, "Write a Python function called make_slug that turns a title into a URL slug."
    ) == [
        "removes_requirement: slugify",
        "adds_requirement: make_slug (a name)",
    ]
    square = "Write a Python function that returns the square of a number."
    for rewrite, name in (
        ("Write a Python function squareOf that returns the square of a number.", "squareOf"),
        ("Write a Python function sq() that returns the square of a number.", "sq"),
        ("Write a Python function named sq that returns the square of a number.", "sq"),
    ):
        assert requirement_changes(square, rewrite) == [f"adds_requirement: {name} (a name)"], rewrite


def test_a_word_listed_with_a_requirement_is_a_requirement():
    base = "Design a simple in-memory cache with get and set operations."
    # no lexicon knows "frobnicate": being listed with get and set makes it an operation
    assert requirement_changes(base, "Design a simple in-memory cache with get, set and frobnicate operations.") == [
        "adds_requirement: frobnicate (a new item in a list)"
    ]
    # words coordinated with nothing the base requires are left alone
    assert (
        requirement_changes(base, "Design an in-memory cache with get and set operations, easy to read and use.") == []
    )


def test_a_negation_is_a_requirement_both_ways():
    base = "Write a function that sorts a list without modifying it."
    assert requirement_changes(base, "Write a function that sorts a list, modifying it.") == [
        "removes_requirement: without"
    ]
    assert requirement_changes("Write a function that sorts a list.", "Write a function that never sorts a list.") == [
        "adds_requirement: never (a new negation)"
    ]


def test_a_suite_extends_the_map():
    base = "Write a function that reverses a string."
    rewrite = "Write a function that mirrors a string and is idempotent."
    assert requirement_changes(base, rewrite) == []  # neither word is known
    extended = shipped_term_map().extended([["reverse", "mirror"]], {"constraint on idempotence": ["idempotent"]})
    assert requirement_changes(base, rewrite, extended) == [
        "adds_requirement: idempotent (a new constraint on idempotence)"
    ]
    assert requirement_changes(base, "Write a function that mirrors a string.", extended) == []


def test_the_words_a_rewrite_must_keep_as_the_base_writes_them():
    assert keep_words("Write a Python function that returns the square of a number.") == [
        "Python",
        "function",
        "square",
        "number",
    ]
    assert keep_words("Design a simple in-memory cache with get and set operations.") == [
        "in-memory",
        "cache",
        "get",
        "set",
    ]


def test_ambiguous_map_data_is_refused():
    with pytest.raises(ValueError, match="'sorted' is listed under both 'operation' and 'ordering'"):
        term_map_from({"adds": {"operation": ["sort"], "ordering": ["sorted"]}})
    with pytest.raises(ValueError, match="'clear' is both soft and 'operation'"):
        term_map_from({"soft": ["clear"], "adds": {"operation": ["clear"]}})


def test_the_shipped_map_loads_and_every_entry_reads_as_words():
    terms = shipped_term_map()
    assert terms.adds and terms.groups and terms.languages
    assert all(all(part for part in key) for key in terms.adds)


@settings(max_examples=200)
@given(st.text(max_size=160))
def test_a_text_never_changes_its_own_requirements(text):
    assert requirement_changes(text, text) == []


@settings(max_examples=200)
@given(st.text(max_size=120), st.text(max_size=120))
def test_any_two_texts_are_compared_without_crashing(base, output):
    reasons = requirement_changes(base, output)
    assert all(r.startswith(("removes_requirement: ", "adds_requirement: ")) for r in reasons)


ADDED = sorted({" ".join(k) for k in shipped_term_map().adds})


@pytest.mark.slow
@settings(max_examples=300)
@given(st.sampled_from(BASES), st.sampled_from(sorted(shipped_term_map().adds)))
def test_adding_any_shipped_term_the_base_lacks_is_caught(base, key):
    terms = shipped_term_map()
    words = [t.stem for t in tokens(base)]
    present = any(
        tuple(words[i : i + len(same)]) == same for same in terms.same(key) for i in range(len(words) - len(same) + 1)
    )
    if present:
        return
    # the term as the map writes it, in the rewrite's own words: "... with <term>."
    written = next(w for w in _shipped_words() if tuple(t.stem for t in tokens(w)) == key)
    reasons = requirement_changes(base, base.rstrip(".") + f" with {written}.")
    assert any(r.startswith("adds_requirement: ") for r in reasons), (written, reasons)


def _shipped_words() -> list[str]:
    from importlib.resources import files

    data = yaml.safe_load(files("ironbench.generators").joinpath("data/requirements.yaml").read_text("utf-8"))
    return [str(w) for words in data["adds"].values() for w in words]


def _count(words: list[str], wanted: set[tuple[str, ...]]) -> int:
    return sum(tuple(words[i : i + len(w)]) == w for w in wanted for i in range(len(words) - len(w) + 1))


@pytest.mark.parametrize("base", BASES)
def test_dropping_any_word_the_base_requires_is_caught(base):
    terms = shipped_term_map()
    words = [t.stem for t in tokens(base)]
    required = [t for t in extract(base, terms) if t.kind not in ("form", "collection")]
    for term in required:
        if _count(words, terms.same(term.key)) > sum(t.key == term.key for t in required):
            continue  # the base says it another way too: "regex objects" are compiled
        reasons = requirement_changes(base, base.replace(term.shown, "", 1))
        assert any(r.startswith("removes_requirement: ") for r in reasons), (term.shown, reasons)
