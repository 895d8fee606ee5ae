"""A comparison as JUnit XML, the report format every CI system renders.

One <testsuite> per comparison, one <testcase> per compared case (case/variant; for a
gauntlet, engine/scenario) and one for the gate itself. The XML fails exactly when
`ironbench compare` exits 1: a case is a <failure> when the comparison failed and the
case is flagged (one-sided Fisher, Westfall-Young adjusted), the gate's test case when
the gate failed. A case flagged while the gate passes (`--gate overall`) is reported in
its <system-out>, not failed, so a CI reporter that fails on any failure agrees with
the exit code. Cases run on one side only are <skipped>. Properties record the options.
"""

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from ironbench.analysis.compare import CaseComparison, Comparison
from ironbench.console.numbers import number, percent, points
from ironbench.console.printable import printable
from ironbench.core.files import write_atomic
from ironbench.core.labels import case_label

SUITE_NAME = "ironbench compare"


def case_evidence(case: CaseComparison, comparison: Comparison) -> str:
    """One line: both sides' counts, B − A with its interval, the raw and adjusted p."""
    unit = "conversations without a violation" if comparison.unit == "conversation" else "successful runs"
    a, b = case.a, case.b
    # A compared case (run on both sides): decide gave it both sides, an interval and its p-values.
    assert a is not None and b is not None and case.delta_ci_95 is not None
    assert case.p_regression is not None and case.p_adjusted is not None
    return (
        f"A {a.successes}/{a.n}, B {b.successes}/{b.n} {unit}; B − A = {points(case.delta)} "
        f"(95% CI {points(case.delta_ci_95[0], unit='')} to {points(case.delta_ci_95[1])}); "
        f"p = {number(case.p_regression)} one-sided Fisher, adjusted p = {number(case.p_adjusted)} "
        f"(Westfall-Young min-p over {comparison.overall.cases} cases), alpha {comparison.alpha}"
    )


def _outcomes(counts: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts) or "none"


def _details(case: CaseComparison) -> str:
    a, b = case.a, case.b
    assert a is not None and b is not None  # a compared case: run on both sides
    lines = [
        f"verdict: {case.verdict}",
        f"smallest drop these runs find with 80% power: {percent(case.mde) if case.mde is not None else 'none'}",
        f"mean attempts: A {number(a.mean_attempts, '.2f')} -> B {number(b.mean_attempts, '.2f')}",
        f"outcomes: A {_outcomes(a.outcomes.items())} -> B {_outcomes(b.outcomes.items())}",
    ]
    if not case.can_be_flagged:
        lines.append("this case cannot be flagged on its own at these run counts")
    return "\n".join(lines)


def _testcase(parent: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(parent, "testcase", {"classname": classname, "name": printable(name), "time": "0"})


def junit_xml(comparison: Comparison) -> str:
    """The comparison as a JUnit XML document (UTF-8 text). Pure."""
    root = ET.Element("testsuites", {"name": SUITE_NAME})
    suite = ET.SubElement(root, "testsuite", {"name": f"{SUITE_NAME} {comparison.run_a} -> {comparison.run_b}"})
    properties = ET.SubElement(suite, "properties")
    options = {
        "run_a": comparison.run_a,
        "run_b": comparison.run_b,
        "alpha": comparison.alpha,
        "gate": comparison.gate,
        "fail_on": comparison.fail_on,
        "margin": comparison.margin,
        "unit": comparison.unit,
        "verdict": comparison.verdict,
    }
    for name, value in options.items():
        if value is not None:
            ET.SubElement(properties, "property", {"name": name, "value": str(value)})
    classname = f"ironbench.compare.{comparison.run_b}"
    failures = skipped = 0
    for case in comparison.cases:
        element = _testcase(suite, classname, case_label(case.case_id, case.variant_id))
        if case.a is None or case.b is None or not case.a.n or not case.b.n:
            skipped += 1
            ET.SubElement(element, "skipped", {"message": f"{case.verdict}: not compared"})
            continue
        evidence = case_evidence(case, comparison)
        if case.flagged and comparison.failed:
            failures += 1
            failure = ET.SubElement(
                element, "failure", {"message": printable(f"regression: {evidence}"), "type": "regression"}
            )
            failure.text = printable(f"{evidence}\n{_details(case)}", keep_newlines=True)
        else:
            note = (
                "\nflagged by the per-case test, but the gate is overall and passed: reported, not failed"
                if case.flagged
                else ""
            )
            ET.SubElement(element, "system-out").text = printable(
                f"{evidence}\n{_details(case)}{note}", keep_newlines=True
            )
    gate = _testcase(suite, "ironbench.compare", f"gate ({comparison.gate}, fail on {comparison.fail_on})")
    details = "\n".join(
        [
            comparison.reason,
            *(f"warning: {w}" for w in comparison.warnings),
            *(f"{s.name}: A {s.a} -> B {s.b}: {s.direction}, p = {number(s.p_value)}" for s in comparison.shifts),
            *comparison.engines,
        ]
    )
    if comparison.failed:
        failures += 1
        failure = ET.SubElement(gate, "failure", {"message": printable(comparison.reason), "type": comparison.verdict})
        failure.text = printable(details, keep_newlines=True)
    else:
        ET.SubElement(gate, "system-out").text = printable(details, keep_newlines=True)
    counts = {
        "tests": str(len(comparison.cases) + 1),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": "0",
    }
    suite.attrib.update(counts)
    root.attrib.update(counts)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(comparison: Comparison, path: Path) -> Path:
    """Write the XML whole or not at all: beside its final name, then renamed into place."""
    path = Path(path)
    write_atomic(path, junit_xml(comparison), "the JUnit file's folder")
    return path
