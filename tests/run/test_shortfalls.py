"""The plan says, per case and generator, when a generator made fewer variants than asked, and
why: the generator's own account (its `room`) where it has one, else what the seeded draws found."""

from ironbench.run.planner import Variant, plan
from ironbench.suite.models import parse_suite


def _tracks(*cases: dict):
    suite = parse_suite({"suite_id": "s", "mode": "adversarial", "cases": list(cases)}, "s.yaml")
    return {t.case_id: t for t in plan(suite)}


def _case(case_id: str, instruction: str, *generators: dict) -> dict:
    return {"id": case_id, "instruction": instruction, "generators": list(generators)}


def test_a_generator_with_room_says_how_many_wordings_the_instruction_has():
    email = "Compile a list of email patterns into regex objects."
    track = _tracks(_case("e", email, {"generator": "lexical_shuffle", "count": 10, "seed": 1}))["e"]
    (short,) = track.shortfalls
    assert (short.generator, short.asked, short.made, short.wordings, short.dropped) == ("lexical_shuffle", 10, 3, 3, 0)
    assert short.reason == "3 safe moves of a phrase or clause in this instruction (3 distinct wordings)"
    assert len(track.variants) == 3
    assert short.line("adversarial/e") == (
        "adversarial/e: lexical_shuffle gave 3 of 10 variants asked: "
        "3 safe moves of a phrase or clause in this instruction (3 distinct wordings)"
    )


def test_a_generator_that_makes_what_it_is_asked_is_not_short():
    email = "Compile a list of email patterns into regex objects."
    track = _tracks(_case("e", email, {"generator": "lexical_shuffle", "count": 3, "seed": 1}))["e"]
    assert track.shortfalls == () and len(track.variants) == 3


def test_candidates_dropped_for_the_contract_are_counted_in_why():
    track = _tracks(
        _case(
            "b",
            "Print FizzBuzz.",
            {"generator": "synonym_substitution", "count": 4, "seed": 1, "synonyms": {"Print": ["Test"]}},
        )
    )["b"]
    (short,) = track.shortfalls
    assert (short.made, short.wordings, short.dropped) == (0, 1, 1)
    assert short.reason == (
        "the synonym map has 1 word of this instruction (1 distinct wording); 1 dropped for the single-string contract"
    )


def test_a_generator_without_room_says_what_its_seeded_draws_found():
    instruction = "Write a function that returns the sum of a list of numbers."
    track = _tracks(_case("a", instruction, {"generator": "ambiguity_injection_light", "count": 10, "seed": 1}))["a"]
    (short,) = track.shortfalls
    assert short.wordings is None and short.made == len(track.variants) < 10
    assert short.reason == f"40 seeded draws found {short.made} distinct variants (the others repeated)"


def test_an_ai_generator_is_short_only_once_its_variants_are_made():
    case = _case("a", "Write a function that reverses a string.", {"generator": "ai_rewrite", "count": 2, "seed": 1})
    suite = parse_suite({"suite_id": "s", "mode": "adversarial", "cases": [case]}, "s.yaml")
    assert plan(suite)[0].shortfalls == ()  # previewed: its variants are written at run time
    made = Variant("a", "ai_rewrite", "ai_rewrite/variant_0001", 1, "Reverse a string.", "x", 1, {}, 1)
    (short,) = plan(suite, {("a", "ai_rewrite"): [made]})[0].shortfalls
    assert (short.asked, short.made) == (2, 1)
    assert short.reason.startswith("the model's answers were rejected")
