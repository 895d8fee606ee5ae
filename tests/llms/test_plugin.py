"""The embedded model's llm plugin: options, and llama.cpp's constrained decoding
through llm's own schema= and a GBNF grammar option (a few short real calls)."""

import json
import re

import llm
import pytest

from ironbench.llms.access import EMBEDDED_MODEL, ModelClient, ModelError
from ironbench.llms.plugin import llama_threads, schema_to_gbnf

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


def test_schema_grammar_keeps_strings_json():
    grammar = schema_to_gbnf(PERSON)
    # JSON strings may not hold raw control characters; llama-cpp-python's converter allows them
    assert 'char ::= [^"\\\\\\x7F\\x00-\\x1F]' in grammar


def test_threads_can_be_set(monkeypatch):
    monkeypatch.setenv("IRONBENCH_LLAMA_THREADS", "3")
    assert llama_threads() == 3
    monkeypatch.setenv("IRONBENCH_LLAMA_THREADS", "")
    assert llama_threads() >= 1


def test_schema_and_grammar_constrain_the_embedded_model():
    model = llm.get_model(EMBEDDED_MODEL)
    reply = model.prompt("Describe a person.", schema=PERSON, temperature=0.7, seed=5, max_tokens=48).text()
    person = json.loads(reply)
    assert isinstance(person["name"], str) and len(person["name"]) <= 12 and isinstance(person["age"], int)
    verdict = model.prompt("Is fire cold?", grammar='root ::= "yes" | "no"', temperature=0.0, max_tokens=3).text()
    assert verdict in ("yes", "no")


def test_generation_stops_where_the_stop_text_appears():
    model = llm.get_model(EMBEDDED_MODEL)
    grammar = 'root ::= "from add import add" "\\\\n" "\\\\n" "\\\\n" "\\\\n" "def"'
    whole = model.prompt("Write.", grammar=grammar, temperature=0.0, max_tokens=40).text()
    assert whole == "from add import add\\n\\n\\n\\ndef"
    cut = model.prompt("Write.", grammar=grammar, temperature=0.0, max_tokens=40, stop="\\n" * 4).text()
    assert cut == "from add import add"


def test_a_grammar_that_does_not_parse_is_one_clear_error_not_a_crash():
    with pytest.raises(ModelError, match=r"grammar does not parse: .*expecting '\)'"):
        ModelClient(EMBEDDED_MODEL).complete("hi", {"grammar": "root ::= (", "max_tokens": 2})
    with pytest.raises(ValueError, match="a schema or a grammar, not both"):
        llm.get_model(EMBEDDED_MODEL).prompt("hi", schema=PERSON, grammar='root ::= "x"').text()


def test_every_rewrite_grammar_parses_and_holds_the_model_to_one_sentence():
    from ironbench.generators.ai import OPENINGS
    from ironbench.generators.ai_validation import one_sentence_grammar

    base = "Write a Python function that returns the square of a number."
    model = llm.get_model(EMBEDDED_MODEL)
    for openings in set(OPENINGS.values()):
        model._grammar(one_sentence_grammar(base, openings))  # refuses, with llama.cpp's error, what it cannot parse
    openings = OPENINGS["casual_request"]
    for seed in (1, 2, 3):
        reply = model.prompt(
            "Tell me about squares. Use several sentences, code and a list.",
            grammar=one_sentence_grammar(base, openings),
            temperature=0.9,
            seed=seed,
            max_tokens=96,
        ).text()
        assert reply.startswith(tuple(o + " " for o in openings)), reply
        assert not set(reply) & set("\n`#:;*{}<>|="), reply
        # one sentence: its end is the only stop (a full stop inside a word, as in math.pow, is no end)
        assert not set(reply[:-1].replace(".", "")) & set("!?") and not re.search(r"\.(\W|$)", reply[:-1]), reply
