"""The CI recipe of docs/guides/ci.md runs as written: baseline on main, the branch, the comparison page,
`compare --junit`, and the job's exit code (here with the `fixture` and scripted targets)."""

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO, SCRIPTED

FIXTURE = "fixture"


def recipe(name: str = "shell") -> str:
    page = (REPO / "docs" / "guides" / "ci.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- ci-recipe: {name} -->\n```bash\n(.*?)```", page, re.DOTALL)
    assert found, f"the {name} CI recipe in docs/guides/ci.md"
    return found.group(1)


def run_recipe(tmp_path: Path, env: dict, name: str = "shell") -> subprocess.CompletedProcess:
    (tmp_path / "ci").mkdir(exist_ok=True)
    (tmp_path / "ci" / "ironbench.sh").write_text(recipe(name))
    (tmp_path / "suites").mkdir(exist_ok=True)
    (tmp_path / "suites" / "baseline.yaml").write_text((REPO / "suites" / "baseline.yaml").read_text())
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the `ironbench` command
    clean = {k: v for k, v in os.environ.items() if not k.startswith("IRONBENCH_") or k == "IRONBENCH_PASS_ENV"}
    return subprocess.run(
        ["bash", "ci/ironbench.sh"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**clean, "PATH": path, **env},
        check=False,
    )


@pytest.mark.slow
def test_the_recipe_passes_when_the_branch_behaves_like_main(tmp_path):
    result = run_recipe(tmp_path, {"MAIN_TARGET": FIXTURE, "BRANCH_TARGET": FIXTURE})
    assert result.returncode == 0, result.stderr
    artifacts = tmp_path / "ironbench-ci"
    assert (artifacts / "ironbench.db").is_file() and (artifacts / "compare.html").is_file()
    assert "hash chain holds" in result.stdout and "verdict: no significant change" in result.stdout
    root = ET.parse(artifacts / "junit.xml").getroot()
    assert root.get("failures") == "0" and int(root.get("tests")) == 4  # three cases and the gate


@pytest.mark.slow
def test_the_recipe_fails_the_job_when_the_branch_regressed(tmp_path):
    broken = (
        f"{shlex.join([sys.executable, str(SCRIPTED)])} {{instruction}}"  # every run of the branch fails to generate
    )
    result = run_recipe(
        tmp_path,
        {
            "MAIN_TARGET": FIXTURE,
            "BRANCH_TARGET": broken,
            "SCRIPTED_OUTCOMES": json.dumps(
                {c: ["generation"] for c in ("compile_email_regex", "convert_list_to_dict", "simple_cache")}
            ),
        },
    )
    assert result.returncode == 1, result.stderr
    assert "verdict: REGRESSION" in result.stdout
    artifacts = tmp_path / "ironbench-ci"
    page = (artifacts / "compare.html").read_text(encoding="utf-8")
    assert "regression" in page.lower()
    root = ET.parse(artifacts / "junit.xml").getroot()
    gate = [c for c in root.iter("testcase") if c.get("name").startswith("gate")]
    assert gate and gate[0].find("failure") is not None


@pytest.mark.slow
def test_the_sequential_recipe_keeps_mains_run_and_gates_the_branch_against_it(tmp_path):
    broken = f"{shlex.join([sys.executable, str(SCRIPTED)])} {{instruction}}"
    failing = json.dumps({c: ["generation"] for c in ("compile_email_regex", "convert_list_to_dict", "simple_cache")})
    env = {"MAIN_TARGET": FIXTURE, "BRANCH_TARGET": FIXTURE, "SUITE": "suites/baseline.yaml"}
    sound = run_recipe(tmp_path, env, "sequential")
    assert sound.returncode == 0, sound.stderr
    said = " ".join(sound.stderr.split())  # the verdict lines, unwrapped
    assert "• Gate against " in said and ": not regressed (pass, exit 0)." in said
    assert "pass (sequential gate against" in said
    main_run = (tmp_path / "ironbench-ci" / "main.run").read_text().strip()
    # the next job restores the store: main's run is reused, not run again
    broken_env = {**env, "BRANCH_TARGET": broken, "SCRIPTED_OUTCOMES": failing, "MAIN_TARGET": "false"}
    regressed = run_recipe(tmp_path, broken_env, "sequential")
    assert regressed.returncode == 1, regressed.stderr
    assert f"FAIL (sequential gate against {main_run}" in " ".join(regressed.stderr.split())
