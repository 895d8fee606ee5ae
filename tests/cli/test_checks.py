"""Checks through the front door: `ironbench run humaneval`, a suite's own checks, `ironbench check`."""

import json
import shlex
import sqlite3
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import SCRIPTED_TARGET, cli, past_fence
from tests.fixtures.humaneval_target import target, write_data


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return write_data(tmp_path_factory.mktemp("humaneval") / "problems.json")


def rows(out: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        return conn.execute(sql, args).fetchall()


def run(out: Path, suite: str, target_: str | list[str], *args: str, env: dict | None = None) -> str:
    argv = target_ if isinstance(target_, str) else " ".join(target_)
    result = cli("run", suite, "--target", argv, "--out", str(out), "-q", "--no-report", *args, env=env, check=True)
    return result.stdout.strip()


@pytest.fixture(scope="module")
def canonical(data, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("canonical")
    return out, run(out, "humaneval", target("canonical", data), "--jobs", "4")


@pytest.mark.slow
def test_canonical_solutions_are_correct_on_all_164(canonical):
    out, run_id = canonical
    assert rows(out, "SELECT count(*), sum(success), sum(correct) FROM invocations") == [(164, 164, 164)]
    assert rows(out, "SELECT verdict, count(*) FROM checks GROUP BY 1") == [("correct", 164)]
    show = cli("show", run_id, "--out", str(out), check=True).stdout
    assert past_fence(show.splitlines())[0].startswith("VERIFIED BUT WRONG: 0 of 164 ")
    assert "correct: 164 of 164 runs (100.0%" in show


@pytest.mark.slow
def test_check_rechecks_a_run_without_invoking_anything(data, tmp_path):
    out = tmp_path / "out"
    run_id = run(out, "humaneval", target("canonical", data), "--sample", "6", "--jobs", "2")
    invoked = rows(out, "SELECT count(*) FROM events WHERE type = 'invocation_started'")
    # the same bricks against a check every one of them fails
    suite = tmp_path / "strict.yaml"
    cases = [{"id": f"humaneval_{n}", "instruction": "Write a function."} for n in range(164)]
    strict = {"python": "def check(candidate):\n    assert False\n", "entry_point": "no_such_function"}
    suite.write_text(yaml.safe_dump({"suite_id": "strict", "mode": "baseline", "check": strict, "cases": cases}))
    result = cli("check", run_id, "--suite", str(suite), "--out", str(out), "--jobs", "2", check=True)
    assert result.stdout.strip() == f"{run_id}: checked 6 saved bricks (6 no_entry_point)"
    assert rows(out, "SELECT count(*) FROM events WHERE type = 'invocation_started'") == invoked
    assert rows(out, "SELECT count(*), sum(recheck) FROM checks") == [(6, 6)]
    assert rows(out, "SELECT sum(correct), count(DISTINCT check_verdict) FROM invocations") == [(0, 1)]
    case = rows(out, "SELECT min(case_id) FROM invocations")[0][0]
    summary = json.loads((out / run_id / f"baseline/{case}/run_001/summary.json").read_text())
    assert summary["check"]["verdict"] == "no_entry_point" and summary["check"]["recheck"] is True
    aggregate = json.loads((out / run_id / f"baseline/{case}/aggregate.json").read_text())
    assert (aggregate["correct"], aggregate["verified_but_wrong"]) == (0, 1)
    # and back with the recorded suite's checks
    cli("check", run_id, "--out", str(out), "--jobs", "2", check=True)
    assert rows(out, "SELECT sum(correct) FROM invocations") == [(6,)]
    # the tree rebuilt from the events alone says the same
    before = (out / run_id / f"baseline/{case}/aggregate.json").read_text()
    cli("project", "--rebuild", run_id, "--out", str(out), check=True)
    assert (out / run_id / f"baseline/{case}/aggregate.json").read_text() == before


BROKEN = {"wrong": "wrong", "no_entry": "no_entry_point", "crash": "import_error", "loop": "timeout"}


@pytest.mark.slow
def test_exactly_the_broken_bricks_are_verified_but_wrong(data, tmp_path):
    out = tmp_path / "out"
    sample = ["--sample", "10", "--seed", "7"]
    from ironbench.suite.humaneval import humaneval_suite
    from ironbench.suite.shipped import sample_cases

    chosen = [c.id.removeprefix("humaneval_") for c in sample_cases(humaneval_suite(), 10, 7, "humaneval").cases]
    broken = dict(zip(chosen[1::2], BROKEN, strict=False))  # every other sampled problem, one of each kind
    mode = "canonical," + ",".join(f"{kind}={n}" for n, kind in broken.items())
    run_id = run(out, "humaneval", target(mode, data), *sample, "--jobs", "3", env={"IRONBENCH_CHECK_TIMEOUT": "2"})
    found = rows(
        out,
        "SELECT case_id, check_verdict FROM invocations WHERE success AND NOT correct ORDER BY CAST(substr(case_id, 11) AS INT)",
    )
    assert found == [(f"humaneval_{n}", BROKEN[kind]) for n, kind in broken.items()]
    assert rows(out, "SELECT count(*), sum(correct) FROM invocations") == [(10, 6)]
    show = past_fence(cli("show", run_id, "--out", str(out), check=True).stdout.splitlines())
    assert show[0].startswith("VERIFIED BUT WRONG: 4 of 10 ")
    assert sorted(line.split()[0] for line in show[1:5]) == sorted(f"humaneval_{n}" for n in broken)
    output = rows(out, "SELECT output FROM checks WHERE verdict = 'import_error'")[0][0]
    assert "this brick cannot be imported" in output  # the check's output, one query away
    # the report (and the viewer's run page, drawn by the same code): verified but wrong first,
    # each run's check output one click away
    page = Path(cli("report", run_id, "--out", str(out), check=True).stdout.strip()).read_text()
    assert page.index('id="checks"') < page.index('id="outcomes"') < page.index('id="baseline"')
    assert "Verified but wrong: 4 of 10" in page
    assert page.count("<details><summary>") >= 4 and "this brick cannot be imported" in page


@pytest.mark.slow
def test_a_broken_third_of_humaneval_is_caught_exactly(data, tmp_path):
    kinds = ("wrong", "no_entry", "crash")
    broken = {n: kinds[k % 3] for k, n in enumerate(range(0, 164, 3))}  # 55 problems, a third
    mode = "canonical," + ",".join(
        f"{kind}={'+'.join(str(n) for n, k in broken.items() if k == kind)}" for kind in kinds
    )
    out = tmp_path / "out"
    run(out, "humaneval", target(mode, data), "--jobs", "2")
    found = rows(out, "SELECT case_id, check_verdict FROM invocations WHERE NOT correct")
    expected = {"wrong": "wrong", "no_entry": "no_entry_point", "crash": "import_error"}
    assert sorted(found) == sorted((f"humaneval_{n}", expected[kind]) for n, kind in broken.items())
    assert rows(out, "SELECT count(*), sum(success), sum(correct) FROM invocations") == [(164, 164, 164 - 55)]


@pytest.mark.slow
def test_the_same_bricks_get_the_same_verdicts_whatever_jobs(data, tmp_path):
    mode = "canonical,wrong=16+115,no_entry=126"
    verdicts = []
    for jobs in ("1", "3"):
        out = tmp_path / f"jobs{jobs}"
        run(out, "humaneval", target(mode, data), "--sample", "8", "--seed", "1", "--jobs", jobs)
        verdicts.append(rows(out, "SELECT case_id, check_verdict, correct FROM invocations ORDER BY case_id"))
    assert verdicts[0] == verdicts[1]
    assert sorted(v for _, v, _ in verdicts[0]) == ["correct"] * 5 + ["no_entry_point", "wrong", "wrong"]


def suite_with_checks(folder: Path) -> Path:
    (folder / "checks").mkdir()
    (folder / "checks" / "test_brick.py").write_text(
        "from brick import brick\n\ndef test_one():\n    assert brick() == 1\n"
    )
    suite = {
        "suite_id": "own_checks",
        "mode": "baseline",
        "timeout_seconds": 30,
        "check": {"pytest": "checks"},  # relative to the suite's folder
        "cases": [
            {"id": "one", "instruction": "Write a function named one.", "runs": 3},
            {"id": "two", "instruction": "Write a function named two.", "runs": 3},
            {
                "id": "cmd",
                "instruction": "Write a function named cmd.",
                "runs": 3,
                "check": {"command": "grep -q 'return 1' {brick}"},
            },
            {"id": "bad", "instruction": "Write a function named bad.", "runs": 3},
        ],
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


@pytest.mark.slow
def test_a_suites_pytest_and_command_checks(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "SCRIPTED_OUTCOMES",
        json.dumps({"one": ["success"], "two": ["success:2"], "cmd": ["success"], "bad": ["validation"]}),
    )
    suite = suite_with_checks(tmp_path)
    out = tmp_path / "out"
    run_id = run(out, str(suite), SCRIPTED_TARGET, "--jobs", "2")
    assert rows(out, "SELECT case_id, kind, verdict, passed, failed FROM checks ORDER BY case_id, run_index") == [
        *[("cmd", "command", "correct", None, None)] * 3,
        *[("one", "pytest", "correct", 1, 0)] * 3,
        *[("two", "pytest", "wrong", 0, 1)] * 3,
    ]
    aggregate = json.loads((out / run_id / "baseline/two/aggregate.json").read_text())
    assert (aggregate["checked"], aggregate["correct"], aggregate["verified_but_wrong"]) == (3, 0, 3)
    assert aggregate["correct_rate"] == 0.0 and aggregate["correct_rate_wilson_95"][0] == 0.0
    assert aggregate["pass_k_correct"]["by_k"][0]["pass_at_k"] == 0.0
    bad = json.loads((out / run_id / "baseline/bad/aggregate.json").read_text())
    assert (bad["checked"], bad["correct"], bad["correct_rate"]) == (0, 0, 0.0)  # no brick: not correct
    show = cli("show", run_id, "--out", str(out), check=True).stdout
    assert "correct: 6 of 12 runs (50.0%" in show


@pytest.mark.slow
def test_why_validation_failed_from_the_debug_files(tmp_path, monkeypatch):
    from tests.core.test_causes import CASES, debug_file, pytest_output

    prepared = tmp_path / "prepared"
    for attempt, name in enumerate(("syntax_error", "import_error", "assertions_failed"), start=1):
        code, test, _ = CASES[name]
        debug_file(prepared, code[0], attempt, pytest_output(tmp_path / name, code, test))
    monkeypatch.setenv("SCRIPTED_DEBUG_FILES", str(prepared))
    monkeypatch.setenv("SCRIPTED_OUTCOMES", json.dumps({"one": ["validation"]}))
    suite = tmp_path / "suite.yaml"
    cases = [{"id": "one", "instruction": "Write a function named one.", "runs": 3}]
    suite.write_text(yaml.safe_dump({"suite_id": "causes", "mode": "baseline", "cases": cases}))
    out = tmp_path / "out"
    run_id = run(out, str(suite), SCRIPTED_TARGET, "--allow-read", str(prepared))  # the debug files it copies
    summary = json.loads((out / run_id / "baseline/one/run_001/summary.json").read_text())
    assert summary["failure_cause"] == "assertions_failed"
    assert [(c["attempt"], c["cause"], c["passed"], c["failed"]) for c in summary["failure_causes"]] == [
        (1, "syntax_error", 0, 0),  # "1 error": nothing ran
        (2, "import_error", 0, 0),
        (3, "assertions_failed", 1, 2),
    ]
    aggregate = json.loads((out / run_id / "baseline/one/aggregate.json").read_text())
    assert aggregate["failure_causes"] == {"assertions_failed": 3}
    assert aggregate["failed_attempt_causes"] == {"assertions_failed": 3, "import_error": 3, "syntax_error": 3}
    assert rows(out, "SELECT count(*) FROM failure_causes") == [(9,)]
    show = cli("show", run_id, "--out", str(out), check=True).stdout
    assert past_fence(show.splitlines())[0].startswith(
        "why validation failed: last attempt of each failed run: assertions_failed 3"
    )


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({"pytest": "nowhere"}, "check.pytest: "),
        ({"command": "true"}, "must name the brick as {brick}"),
        ({"python": "def check(c): pass"}, "entry_point: required field is missing"),
    ],
)
def test_a_bad_check_is_one_line_and_nothing_written(tmp_path, check, message):
    suite = tmp_path / "suite.yaml"
    cases = [{"id": "one", "instruction": "Write a function named one.", "check": check}]
    suite.write_text(yaml.safe_dump({"suite_id": "bad", "mode": "baseline", "cases": cases}))
    result = cli("run", str(suite), "--target", shlex.join(SCRIPTED_TARGET), "--out", str(tmp_path / "out"), "-q")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_compare_on_correctness_gates_what_self_verification_hides(data, tmp_path):
    from ironbench.suite.humaneval import humaneval_suite
    from ironbench.suite.shipped import sample_cases

    chosen = [c.id.removeprefix("humaneval_") for c in sample_cases(humaneval_suite(), 10, 2, "humaneval").cases]
    out = tmp_path / "out"
    sample = ["--sample", "10", "--seed", "2", "--jobs", "2"]
    a = run(out, "humaneval", target("canonical", data), *sample)
    b = run(out, "humaneval", target("canonical,wrong=" + "+".join(chosen[:8]), data), *sample)
    assert cli("compare", a, b, "--out", str(out)).returncode == 0  # both verified every run
    gated = cli("compare", a, b, "--out", str(out), "--on", "correct")
    assert gated.returncode == 1, gated.stdout + gated.stderr
    # a run without checks cannot be compared on correctness
    unchecked = tmp_path / "unchecked.yaml"
    cases = [{"id": "one", "instruction": "Write a function named one.", "runs": 1}]
    unchecked.write_text(yaml.safe_dump({"suite_id": "u", "mode": "baseline", "cases": cases}))
    c = run(out, str(unchecked), SCRIPTED_TARGET)
    refused = cli("compare", a, c, "--out", str(out), "--on", "correct")
    assert refused.returncode == 2 and "has no checks" in refused.stderr


@pytest.mark.slow
def test_an_adversarial_generators_aggregate_has_its_robustness_on_correctness(tmp_path, monkeypatch):
    # every run verifies; the rewrites of one generator save a brick the check finds wrong
    monkeypatch.setenv("SCRIPTED_OUTCOMES", json.dumps({"one/whitespace_noise": ["success:2"]}))
    suite = tmp_path / "suite.yaml"
    variants = [
        {"generator": "whitespace_noise", "count": 3, "seed": 1},
        {"generator": "punctuation_noise", "count": 2, "seed": 2},
    ]
    cases = [{"id": "one", "base_instruction": "Write a function named one.", "variants": variants}]
    check = {"command": "grep -q 'return 1' {brick}"}
    suite.write_text(yaml.safe_dump({"suite_id": "adv_checks", "mode": "adversarial", "check": check, "cases": cases}))
    out = tmp_path / "out"
    run_id = run(out, str(suite), SCRIPTED_TARGET, "--jobs", "2")

    def aggregate(generator: str) -> dict:
        return json.loads((out / run_id / f"adversarial/one/{generator}/aggregate.json").read_text())

    wrong, right = aggregate("whitespace_noise"), aggregate("punctuation_noise")
    # on self-reported success nothing moved; on correctness every rewrite of one generator broke
    assert wrong["robustness"]["robust_pass"] and right["robustness"]["robust_pass"]
    assert wrong["robustness_correct"]["base_success"] is True
    assert (wrong["robustness_correct"]["variants"], wrong["robustness_correct"]["variants_succeeded"]) == (3, 0)
    assert wrong["robustness_correct"]["flips_success_to_failure"]["rate"] == 1.0
    assert not wrong["robustness_correct"]["robust_pass"] and right["robustness_correct"]["robust_pass"]
    # what `show` computes from the read model, the tree wrote from the events
    shown = json.loads(cli("show", run_id, "--out", str(out), "--format", "json", check=True).stdout)
    for cell in shown["field"]["robustness_correct"]["cases"]:
        expected = {k: v for k, v in cell.items() if k not in ("case_id", "generator")}
        assert aggregate(cell["generator"])["robustness_correct"] == expected
    # and a rebuild from the events alone writes the same bytes
    before = (out / run_id / "adversarial/one/whitespace_noise/aggregate.json").read_text()
    cli("project", "--rebuild", run_id, "--out", str(out), check=True)
    assert (out / run_id / "adversarial/one/whitespace_noise/aggregate.json").read_text() == before


@pytest.mark.slow
def test_a_recheck_gives_each_case_its_own_timeout(tmp_path):
    target = tmp_path / "spinner.py"
    target.write_text(
        "from pathlib import Path\nPath('verified_bricks').mkdir()\n"
        "Path('verified_bricks/spin.py').write_text('def spin():\\n    while True:\\n        pass\\n')\n"
        "print('[SUCCESS] Verified brick saved to: verified_bricks/spin.py')\n"
    )
    check = {"python": "def check(candidate):\n    candidate()\n", "entry_point": "spin"}
    cases = [
        {"id": "two", "instruction": "Write spin.", "timeout_seconds": 2, "check": dict(check)},
        {"id": "three", "instruction": "Write spin again.", "timeout_seconds": 3, "check": dict(check)},
    ]
    suite = tmp_path / "suite.yaml"
    fixed = {"rule": "fixed", "runs": 1}
    suite.write_text(
        yaml.safe_dump({"suite_id": "spin", "mode": "baseline", "timeout_seconds": 40, "stop": fixed, "cases": cases})
    )
    out = tmp_path / "out"
    run_id = run(out, str(suite), f"{shlex.join([sys.executable, str(target)])} {{instruction}}", "--jobs", "2")
    cli("check", run_id, "--out", str(out), "--jobs", "2", check=True)
    payload = "json_extract(payload, '$.{}')".format
    fields = ", ".join(payload(f) for f in ("case_id", "recheck", "verdict", "timeout_ms"))
    found = rows(out, f"SELECT {fields} FROM events WHERE type = 'check_completed' ORDER BY 1, 2")
    assert found == [
        ("three", 0, "timeout", 3000),
        ("three", 1, "timeout", 3000),
        ("two", 0, "timeout", 2000),
        ("two", 1, "timeout", 2000),
    ]
