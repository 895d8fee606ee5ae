import pytest
from hypothesis import given, strategies as st

from ironbench.generators.ai_validation import (
    check_focus_shift, check_no_implementation_language, check_same_deliverables, clean_model_output,
    validate_rewrite,
)

BASE = "Write a Python class implementing a simple in-memory key-value cache with get, set and a maximum size."


def test_a_faithful_rewrite_passes():
    assert validate_rewrite(BASE, "Create a Python class that provides a simple in-memory key-value cache "
                                  "supporting get, set and a maximum size.") == []


@pytest.mark.parametrize("output, reason", [
    ("", "empty output"),
    ("   \n ", "empty output"),
    ("Cache.", "outside ±200%"),
    (BASE * 4, "outside ±200%"),
    (BASE + " Include tests.", "forbidden token 'tests'"),
    (BASE.replace("simple", "debug-friendly"), "forbidden token 'debug'"),
    (BASE + " Validate every key.", "new verb implying extra work 'validate'"),
    (BASE + " Also add a reset method.", "extra sentence(s) adding goals"),
    (BASE + " Return the result as JSON.", "new reference to format, performance or tooling 'json'"),
    (BASE.replace("simple", "fast"), "new reference to format, performance or tooling 'fast'"),
    ("Here is the rewritten instruction: " + BASE, "meta-commentary"),
    ("Sure! " + BASE, "meta-commentary"),
    ('"' + BASE + '"', "meta-commentary"),
    ("Instead of a class, you can use the `dict` type with get, set and a maximum size.", "meta-commentary"),
])
def test_each_rule_rejects_what_the_spec_rejects(output, reason):
    reasons = validate_rewrite(BASE, output)
    assert any(reason in r for r in reasons), reasons


def test_words_already_in_the_base_are_not_new():
    base = "Write a fast function that returns the value as JSON. Also keep the key."
    assert validate_rewrite(base, "Create a fast function returning the value as JSON. Also keep the key.") == []


def test_focus_shift_may_only_shift_emphasis():
    assert check_focus_shift(BASE, BASE.replace("simple", "clear, simple")) == []
    assert check_focus_shift(BASE, BASE.replace("simple", "thread-safe")) == ["focus shift introduces 'thread-safe'"]
    assert "focus shift introduces 'eviction'" in check_focus_shift(BASE, BASE + " Use eviction.")


def test_register_shift_keeps_the_deliverables():
    assert check_same_deliverables(BASE, "We need a Python class: a simple in-memory key-value cache with get, "
                                         "set and a maximum size.") == []
    assert check_same_deliverables(BASE, BASE + " Add a helper function.") == ["deliverables changed from 1 to 3"]


def test_restatement_says_what_not_how():
    assert check_no_implementation_language(BASE, "A Python class that keeps key-value pairs in memory, with get, "
                                                  "set and a size limit.") == []
    assert check_no_implementation_language(BASE, BASE + " Use an OrderedDict.") == [
        "restatement adds implementation language 'ordereddict'"]


def test_clean_model_output_strips_fences_only():
    assert clean_model_output("```\nWrite x.\n```") == "Write x."
    assert clean_model_output("  Write x.  ") == "Write x."


@given(st.text(max_size=200))
def test_validation_never_crashes_and_rejects_the_empty(text):
    reasons = validate_rewrite(BASE, text)
    assert isinstance(reasons, list)
    if not text.strip():
        assert reasons == ["empty output"]
