from pathlib import Path

import pytest

from ironbench.errors import IronbenchError
from ironbench.outcome import parse_outcome

# Real transcripts of the real Ironclad (copied from shared/fixtures/ironclad).
FIXTURES = Path(__file__).parent / "fixtures" / "ironclad"


def transcript(name: str) -> str:
    return (FIXTURES / f"{name}.stdout.txt").read_text()


def test_real_generation_failure_transcript():
    outcome = parse_outcome(1, transcript("generation_failed"))
    assert outcome.signature() == (False, "generation", 0, 0)


def test_real_validation_exhausted_transcript():
    # Three failed validations, three repairs, and the final validation after the last repair.
    outcome = parse_outcome(1, transcript("validation_exhausted"))
    assert outcome.signature() == (False, "validation", 4, 3)


def test_success_after_repairs_reports_brick_path():
    stdout = ("[-] FAIL (Attempt 1/3). Triggering repair...\n[*] Attempting repair...\n"
              "[+] Verified after 1 repairs.\n[SUCCESS] Verified brick saved to: verified_bricks/add.py\n")
    outcome = parse_outcome(0, stdout)
    assert outcome.signature() == (True, None, 2, 1)
    assert outcome.brick_path == "verified_bricks/add.py"


def test_first_time_success():
    assert parse_outcome(0, "[SUCCESS] Verified brick saved to: b/x.py\n").signature() == (True, None, 1, 0)


def test_repair_producing_invalid_output_is_a_repair_failure():
    stdout = "[-] FAIL (Attempt 1/3). Triggering repair...\n[*] Attempting repair...\n[!] Repair produced invalid JSON. Aborting.\n"
    assert parse_outcome(1, stdout).signature() == (False, "repair", 2, 1)


def test_brick_saved_with_nonzero_exit_is_not_success():
    outcome = parse_outcome(1, "[SUCCESS] Verified brick saved to: b/x.py\n")
    assert not outcome.success and outcome.failure_stage == "unknown"


@pytest.mark.parametrize("stdout", ["", "Traceback (most recent call last):\n", "\x00\xff garbage"])
def test_unrecognised_output_is_unknown_never_a_crash(stdout):
    assert parse_outcome(1, stdout).signature() == (False, "unknown", 0, 0)


def test_rules_are_data_a_custom_file_works(tmp_path):
    rules = tmp_path / "mine.yaml"
    rules.write_text(
        "name: mine\nmarkers: {ok: '^DONE', bad: '^OOPS', retry: '^RETRY'}\n"
        "success: {exit_code: 0, markers: [ok]}\nfailure_stage: [{stage: generation, marker: bad}]\n"
        "attempts: {count: retry, plus: 1}\nrepairs_triggered: {count: retry}\n"
    )
    assert parse_outcome(0, "RETRY\nRETRY\nDONE\n", str(rules)).signature() == (True, None, 3, 2)
    assert parse_outcome(1, "OOPS\n", str(rules)).signature() == (False, "generation", 1, 0)


def test_broken_rules_file_is_a_clear_error(tmp_path):
    rules = tmp_path / "broken.yaml"
    rules.write_text("name: x\nmarkers: {a: '('}\n")
    with pytest.raises(IronbenchError, match="broken.yaml: invalid outcome rules"):
        parse_outcome(0, "x", str(rules))
