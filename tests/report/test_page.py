import base64
import hashlib
import html
import json
import re
from dataclasses import replace

import pytest

from ironbench.report.embedded import apply_patch
from ironbench.report.gather import gather
from ironbench.report.page import CSS, SCRIPT, render
from ironbench.report.verdict import verdicts
from tests.report.build import baseline_case
from tests.report.examples import INJECTED

SECTIONS = re.compile(r'<section id="([a-z]+)">')


def page(examples, run_id, base=None):
    data = gather(examples.paths.store_path, run_id, base)
    return data, render(data, verdicts(data))


def embedded(text: str) -> dict:
    start = text.index('<script type="application/json" id="report-data">')
    body = text[text.index(">", start) + 1 : text.index("</script>", start)]
    return json.loads(body)


def records(embedded_list) -> list[dict]:
    """A list of records as embedded: a table of two or more, else the list itself."""
    if isinstance(embedded_list, dict):
        return [dict(zip(embedded_list["columns"], row, strict=True)) for row in embedded_list["rows"]]
    return embedded_list


@pytest.mark.slow
def test_each_kind_of_run_gets_its_sections_and_no_others(examples):
    expected = {
        examples.baseline: ["verdict", "outcomes", "baseline", "metadata"],
        examples.adversarial: ["verdict", "outcomes", "cost", "adversarial", "robustness", "metadata"],
        examples.stress: ["verdict", "outcomes", "stress", "metadata"],
        examples.gauntlet: ["verdict", "gauntlet", "survival", "metadata"],
    }
    for run_id, sections in expected.items():
        assert SECTIONS.findall(page(examples, run_id)[1]) == sections
    _, compared = page(examples, examples.baseline_regressed, examples.baseline)
    assert SECTIONS.findall(compared) == ["verdict", "compare", "outcomes", "baseline", "metadata"]


@pytest.mark.slow
def test_injected_markup_is_text_everywhere(examples):
    for run_id in (examples.baseline, examples.adversarial, examples.gauntlet):
        _, text = page(examples, run_id)
        assert text.count("<script") == 2  # the embedded data and the page's own script, nothing else
        assert "<img" not in text
        assert html.escape(INJECTED, quote=True) in text  # shown, as text
        assert "\\u003cscript\\u003ewindow" in text  # and in the embedded data, inert


def test_only_the_pages_own_style_and_script_may_run(examples):
    _, text = page(examples, examples.baseline)
    policy = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1))
    digest = lambda s: "sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
    assert f"script-src '{digest(SCRIPT)}'" in policy and f"style-src '{digest(CSS)}'" in policy
    assert policy.startswith("default-src 'none'")
    assert f"<script>{SCRIPT}</script>" in text and f"<style>{CSS}</style>" in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "src=" not in text.replace("src=x", "")


def test_the_verdict_header_says_what_the_console_says(examples):
    data, text = page(examples, examples.stress)
    for item in verdicts(data):
        assert html.escape(item.headline, quote=True) in text


def test_embedded_data_reads_back_as_tables(examples):
    data, text = page(examples, examples.adversarial)
    back = embedded(text)
    assert back["run"]["run_id"] == examples.adversarial
    cache = next(c for c in records(back["adversarial"]["cases"]) if c["case_id"] == "cache")
    variants = cache["variants"]
    assert "instruction_patch" in variants["columns"] and "decision.decision" in variants["columns"]
    rows = records(variants)
    assert {r["variant_id"]: r["decision.decision"] for r in rows}["punctuation_noise/variant_0003"] == "structural"
    # every text is there once: the base in the suite, each variant as a patch of it
    base = next(c["instruction"] for c in records(back["suite"]["cases"]) if c["id"] == "cache")
    originals = {v.variant_id: v.instruction for v in data.adversarial.cases[0].variants}
    assert data.adversarial.cases[0].case_id == "cache"
    assert {r["variant_id"]: apply_patch(base, r["instruction_patch"]) for r in rows} == originals
    # nothing twice: a variant's generator is its id's first segment, and what its counts determine
    # (rate, intervals, bounds) is not repeated in its decision
    assert "generator" not in variants["columns"] and "decision.success_upper_95" not in variants["columns"]
    assert "decision.direction" in variants["columns"]  # what the counts do not say stays
    assert back["verdicts"]["columns"] == ["mode", "headline", "evidence"]
    assert len(back["adversarial"]["rejections"]["rows"]) == 2


def test_metadata_shows_the_label_the_recorded_environment_and_new_fields(examples):
    data, text = page(examples, examples.baseline)
    assert "label nightly" in text and "recorded IRONBENCH_EXAMPLE_BACKEND=127.0.0.1:11434" in text  # the header
    assert '<span class="kv">IRONBENCH_EXAMPLE_BACKEND = 127.0.0.1:11434</span>' in text  # the metadata
    recorded = {**data.run.recorded, "label": "nightly <b>", "gpu": {"CUDA_VISIBLE_DEVICES": "0"}}  # gpu: a new field
    data = replace(data, run=replace(data.run, label="nightly <b>", recorded=recorded))
    text = render(data, verdicts(data))
    assert "label nightly &lt;b&gt;" in text
    assert "CUDA_VISIBLE_DEVICES = 0" in text


def test_outcomes_show_timeouts_and_infrastructure_errors_apart_from_rates(examples):
    _, text = page(examples, examples.baseline)
    outcomes = text[text.index('<section id="outcomes">') : text.index('<section id="baseline">')]
    rows = re.findall(r"<tr>(.*?)</tr>", outcomes)
    timeout = next(r for r in rows if "failed: timeout" in r)
    superseded = next(r for r in rows if "superseded" in r)
    assert ">1<" in timeout and ">5%<" in timeout  # a failure like any other: 1 of the 20 runs that count
    assert ">excluded<" in superseded  # not a run of the target at all
    assert "20 invocations (+1 excluded: harness or infrastructure errors)" in text


def test_adversarial_page_names_the_reference_and_the_direction(examples):
    _, text = page(examples, examples.adversarial)
    assert f"Judged against baseline/stable_success of run {examples.baseline} (3/3 succeeded)" in text
    assert "The baseline never settled" in text  # the dates case, judged against the flaky baseline
    assert ">success lost<" in text and "fewer attempts (p = 0.86)" in text
    assert "whitespace_noise/variant_0002 (+1 superseded)" in text


def test_compare_page_shows_power_warnings_and_shifts(examples):
    _, text = page(examples, examples.baseline_regressed, examples.baseline)
    compare = text[text.index('<section id="compare">') : text.index('<section id="outcomes">')]
    assert "Gate: REGRESSION" in compare and "exit 1" in compare
    assert "the smallest drop these runs detect with 80% power" in compare
    assert "⚠ stable_failure cannot be flagged on its own" in compare
    assert "cannot be flagged" in compare  # in its row, too
    for shift in ("outcome distribution", "attempts", "timeouts", "harness errors", "infrastructure errors"):
        assert f"<td>{shift}</td>" in compare
    assert "reported only (the backend" in compare


def test_gauntlet_page_counts_conversations_and_compares_every_pair(examples):
    _, text = page(examples, examples.gauntlet)
    assert "Conversations violated, engine × scenario (negation_aware scorer)" in text
    assert '<p class="maplabel">literal scorer</p>' in text
    assert "cannot be told apart" in text and "p (Holm)" in text
    assert text.count('<details class="thread"') == 8
    assert "<b>plain</b> · conversation 2 · " in text


def test_decision_fields_this_page_does_not_know_yet_are_shown(examples):
    data, _ = page(examples, examples.baseline)
    first = data.baseline.cases[0]
    later = replace(first, decision=replace(first.decision, more=(("stable_lower_bound", 0.3123),)))
    data = replace(data, baseline=replace(data.baseline, cases=[later, *data.baseline.cases[1:]]))
    text = render(data, verdicts(data))
    assert "stable_lower_bound = 0.312" in text


def test_long_runs_chart_the_cases_that_need_a_look_and_tabulate_all(examples):
    from ironbench.report.sections.baseline import CHART_ROWS, charted

    def fake(i, decision, successes):
        return baseline_case(f"c{i:03d}", "S" * successes + "G" * (10 - successes), decision, low=successes / 20)

    cases = [fake(i, "stable", 10) for i in range(CHART_ROWS + 40)]
    cases[7] = fake(7, "exhausted", 9)
    cases[100] = fake(100, None, 9)
    cases[170] = fake(170, "stable", 0)
    shown, note = charted(cases)
    names = [c.case_id for c in shown]
    assert len(shown) == CHART_ROWS and names == sorted(names)  # suite order kept
    assert {"c007", "c100", "c170"} <= set(names)
    assert f"{CHART_ROWS} of {CHART_ROWS + 40} cases" in note
    assert charted(cases[:10]) == (cases[:10], "")
