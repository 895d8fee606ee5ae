"""`show` names each adversarial case's most sensitive generator, with its rate and n."""

from ironbench.runner import start_run
from ironbench.runs import format_show, sensitivity_verdicts, show_run
from tests.test_adversarial_stress import adversarial_suite


def test_the_highest_material_change_rate_wins_with_its_evidence():
    rows = [("a", "whitespace_noise", 5, 1), ("a", "punctuation_noise", 4, 3), ("a", "lexical_shuffle", 2, 1),
            ("b", "whitespace_noise", 3, 0), ("b", "synonym_substitution", 3, 0)]
    a, b = sensitivity_verdicts(rows)
    assert (a["case_id"], a["generator"], a["material"], a["variants"]) == ("a", "punctuation_noise", 3, 4)
    assert a["text"] == ("most sensitive generator: punctuation_noise, 3/4 variants changed the outcome materially "
                         "(75%, Wilson 95% 30%–95%); next: lexical_shuffle 1/2")
    assert b["generator"] is None
    assert b["text"] == "no generator changed the outcome materially (0 of 6 variants of 2 generator(s))"


def test_ties_are_named_and_the_larger_sample_leads():
    (verdict,) = sensitivity_verdicts([("c", "lexical_shuffle", 2, 1), ("c", "whitespace_noise", 4, 2)])
    assert verdict["generator"] == "whitespace_noise" and verdict["text"].endswith("; tied with lexical_shuffle")


def test_show_names_the_most_sensitive_generator(paths, script):
    script({"c/baseline": ["success"], "c/punctuation_noise": ["generation"], "c/whitespace_noise": ["success"]})
    run_id = start_run(adversarial_suite([{"generator": "whitespace_noise", "count": 3, "seed": 1},
                                          {"generator": "punctuation_noise", "count": 3, "seed": 2}]), paths)
    header, cases, verdicts = show_run(paths.store_path, run_id)
    (sensitivity,) = [v for v in verdicts if v["kind"] == "sensitivity"]
    assert (sensitivity["generator"], sensitivity["material"], sensitivity["variants"]) == ("punctuation_noise", 3, 3)
    text = format_show(header, cases, verdicts)
    assert ("sensitivity c: most sensitive generator: punctuation_noise, 3/3 variants changed the outcome "
            "materially (100%, Wilson 95% 44%–100%); next: whitespace_noise 0/3") in text
