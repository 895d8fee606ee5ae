"""A generator that makes fewer variants than a suite asks for says so, per case: how many were
asked, how many it made, and why no more, in `ironbench variants`, the run's console, the
store (`variant_shortfalls`) and the report."""

import json

import pytest
import yaml

from tests.conftest import SCRIPTED_TARGET, cli

SPEC_EXAMPLE = "Compile a list of email patterns into regex objects."
# Nothing may move, and the synonym map has none of its words.
BARE = "Print FizzBuzz."


def _suite(path, target=None):
    data = {
        "suite_id": "fewer",
        "mode": "adversarial",
        "cases": [
            {
                "id": "email_regex",
                "instruction": SPEC_EXAMPLE,
                "generators": [
                    {"generator": "lexical_shuffle", "count": 10, "seed": 1},
                    {"generator": "synonym_substitution", "count": 10, "seed": 1},
                ],
            },
            {
                "id": "fizz",
                "instruction": BARE,
                "generators": [
                    {"generator": "lexical_shuffle", "count": 3, "seed": 1},
                    {"generator": "synonym_substitution", "count": 3, "seed": 1},
                    {"generator": "whitespace_noise", "count": 2, "seed": 1},
                ],
            },
        ],
    }
    if target is not None:
        data["target"] = target
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


EXPECTED = {
    ("email_regex", "lexical_shuffle"): (
        10,
        3,
        "3 safe moves of a phrase or clause in this instruction (3 distinct wordings)",
    ),
    ("email_regex", "synonym_substitution"): (
        10,
        5,
        "the synonym map has 2 words or phrases of this instruction (5 distinct wordings)",
    ),
    ("fizz", "lexical_shuffle"): (3, 0, "no phrase or clause of this instruction may move safely"),
    ("fizz", "synonym_substitution"): (
        3,
        0,
        "the synonym map has no word of this instruction outside protected text",
    ),
}


def test_variants_says_per_case_how_many_were_asked_made_and_why(tmp_path):
    suite = _suite(tmp_path / "fewer.yaml")
    listing = cli("variants", str(suite), check=True).stdout
    cases = listing.split("\nadversarial/")
    email = next(c for c in cases if c.startswith("email_regex:"))
    fizz = next(c for c in cases if c.startswith("fizz:"))
    for (case_id, generator), (asked, made, why) in EXPECTED.items():
        line = f"  {generator} gave {made} of {asked} variants asked: {why}"
        assert line in (email if case_id == "email_regex" else fizz).splitlines()
    # the variants it did make are listed, and a generator that gave all it was asked says nothing
    assert email.count("lexical_shuffle/variant_") == 3 and email.count("synonym_substitution/variant_") == 5
    assert "whitespace_noise/variant_0002" in fizz and "whitespace_noise gave" not in fizz

    items = json.loads(cli("variants", str(suite), "--format", "json", check=True).stdout)
    short = {(i["case_id"], i["generator"]): (i["asked"], i["made"], i["note"]) for i in items if i["asked"]}
    assert short == EXPECTED
    assert all(i["asked"] is None for i in items if i["variant_id"])


def test_a_suite_whose_generators_make_all_they_are_asked_says_nothing_of_it(tmp_path):
    suite = tmp_path / "enough.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "suite_id": "enough",
                "mode": "adversarial",
                "cases": [
                    {
                        "id": "email_regex",
                        "instruction": SPEC_EXAMPLE,
                        "generators": [{"generator": "lexical_shuffle", "count": 3, "seed": 1}],
                    }
                ],
            }
        )
    )
    listing = cli("variants", str(suite), check=True).stdout
    assert listing.count("lexical_shuffle/variant_") == 3 and " gave " not in listing


@pytest.mark.slow
def test_a_run_says_it_on_its_console_records_it_and_its_report_shows_it(tmp_path):
    suite = _suite(tmp_path / "fewer.yaml", SCRIPTED_TARGET)
    out = tmp_path / "out"
    result = cli("run", str(suite), "--out", str(out), env={"SCRIPTED_OUTCOMES": json.dumps({})}, check=True)
    run_id = result.stdout.strip()
    console = result.stderr.splitlines()
    for (case_id, generator), (asked, made, why) in EXPECTED.items():
        assert f"adversarial/{case_id}: {generator} gave {made} of {asked} variants asked: {why}" in console

    # and the run's verdict says the figures rest on fewer wordings than asked
    said = " ".join(result.stderr.split())
    assert "• 2 instructions got fewer variants than asked: 8 made of 26 asked." in said
    assert (
        "lexical_shuffle: 3 of 13 (email_regex and fizz); synonym_substitution: 5 of 13 (email_regex and fizz)" in said
    )

    # recorded: a query reads it without running a generator again
    sql = tmp_path / "short.sql"
    sql.write_text("SELECT case_id, generator, asked, made, reason, wordings FROM variant_shortfalls ORDER BY seq")
    rows = json.loads(cli("query", str(sql), "--run", run_id, "--out", str(out), "-f", "json", check=True).stdout)
    assert {(r["case_id"], r["generator"]): (r["asked"], r["made"], r["reason"]) for r in rows} == EXPECTED
    assert {r["wordings"] for r in rows} == {3, 5, 0}

    # a report written again from the store shows it per case: the summary and the table
    page = out / run_id / "report.html"
    page.unlink()
    cli("report", run_id, "--out", str(out), check=True)
    text = page.read_text()
    assert "fewer than asked: lexical_shuffle 3 of 10, synonym_substitution 5 of 10" in text
    assert "fewer than asked: lexical_shuffle 0 of 3, synonym_substitution 0 of 3" in text
    assert text.count("Generators that made fewer variants than asked") == 2
    for _, _, why in EXPECTED.values():
        assert f"<td>{why}</td>" in text
