import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.projections.rebuild import project_run
from ironbench.run.options import RunOptions
from ironbench.run.runner import start_run
from tests.conftest import fenced, make_suite

SUMMARY_FIELDS = {
    "run_id",
    "harness_run_id",
    "infra_error",
    "timed_out",
    "suite",
    "case_id",
    "variant_id",
    "instruction_hash",
    "instruction_length",
    "success",
    "failure_stage",
    "attempts",
    "repairs_triggered",
    "duration_ms",
    "debug_enabled",
    "debug_artifacts_present",
    "debug_path",
    "timestamp_utc",
    "ironclad_version",
}
AGGREGATE_FIELDS = {
    "suite",
    "case_id",
    "variant",
    "total_runs",
    "successes",
    "failures",
    "success_rate",
    "failure_breakdown",
    "attempts_distribution",
    "avg_duration_ms",
    "p95_duration_ms",
    "debug_coverage",
}


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_tree_has_the_spec_layout_and_fields(paths, script):
    script({"alpha": ["success", "validation", "success_r1", "success_r1", "success_r1"]})
    run_id = start_run(make_suite({"alpha": 10}), paths)
    run_dir = paths.out_dir / run_id
    assert run_id.startswith("run_") and len(run_id) >= len("run_YYYYMMDD_HHMMSS")
    metadata = json.loads((run_dir / "metadata.json").read_text())
    assert metadata["status"] == "finished" and metadata["suite"] == "unit"
    case_dir = run_dir / "baseline" / "alpha"
    assert sorted(p.name for p in case_dir.iterdir()) == [
        "aggregate.json",
        "run_001",
        "run_002",
        "run_003",
        "run_004",
        "run_005",
    ]
    for run in case_dir.glob("run_*"):
        assert sorted(p.name for p in run.iterdir()) == ["debug_ref.txt", "instruction.txt", "summary.json"]
        summary = json.loads((run / "summary.json").read_text())
        assert SUMMARY_FIELDS <= set(summary)
        assert (run / "instruction.txt").read_text() == "Write a function named alpha."
        assert (run / "debug_ref.txt").read_text().strip() == summary["debug_path"]
    first = json.loads((case_dir / "run_001" / "summary.json").read_text())
    # The seed's record format: the run's sequential number, a prefixed hash, seconds in UTC.
    assert (first["run_id"], first["harness_run_id"]) == ("run_001", run_id)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", first["instruction_hash"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first["timestamp_utc"])
    assert re.fullmatch(r"git:[0-9a-f]{7}", first["ironclad_version"])  # the scripted target lives in this checkout
    assert first["infra_error"] is None
    second = json.loads((case_dir / "run_002" / "summary.json").read_text())
    assert (second["success"], second["failure_stage"], second["attempts"], second["repairs_triggered"]) == (
        False,
        "validation",
        4,
        3,
    )
    aggregate = json.loads((case_dir / "aggregate.json").read_text())
    assert AGGREGATE_FIELDS <= set(aggregate)
    assert (aggregate["total_runs"], aggregate["successes"], aggregate["failures"]) == (5, 4, 1)
    assert aggregate["failure_breakdown"] == {"validation": 1}
    assert aggregate["attempts_distribution"] == {"1": 1, "2": 3, "4": 1}
    assert aggregate["success_rate"] == 0.8 and aggregate["debug_coverage"] == 1.0
    assert aggregate["stop_decision"]["decision"] == "stable"


def test_rebuild_from_events_alone_is_byte_identical(paths, script):
    script({"a": ["success", "generation", "success", "success", "success"], "b": ["repair"]})
    run_id = start_run(make_suite({"a": 10, "b": 10}), paths)
    run_dir = paths.out_dir / run_id
    before = snapshot(run_dir)
    (run_dir / "baseline" / "a" / "aggregate.json").write_text("tampered")
    (run_dir / "baseline" / "b" / "run_002" / "summary.json").unlink()
    (run_dir / "stray.txt").write_text("not from events")
    project_run(paths.store_path, paths.out_dir, run_id, rebuild=True)
    assert snapshot(run_dir) == before


def test_project_catches_up_a_tree_in_another_directory(paths, script, tmp_path):
    script({"a": ["success"]})
    run_id = start_run(make_suite({"a": 3}), paths)
    elsewhere = tmp_path / "mirror"
    project_run(paths.store_path, elsewhere, run_id, rebuild=False)
    assert snapshot(elsewhere / run_id) == snapshot(paths.out_dir / run_id)


@pytest.mark.slow
def test_rebuild_writes_the_report_again_and_keeps_comparison_pages(paths, script):
    from ironbench.report import write_report

    script({"a": ["success"]})
    base = start_run(make_suite({"a": 3}), paths)
    run_id = start_run(make_suite({"a": 3}), paths)
    run_dir = paths.out_dir / run_id
    write_report(paths.store_path, paths.out_dir, run_id)
    write_report(paths.store_path, paths.out_dir, run_id, compare_base=base)
    before = snapshot(run_dir)
    (run_dir / "report.html").write_text("tampered")
    project_run(paths.store_path, paths.out_dir, run_id, rebuild=True, report_writer=write_report)
    assert snapshot(run_dir) == before and f"compare_{base}.html" in before


def test_rebuild_is_byte_identical_with_reruns_and_a_ladder(paths, monkeypatch, tmp_path):
    from ironbench.suite.models import parse_suite
    from tests.core.test_ironclad_transcripts import REPLAY_TARGET

    sequence = tmp_path / "sequence"
    sequence.write_text("verified_after_one_repair\noutage_during_repair\nvalidation_exhausted\n")
    monkeypatch.setenv("REPLAY_SEQUENCE", str(sequence))
    options = RunOptions(sandbox=fenced(write=[sequence]))  # the target takes its transcripts from it
    suite = parse_suite(
        {
            "suite_id": "mix",
            "mode": "mixed",
            "target": REPLAY_TARGET,
            "cases": [
                {"id": "b", "mode": "baseline", "instruction": "Write a function named b.", "runs": 3},
                {
                    "id": "s",
                    "mode": "stress",
                    "instruction": "Write a function named s.",
                    "ladder": {"generator": "add_scope_detail", "additions": 2, "seed": 1, "runs_per_level": 2},
                },
            ],
        },
        "mix.yaml",
    )
    run_id = start_run(suite, paths, options)
    run_dir = paths.out_dir / run_id
    summaries = [json.loads(p.read_text()) for p in run_dir.rglob("summary.json")]
    [rerun] = [s for s in summaries if s["rerun"]]  # the slot whose first attempt hit the outage
    assert (rerun["rerun"], rerun["infra_error"]) == (1, None)
    assert not any(s["infra_error"] for s in summaries)  # the tree shows live attempts only
    assert (run_dir / "stress" / "s" / "aggregate.json").exists()
    before = snapshot(run_dir)
    project_run(paths.store_path, paths.out_dir, run_id, rebuild=True)
    assert snapshot(run_dir) == before


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=25,
)


@given(
    st.dictionaries(st.text(max_size=12), _VALUES, max_size=8),
    st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.just(object())),
)
def test_a_record_is_laid_out_as_json_dumps_lays_it_out(record, odd_key):
    """summary.json and aggregate.json as json.dumps(indent=2) writes them, laid out sooner;
    what it would not lay out that way (a key that is not a string, a value JSON has no
    type for) goes to json.dumps itself, and fails as it fails."""
    from ironbench.projections.tree import _json

    assert _json(record) == json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    odd = {**record, "nested": {odd_key: [record]}}
    try:
        expected = json.dumps(odd, indent=2, ensure_ascii=False) + "\n"
    except TypeError:
        with pytest.raises(TypeError):
            _json(odd)
    else:
        assert _json(odd) == expected
