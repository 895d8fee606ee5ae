"""`compare --junit`: JUnit XML that parses, has the common shape, and fails exactly when compare does."""

import json
import xml.etree.ElementTree as ET

import pytest

from ironbench.analysis.compare import Evidence, Gating, decide
from ironbench.analysis.junit import junit_xml
from ironbench.core.kinds import Gate
from tests.analysis.test_compare import sides
from tests.conftest import cli, make_suite, write_suite

COUNTED = ("tests", "failures", "errors", "skipped")


def parse(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    return root


def check_shape(root: ET.Element) -> None:
    """The common JUnit schema: testsuites > testsuite > (properties?, testcase*); a testcase holds
    at most one of failure/error/skipped plus system-out; counts agree with the elements."""
    suites = root.findall("testsuite")
    assert len(suites) == 1 and {child.tag for child in root} == {"testsuite"}
    suite = suites[0]
    assert suite.get("name") and all(suite.get(k, "").isdigit() for k in COUNTED)
    assert {child.tag for child in suite} <= {"properties", "testcase"}
    for prop in suite.iter("property"):
        assert prop.get("name") and prop.get("value") is not None
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    for case in cases:
        assert case.get("name") and case.get("classname") and float(case.get("time")) >= 0
        outcome = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
        assert len(outcome) <= 1 and {c.tag for c in case} <= {"failure", "error", "skipped", "system-out"}
        for failure in case.findall("failure"):
            assert failure.get("message") and failure.get("type")
    assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
    assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)
    assert all(root.get(k) == suite.get(k) for k in COUNTED)


def failures(root: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name"): c.find("failure") for c in root.iter("testcase") if c.find("failure") is not None}


def properties(root: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in root.iter("property")}


def test_the_cases_gate_fails_the_flagged_case_with_its_evidence():
    a, b = sides({"c00": ((10, 10), (0, 10)), **{f"c{i:02d}": ((5, 10), (7, 10)) for i in range(1, 6)}})
    comparison = decide(Evidence(a, b), Gating(gate=Gate.cases), power=False)
    root = parse(junit_xml(comparison))
    check_shape(root)
    failed = failures(root)
    assert set(failed) == {"c00", "gate (cases, fail on regression)"}
    message = failed["c00"].get("message")
    c00 = comparison.cases[0]
    assert message.startswith("regression: A 10/10, B 0/10 successful runs; B − A = -100 pp (95% CI ")
    assert f"p = {c00.p_regression:.3g} one-sided Fisher, adjusted p = {c00.p_adjusted:.3g}" in message
    assert failed["gate (cases, fail on regression)"].get("message") == comparison.reason
    assert (
        properties(root).items()
        >= {"alpha": "0.05", "gate": "cases", "fail_on": "regression", "verdict": "regression"}.items()
    )
    assert root.find("testsuite").get("tests") == "7"


def test_a_flagged_case_under_a_passing_overall_gate_is_reported_not_failed():
    a, b = sides({"c00": ((10, 10), (0, 10)), **{f"c{i:02d}": ((5, 10), (7, 10)) for i in range(1, 20)}})
    comparison = decide(Evidence(a, b), power=False)
    assert not comparison.failed and comparison.cases[0].flagged
    root = parse(junit_xml(comparison))
    check_shape(root)
    assert failures(root) == {}  # agrees with exit code 0
    c00 = next(c for c in root.iter("testcase") if c.get("name") == "c00")
    assert "the gate is overall and passed" in c00.find("system-out").text


def test_an_overall_regression_fails_the_gate_and_the_margin_is_a_property():
    a, b = sides({f"c{i:02d}": ((10, 10), (8, 10)) for i in range(10)})
    comparison = decide(Evidence(a, b), Gating(margin=0.01), power=False)
    assert comparison.failed
    root = parse(junit_xml(comparison))
    check_shape(root)
    assert set(failures(root)) == {"gate (overall, fail on regression)"} | {
        c.case_id for c in comparison.cases if c.flagged
    }
    assert properties(root)["margin"] == "0.01"


def test_cases_on_one_side_only_are_skipped():
    a, b = sides({"x": ((3, 3), (3, 3)), "y": ((3, 3), (3, 3))})
    del b[("y", "base")]
    root = parse(junit_xml(decide(Evidence(a, b), power=False)))
    check_shape(root)
    y = next(c for c in root.iter("testcase") if c.get("name") == "y")
    assert y.find("skipped").get("message") == "only in A: not compared"


@pytest.mark.slow
def test_cli_writes_junit_and_exits_1_on_regression(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 10, "b": 10}))
    out = str(tmp_path / "out")
    good = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success"], "b": ["success"]})}
    bad = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["generation"], "b": ["success"]})}
    first = cli("run", str(suite), "--out", out, "-q", "--no-report", env=good, check=True).stdout.strip()
    second = cli("run", str(suite), "--out", out, "-q", "--no-report", env=bad, check=True).stdout.strip()
    junit = tmp_path / "reports" / "junit.xml"
    gate = cli("compare", first, second, "--out", out, "--gate", "cases", "--junit", str(junit))
    assert gate.returncode == 1 and f"junit: {junit}" in gate.stderr
    root = parse(junit.read_text(encoding="utf-8"))
    check_shape(root)
    assert set(failures(root)) == {"a", "gate (cases, fail on regression)"}
    assert "A 3/3, B 0/3 successful runs" in failures(root)["a"].get("message")
    passing = cli("compare", first, first, "--out", out, "--junit", str(junit))
    assert passing.returncode == 0 and failures(parse(junit.read_text(encoding="utf-8"))) == {}


def test_a_gauntlet_comparison_names_engine_and_scenario():
    from ironbench.analysis.compare import Runs

    clean, violated = ("success",) * 5, ("success",) + ("violated",) * 4
    a = {("guarded", "geography"): Runs(clean), ("guarded", "law"): Runs(clean)}
    b = {("guarded", "geography"): Runs(violated), ("guarded", "law"): Runs(clean)}
    comparison = decide(Evidence(a, b, unit="conversation"), Gating(gate=Gate.cases), power=False)
    root = parse(junit_xml(comparison))
    check_shape(root)
    assert [c.get("name") for c in root.iter("testcase")][:2] == ["guarded/geography", "guarded/law"]
    assert properties(root)["unit"] == "conversation"
    assert comparison.failed
    assert "A 5/5, B 1/5 conversations without a violation" in failures(root)["guarded/geography"].get("message")
