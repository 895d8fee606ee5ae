"""`runs_per_variant` in an adversarial suite caps the repeats of a material variant, through the
front door: `ironbench variants` says the cap, `ironbench run` keeps to it, absent is the spec's 3."""

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from tests.conftest import SCRIPTED_TARGET, cli

INSTRUCTION = "Write a Python class implementing a simple cache with get, set and a maximum size."
# the reference succeeds; every variant fails validation every time: material, then structural
SCRIPT = {"c/baseline": ["success"], "c/punctuation_noise": ["validation"]}


def suite_file(folder: Path, **settings) -> Path:
    path = folder / f"adv_{settings.get('runs_per_variant', 'absent')}.yaml"
    data = {
        "suite_id": "adv",
        "mode": "adversarial",
        "target": SCRIPTED_TARGET,
        "timeout_seconds": 30,
        **settings,
        "cases": [
            {"id": "c", "instruction": INSTRUCTION, "variants": [{"generator": "punctuation_noise", "count": 2}]}
        ],
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def variant_runs(out: Path, run_id: str) -> dict[str, tuple[int, str]]:
    """Each variant's runs and decision."""
    with sqlite3.connect(out / "ironbench.db") as conn:
        return {
            variant: (runs, decision)
            for variant, runs, decision in conn.execute(
                "SELECT i.variant_id, count(*), max(d.decision) FROM invocations i "
                "JOIN decisions d USING (run_id, case_id, variant_id) "
                "WHERE i.run_id = ? AND i.variant_id <> 'baseline' GROUP BY 1",
                (run_id,),
            )
        }


def test_variants_says_the_cap_and_tells_absent_from_one(tmp_path):
    absent = cli("variants", str(suite_file(tmp_path)), check=True).stdout
    assert "repeated up to 3 times (the spec's 3: runs_per_variant not set)" in absent
    one = cli("variants", str(suite_file(tmp_path, runs_per_variant=1)), check=True).stdout
    assert "repeated up to 1 time (runs_per_variant: 1)" in one
    # the same suite and seeds: the same plan, every time
    planned = [cli("variants", str(suite_file(tmp_path)), "--format", "json", check=True).stdout for _ in range(2)]
    assert planned[0] == planned[1] and json.loads(planned[0])
    assert "up to runs_per_variant times (the spec's 3" in " ".join(cli("variants", "--help").stdout.split())
    assert "runs_per_variant times (the spec's 3 when absent" in " ".join(cli("run", "--help").stdout.split())


def test_a_shipped_adversarial_suite_keeps_the_spec_s_3():
    assert "repeated up to 3 times (the spec's 3" in cli("variants", "adversarial", check=True).stdout


@pytest.mark.slow
@pytest.mark.parametrize(("settings", "runs"), [({}, 4), ({"runs_per_variant": 1}, 2), ({"runs_per_variant": 2}, 3)])
def test_a_material_variant_is_repeated_up_to_the_cap(tmp_path, settings, runs):
    out = tmp_path / "out"
    env = {"SCRIPTED_OUTCOMES": json.dumps(SCRIPT)}
    suite = suite_file(tmp_path, **settings)
    first = cli("run", str(suite), "--out", str(out), "-q", "--no-report", env=env, check=True).stdout.strip()
    found = variant_runs(out, first)
    assert found == {f"punctuation_noise/variant_000{k}": (runs, "structural") for k in (1, 2)}
    # deterministic: the same suite and seeds run the same plan again
    again = cli("run", str(suite), "--out", str(out), "-q", "--no-report", env=env, check=True).stdout.strip()
    assert variant_runs(out, again) == found
