"""The numbers the field reports, where a user meets them: aggregate.json, the generator's
aggregate, `show`, the shipped queries, `export` and the report; driven through real runs of
the scripted target (and the CLI in subprocesses)."""

import hashlib
import json
import os
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.analysis.query import run_query
from ironbench.run.runner import start_run
from ironbench.stats import pass_at_k, pass_hat_k
from ironbench.suite.models import Suite, parse_suite
from ironbench.targets.brick import Brick, NoBrick, take_brick
from tests.conftest import SCRIPTED_TARGET, cli, store_at_revision
from tests.run.test_adversarial_stress import INSTRUCTION

SEED_FIELDS = [
    "suite",
    "case_id",
    "variant",
    "mode",
    "generator",
    "level",
    "instruction_hash",
    "total_runs",
    "successes",
    "failures",
    "success_rate",
    "success_rate_wilson_95",
    "failure_breakdown",
    "attempts_distribution",
    "timeouts",
    "infra_errors",
    "avg_duration_ms",
    "p95_duration_ms",
    "debug_coverage",
    "stop_decision",
]


def baseline_suite(**stops):
    cases = [
        {"id": case_id, "instruction": f"Write a function named {case_id}.", **({"stop": stop} if stop else {})}
        for case_id, stop in stops.items()
    ]
    return parse_suite(
        {"suite_id": "field", "mode": "baseline", "target": SCRIPTED_TARGET, "timeout_seconds": 30, "cases": cases},
        "field.yaml",
    )


def brick_sha(content: str) -> str:
    return hashlib.sha256(f"def brick():\n    return {content!r}\n".encode()).hexdigest()


def test_aggregate_adds_pass_k_and_bricks_after_the_seeds_fields(paths, script):
    script(
        {
            "fixed": ["success:a", "validation", "success:b", "success:a", "generation", "success:a"],
            "seed": ["success", "generation", "success", "success", "success"],
        }
    )
    run_id = start_run(baseline_suite(fixed={"rule": "fixed", "runs": 6}, seed=None), paths)
    fixed = json.loads((paths.out_dir / run_id / "baseline" / "fixed" / "aggregate.json").read_text())
    assert list(fixed) == [*SEED_FIELDS, "pass_k", "bricks"]  # the seed's fields first, in its order
    assert fixed["total_runs"] == 6 and fixed["stop_decision"]["decision"] == "exhausted"
    assert "fixed in advance" in fixed["stop_decision"]["reason"]
    passk = fixed["pass_k"]
    assert passk["stop_rule"] == "fixed" and len(passk["by_k"]) == 6
    for row in passk["by_k"]:  # 4 of 6 succeeded
        assert row["pass_at_k"] == pytest.approx(pass_at_k(6, 4, row["k"]), abs=1e-6)
        assert row["pass_hat_k"] == pytest.approx(pass_hat_k(6, 4, row["k"]), abs=1e-6)
        assert row["pass_hat_k_ci_95"][0] <= row["pass_hat_k_ci_95"][1]
    # same code, not just the same verdict: 4 successes, 2 distinct bricks (3 of one, 1 of the other)
    assert fixed["bricks"] == {
        "successful_runs": 4,
        "with_brick": 4,
        "distinct": 2,
        "by_sha256": {brick_sha("a"): 3, brick_sha("b"): 1},
    }
    seed = json.loads((paths.out_dir / run_id / "baseline" / "seed" / "aggregate.json").read_text())
    # last 3 agreed after 5 runs: unbiased for k up to 3 only, the share of orders stopping there
    assert seed["pass_k"]["stop_rule"] == "last_3_agree" and len(seed["pass_k"]["by_k"]) == 3
    assert "Girshick" in seed["pass_k"]["estimator"] and "any stopping time" in seed["pass_k"]["interval"]
    with sqlite3.connect(paths.store_path) as conn:
        digests = conn.execute(
            "SELECT brick_sha256 FROM invocations WHERE run_id = ? AND case_id = 'fixed' ORDER BY run_index", (run_id,)
        ).fetchall()
    assert [d[0] for d in digests] == [brick_sha("a"), None, brick_sha("b"), brick_sha("a"), None, brick_sha("a")]


@pytest.mark.slow
def test_show_query_and_export_carry_the_same_numbers(paths, script, tmp_path):
    script({"fixed": ["success", "validation", "success", "success"], "seed": ["success"]})
    run_id = start_run(baseline_suite(fixed={"rule": "fixed", "runs": 4}, seed=None), paths)
    store = str(paths.store_path)
    shown = json.loads(cli("show", run_id, "--store", store, "--format", "json", check=True).stdout)["field"]
    fixed = shown["pass_k"]["cases"]["fixed"]["pass_k"]["by_k"]
    assert fixed[1]["pass_hat_k"] == pytest.approx(pass_hat_k(4, 3, 2), abs=1e-6)
    across = shown["pass_k"]["across"]["by_k"][0]
    assert across["cases"] == 2 and across["pass_hat_k"] == pytest.approx((0.75 + 1.0) / 2, abs=1e-6)
    text = cli("show", run_id, "--store", store, check=True, env={"COLUMNS": "160"}).stdout
    assert (
        "pass@k and pass^k on self-reported success per instruction" in text
        and "across instructions (case as cluster)" in text
    )
    rows = run_query(paths.store_path, "pass_k", run_id=run_id)
    table = {(r[2], r[7]): dict(zip(rows.columns, r, strict=True)) for r in rows.rows}
    assert table[("fixed", 2)]["pass_hat_k"] == pytest.approx(pass_hat_k(4, 3, 2), abs=1e-6)
    assert table[("fixed", 2)]["unbiased"] is True
    # the seed's rule stopped on outcomes: the published formula would be biased, so no number
    assert table[("seed", 1)]["unbiased"] is False and table[("seed", 1)]["pass_hat_k"] is None
    cli("export", run_id, "--store", store, "--to", str(tmp_path / "x"), "--format", "jsonl", check=True)
    exported = [json.loads(line) for line in (tmp_path / "x" / "pass_k.jsonl").read_text().splitlines()]
    assert {(r["case_id"], r["k"]) for r in exported} == set(table)


@pytest.mark.slow
def test_the_generators_aggregate_and_robustness_everywhere(paths, script, tmp_path):
    script(
        {
            "c/baseline": ["success"],
            "c/punctuation_noise": ["validation"],  # every variant fails where the base succeeded
            "c/whitespace_noise": ["success"],
        }
    )
    suite = parse_suite(
        {
            "suite_id": "adv",
            "mode": "adversarial",
            "target": SCRIPTED_TARGET,
            "timeout_seconds": 30,
            "cases": [
                {
                    "id": "c",
                    "instruction": INSTRUCTION,
                    "generators": [
                        {"generator": "punctuation_noise", "count": 2, "seed": 1},
                        {"generator": "whitespace_noise", "count": 2, "seed": 1},
                    ],
                }
            ],
        },
        "adv.yaml",
    )
    run_id = start_run(suite, paths)
    folder = paths.out_dir / run_id / "adversarial" / "c"
    broke = json.loads((folder / "punctuation_noise" / "aggregate.json").read_text())
    assert list(broke)[: len(SEED_FIELDS) - 1] == SEED_FIELDS[:-1] and list(broke)[-1] == "robustness"
    assert broke["variant"] == "punctuation_noise" and broke["total_runs"] == 8  # 2 variants, repeated 3 times
    robustness = broke["robustness"]
    assert (robustness["robust_pass"], robustness["worst_case_success_rate"], robustness["robust_drop"]) == (
        False,
        0.0,
        1.0,
    )
    assert robustness["flips_success_to_failure"]["count"] == 2  # judged by first runs: 2 of 2
    held = json.loads((folder / "whitespace_noise" / "aggregate.json").read_text())["robustness"]
    assert held["robust_pass"] is True and held["flips_success_to_failure"]["count"] == 0
    rows = run_query(paths.store_path, "robustness", run_id=run_id)
    by_generator = {r[2]: dict(zip(rows.columns, r, strict=True)) for r in rows.rows}
    assert by_generator["punctuation_noise"]["flipped"] == 2 and by_generator["whitespace_noise"]["robust_pass"]
    shown = json.loads(cli("show", run_id, "--store", str(paths.store_path), "--format", "json", check=True).stdout)
    generators = {g["generator"]: g for g in shown["field"]["robustness"]["generators"]}
    assert generators["punctuation_noise"]["robust_pass_rate"]["estimate"] == 0.0
    page = (
        (paths.out_dir / run_id / "report.html").read_text()
        if (paths.out_dir / run_id / "report.html").exists()
        else ""
    )
    if not page:
        cli("report", run_id, "--store", str(paths.store_path), "--out", str(paths.out_dir), check=True)
        page = (paths.out_dir / run_id / "report.html").read_text()
    assert 'id="robustness"' in page and "Robustness per generator" in page


def test_a_brick_is_hashed_only_when_it_is_a_regular_file(tmp_path):
    (tmp_path / "verified_bricks").mkdir()
    (tmp_path / "verified_bricks" / "b.py").write_text("x = 1\n")
    assert take_brick(tmp_path, "verified_bricks/b.py").sha256 == hashlib.sha256(b"x = 1\n").hexdigest()
    assert isinstance(take_brick(tmp_path, str(tmp_path / "verified_bricks" / "b.py")), Brick)  # absolute, beneath
    os.mkfifo(tmp_path / "pipe")
    assert isinstance(take_brick(tmp_path, "pipe"), NoBrick)  # would block forever
    assert isinstance(take_brick(tmp_path, "missing.py"), NoBrick)
    assert isinstance(take_brick(tmp_path, "verified_bricks"), NoBrick)
    assert isinstance(take_brick(tmp_path, "a\0b"), NoBrick)


def test_an_older_store_gains_the_brick_column_and_keeps_its_rows(tmp_path, script):
    path = store_at_revision(tmp_path / "old.db", "0010_leases")
    cli("db", "upgrade", "--store", str(path), check=True)
    with sqlite3.connect(path) as conn:
        for table in ("invocations", "superseded_invocations", "surplus_invocations"):
            assert "brick_sha256" in [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


@pytest.mark.slow
def test_the_fixed_rule_through_the_cli_and_resume(tmp_path):
    import yaml

    from ironbench.suite.models import Suite

    data = {
        "suite_id": "f",
        "mode": "baseline",
        "target": SCRIPTED_TARGET,
        "timeout_seconds": 30,
        "cases": [{"id": "a", "instruction": "Write a function named a.", "stop": {"rule": "fixed", "runs": 3}}],
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    out = cli("run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out"), env={"SCRIPTED_OUTCOMES": "{}"})
    assert out.returncode == 0 and "baseline/a: stable after 3 runs, 3/3 succeeded" in out.stderr
    # a run records every default (runs: 10 too); resume reads it back without complaint
    recorded = parse_suite(data, "s.yaml").to_dict()
    assert recorded["cases"][0]["runs"] == 10 and Suite.from_dict(recorded).stop_of(Suite.from_dict(recorded).cases[0])
    data["cases"][0]["runs"] = 2
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    refused = cli("run", str(tmp_path / "bad.yaml"), "--out", str(tmp_path / "out"))
    assert refused.returncode == 2 and "the fixed rule takes its runs from stop.runs" in refused.stderr


_STOPS = st.one_of(
    st.none(),
    st.builds(lambda n: {"rule": "fixed", "runs": n}, st.integers(1, 20)),
    st.builds(
        lambda r, c, m: {"rule": "confidence", "reproduce": r, "confidence": c, "max_runs": m},
        st.sampled_from([0.5, 0.8]),
        st.sampled_from([0.9, 0.95]),
        st.integers(3, 12),
    ),
    st.just({"rule": "last_3_agree"}),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries({}, optional={"stop": _STOPS, "runs": st.integers(1, 9)}),
        min_size=1,
        max_size=6,
    ),
    _STOPS,
)
def test_the_rule_a_case_ran_by_is_the_rule_its_record_reads(cases, stop):
    """The runner plans each baseline case by its rule (`Suite.stop_of`); every reader of the
    run reads the same rule back from the record (`Suite.stopping_rule`, written once)."""
    from hypothesis import assume

    from ironbench.core.errors import SuiteError
    from ironbench.run.planner import plan

    cases = [{"id": f"c{k}", "instruction": INSTRUCTION, **case} for k, case in enumerate(cases)]
    data = {"suite_id": "s", "mode": "baseline", "cases": cases, **({"stop": stop} if stop else {})}
    try:
        ran = parse_suite(data, "s.yaml")
        groups = {track.case_id: track.groups[0] for track in plan(ran)}
    except SuiteError:
        assume(False)
    recorded = Suite.from_dict(ran.to_dict())
    for case in cases:
        rule, group = recorded.stopping_rule(case["id"]), groups[case["id"]]
        assert rule.max_runs == group.max_runs
        assert rule.name == (group.stop.rule if group.stop else "last_3_agree")
