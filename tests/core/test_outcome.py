from pathlib import Path

import pytest

from ironbench.core.errors import IronbenchError
from ironbench.core.outcome import parse_outcome

# Real transcripts of the real Ironclad (copied from shared/fixtures/ironclad).
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ironclad"


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
    stdout = (
        "[-] FAIL (Attempt 1/3). Triggering repair...\n[*] Attempting repair...\n"
        "[+] Verified after 1 repairs.\n[SUCCESS] Verified brick saved to: verified_bricks/add.py\n"
    )
    outcome = parse_outcome(0, stdout)
    assert outcome.signature() == (True, None, 2, 1)
    assert outcome.brick_path == "verified_bricks/add.py"


def test_first_time_success():
    assert parse_outcome(0, "[SUCCESS] Verified brick saved to: b/x.py\n").signature() == (True, None, 1, 0)


def test_repair_producing_invalid_output_is_a_repair_failure_without_another_validation():
    # Ironclad aborts right after an invalid repair: one validation ran, one repair was asked for.
    stdout = "[-] FAIL (Attempt 1/3). Triggering repair...\n[*] Attempting repair...\n[!] Repair produced invalid JSON. Aborting.\n"
    assert parse_outcome(1, stdout).signature() == (False, "repair", 1, 1)


def test_real_repair_abort_after_two_repairs_transcript():
    assert parse_outcome(1, transcript("repair_abort_after_two_repairs")).signature() == (False, "repair", 2, 2)


@pytest.mark.parametrize(
    ("name", "line", "counts"),
    [
        ("outage_during_generation", "[!] Error connecting to Ollama: Connection error", (0, 0)),
        ("outage_during_repair", "[!] Repair Error: Server disconnected without sending a response.", (1, 1)),
    ],
)
def test_real_outages_are_infrastructure_errors_not_target_failures(name, line, counts):
    outcome = parse_outcome(1, transcript(name))
    assert outcome.infra_error == line
    assert not outcome.success and outcome.failure_stage == "infra_error"
    assert (outcome.attempts, outcome.repairs_triggered) == counts


def test_a_repair_whose_output_was_not_json_is_the_model_failing_not_the_backend():
    outcome = parse_outcome(1, transcript("repair_abort_after_two_repairs"))
    assert outcome.infra_error is None and outcome.failure_stage == "repair"


def test_a_timeout_keeps_the_counts_printed_before_the_kill():
    stdout = transcript("timeout_mid_repair")
    assert parse_outcome(None, stdout, timed_out=True).signature() == (False, "timeout", 3, 3)
    assert parse_outcome(None, "", timed_out=True).signature() == (False, "timeout", 0, 0)


def test_a_timeout_after_an_outage_line_is_still_an_infrastructure_error():
    outcome = parse_outcome(None, "[!] Error connecting to Ollama: Connection error\n", timed_out=True)
    assert outcome.failure_stage == "infra_error" and outcome.infra_error.startswith("[!] Error connecting")


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


def test_rules_can_add_conditionally_and_flag_infrastructure_errors(tmp_path):
    rules = tmp_path / "cond.yaml"
    rules.write_text(
        "name: cond\nmarkers: {ok: '^DONE', retry: '^RETRY', end: '^GAVE UP', down: '^BACKEND DOWN.*$'}\n"
        "success: {exit_code: 0, markers: [ok]}\nfailure_stage: [{stage: validation, marker: end}]\n"
        "infra_errors: [down]\n"
        "attempts: {count: retry, plus: 1, plus_when: [ok, end]}\nrepairs_triggered: {count: retry}\n"
    )
    assert parse_outcome(0, "RETRY\nDONE\n", str(rules)).signature() == (True, None, 2, 1)
    assert parse_outcome(1, "RETRY\nRETRY\n", str(rules)).signature() == (False, "unknown", 2, 2)
    assert parse_outcome(1, "RETRY\nGAVE UP\n", str(rules)).signature() == (False, "validation", 2, 1)
    assert parse_outcome(1, "RETRY\nBACKEND DOWN: 503\n", str(rules)).infra_error == "BACKEND DOWN: 503"


def test_a_rule_naming_an_undefined_marker_is_refused(tmp_path):
    rules = tmp_path / "typo.yaml"
    rules.write_text(
        "name: typo\nmarkers: {ok: '^DONE'}\nsuccess: {markers: [ok]}\nfailure_stage: []\n"
        "attempts: {count: ok, plus_when: [okk]}\nrepairs_triggered: {count: ok}\n"
    )
    with pytest.raises(IronbenchError, match="marker 'okk' is used but not defined"):
        parse_outcome(0, "DONE", str(rules))


def test_broken_rules_file_is_a_clear_error(tmp_path):
    rules = tmp_path / "broken.yaml"
    rules.write_text("name: x\nmarkers: {a: '('}\n")
    with pytest.raises(IronbenchError, match="broken.yaml: invalid outcome rules"):
        parse_outcome(0, "x", str(rules))


from hypothesis import given
from hypothesis import strategies as st


def ironclad_main(generated: bool, valid: list[bool], repair_json: list[bool]) -> tuple[int, str, int, int]:
    """Ironclad's main() loop (ironclad.py), printing what it prints: returns the exit
    code, stdout, and how many validations and repairs it really ran."""
    lines: list[str] = []
    if not generated:
        return 1, "[!] Validation Failed: Model output was not valid JSON.\n[X] INCINERATED: Output invalid.\n", 0, 0
    validations, is_valid, attempts = 1, valid[0], 0
    while not is_valid and attempts < 3:
        lines += [f"[-] FAIL (Attempt {attempts + 1}/3). Triggering repair...", "[*] Attempting repair..."]
        if not repair_json[attempts]:
            lines += [
                "[!] Repair Error: Model output was not valid JSON.",
                "[!] Repair produced invalid JSON. Aborting.",
            ]
            return 1, "\n".join(lines) + "\n", validations, attempts + 1
        is_valid = valid[validations]
        validations += 1
        attempts += 1
    if is_valid:
        lines += [f"[+] Verified after {attempts} repairs.", "[SUCCESS] Verified brick saved to: verified_bricks/f.py"]
        return 0, "\n".join(lines) + "\n", validations, attempts
    lines.append("[-] FINAL FAILURE.")
    return 1, "\n".join(lines) + "\n", validations, attempts


@given(st.booleans(), st.lists(st.booleans(), min_size=4, max_size=4), st.lists(st.booleans(), min_size=3, max_size=3))
def test_counts_are_the_validations_and_repairs_ironclads_loop_ran(generated, valid, repair_json):
    exit_code, stdout, validations, repairs = ironclad_main(generated, valid, repair_json)
    outcome = parse_outcome(exit_code, stdout)
    assert (outcome.attempts, outcome.repairs_triggered) == (validations, repairs)
    assert outcome.success == (exit_code == 0) and outcome.infra_error is None
    assert 0 <= outcome.attempts <= 4 and outcome.repairs_triggered <= 3
