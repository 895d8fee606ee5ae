import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.generators.ai_validation import (
    check_focus_shift,
    check_length,
    check_no_implementation_language,
    check_same_deliverables,
    normalise_output,
    one_line_grammar,
    one_sentence_grammar,
    validate_rewrite,
)

BASE = "Write a Python class implementing a simple in-memory key-value cache with get, set and a maximum size."


def test_a_faithful_rewrite_passes():
    assert (
        validate_rewrite(
            BASE,
            "Create a Python class that provides a simple in-memory key-value cache "
            "supporting get, set and a maximum size.",
        )
        == []
    )


@pytest.mark.parametrize(
    "output, reason",
    [
        ("", "empty output"),
        ("   \n ", "empty output"),
        ("Cache.", "a rewrite must be between 1/3 and 3 times as long"),
        (BASE * 4, "a rewrite must be between 1/3 and 3 times as long"),
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
        (
            "class Cache: def get(self, key): return self.data[key]  # in-memory key-value, set, maximum size",
            "code instead of an instruction",
        ),
        ("Revisit the task exactly, with a cache.", "keeps 1 of the base's 11 content words"),
    ],
)
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
    assert (
        check_same_deliverables(
            BASE, "We need a Python class: a simple in-memory key-value cache with get, set and a maximum size."
        )
        == []
    )
    assert check_same_deliverables(BASE, BASE + " Add a helper function.") == ["deliverables changed from 1 to 3"]


def test_restatement_says_what_not_how():
    assert (
        check_no_implementation_language(
            BASE, "A Python class that keeps key-value pairs in memory, with get, set and a size limit."
        )
        == []
    )
    assert check_no_implementation_language(BASE, BASE + " Use an OrderedDict.") == [
        "restatement adds implementation language 'ordereddict'"
    ]


def test_length_message_says_what_was_checked():
    base = "x" * 71
    assert check_length(base, "y" * 20) == [
        "length 20 is 0.28 times the base length 71; a rewrite must be between 1/3 and 3 times as long"
    ]
    assert check_length(base, "y" * 24) == []  # 24/71 >= 1/3
    assert check_length(base, "y" * 213) == [] and check_length(base, "y" * 214) != []


@pytest.mark.parametrize(
    "output",
    [
        "You can reverse the order of words in a sentence using slicing.",
        "Reversing the words in a sentence can be a challenge.",
        "A function that counts the vowels in a string is called.",
        "To square a number in Python, this can be done with a function.",
    ],
)
def test_advice_and_remarks_about_the_task_are_commentary(output):
    assert any(r.startswith("meta-commentary") for r in validate_rewrite(BASE, output))


def test_meta_commentary_names_its_signs():
    assert validate_rewrite(BASE, "Here is the rewritten instruction: " + BASE) == [
        "meta-commentary ('here is', 'rewritten', 'instruction')"
    ]


@pytest.mark.parametrize(
    "raw",
    [
        '"Create a Python class that provides a simple in-memory key-value cache with get, set and a maximum size."',
        "`Create a Python class that provides a simple in-memory key-value cache with get, set and a maximum size.`",
        (
            "Rewritten instruction: Create a Python class that provides a simple in-memory key-value cache with get, set "
            "and a maximum size.\n"
        ),
        (
            'Here is the rewritten instruction: "Create a Python class that provides a simple in-memory key-value cache '
            'with get, set and a maximum size."'
        ),
        (
            "```\nCreate a Python class that provides a simple in-memory key-value cache with get, set and a maximum size."
            "\n```"
        ),
        (
            "\u201cCreate a Python class that provides a simple in-memory key-value cache with get, set and a maximum size."
            "\u201d  "
        ),
    ],
)
def test_trivially_wrapped_rewrites_pass_once_normalised(raw):
    assert validate_rewrite(BASE, raw) != []  # as written, the wrapping is rejected ...
    normalised = normalise_output(raw)
    assert normalised.startswith("Create a Python class") and normalised.endswith("maximum size.")
    assert validate_rewrite(BASE, normalised) == []  # ... and the rewrite inside it is accepted


def test_normalisation_removes_wrapping_only():
    assert normalise_output('"get" and "set" only') == '"get" and "set" only'  # not one quoted whole
    assert normalise_output("Sure! Here it is: x") == "Sure! Here it is: x"  # commentary stays to be judged
    assert normalise_output("Note: keep it small.") == "Note: keep it small."


def test_one_line_grammar_fits_the_base():
    assert one_line_grammar(BASE) == "root ::= [A-Za-z] [^\\n`]*"
    assert one_line_grammar("`cache` class") == "root ::= [^\\n] [^\\n]*"
    assert one_line_grammar(BASE, ("Write", "Can you")) == 'root ::= ("Write" | "Can you") " " [^\\n`]*'


def test_one_sentence_grammar_allows_one_plain_sentence_opening_as_asked():
    body = '([^\\n.!?`#:;*{}<>|=] | "." [A-Za-z0-9_])*'
    assert one_sentence_grammar(BASE) == f"root ::= [A-Z] {body} [.?!]"
    assert one_sentence_grammar(BASE, ("Let's", 'Say "hi"')) == f'root ::= ("Let\'s" | "Say \\"hi\\"") " " {body} [.?!]'
    # characters the base itself uses stay allowed; no final stop in the base, none required
    assert one_sentence_grammar("Map key: value pairs") == (
        'root ::= [A-Z] ([^\\n.!?`#;*{}<>|=] | "." [A-Za-z0-9_])* [.?!]?'
    )
    # several sentences, an inner full stop, or no leading letter: one line is all it can ask
    for base in ("Write a fast function. Also keep the key.", "Use e.g. this one.", "`cache` class."):
        assert one_sentence_grammar(base) == one_line_grammar(base)


@given(st.text(max_size=200))
def test_normalisation_is_idempotent_and_never_grows(text):
    once = normalise_output(text)
    assert len(once) <= len(text) and normalise_output(once) == normalise_output(normalise_output(once))


@given(st.text(max_size=200))
def test_validation_never_crashes_and_rejects_the_empty(text):
    reasons = validate_rewrite(BASE, text)
    assert isinstance(reasons, list)
    if not text.strip():
        assert reasons == ["empty output"]
