"""The wheel as a user gets it: built with `python -m build` (sdist, then the wheel from the
sdist), checked by twine, installed into a fresh virtualenv with no source tree on the path,
and driven from an empty directory: shipped suites by name, shipped queries, compare, report,
export to Parquet, `db upgrade` of an old store, `init`.

Marked `wheel` (deselected by default: it builds and installs, about a minute); `.ci/run`
runs it on its own and reports its time: `pytest -m wheel`.
"""

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, store_at_revision

pytestmark = pytest.mark.wheel

OLD_REVISION = "0004_gauntlet"


def run(args: list, cwd: Path, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    started = time.monotonic()
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    print(f"{time.monotonic() - started:6.1f} s  {' '.join(str(a) for a in args)[:150]}")
    assert result.returncode == 0, (
        f"{args} exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )
    return result


def cached_llama_wheels() -> list[str]:
    """Where pip's cache holds the llama-cpp-python wheel built earlier (by `pip install -e .`):
    offered to pip, so the fresh virtualenv reuses it instead of compiling for minutes."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "list", "--format=abspath", "llama_cpp_python"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    return sorted({str(Path(p).parent) for p in listed if p.endswith(".whl")})


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--outdir", dist, REPO], cwd=dist)
    wheel = next(dist.glob("ironbench-*.whl"))
    sdist = next(dist.glob("ironbench-*.tar.gz"))
    run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], cwd=dist)
    return {"wheel": wheel, "sdist": sdist}


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> dict:
    """A fresh virtualenv holding the wheel and its dependencies, and an environment that
    carries nothing of the source tree or the test run's own virtualenv."""
    venv = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", venv], cwd=venv)
    links = [arg for folder in cached_llama_wheels() for arg in ("--find-links", folder)]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("IRONBENCH_", "PYTHON", "VIRTUAL_ENV")) and k not in ("COLUMNS", "LINES")
    }
    # Only if pip's cache had no wheel: llama-cpp-python compiles, with the flags these CPUs need.
    env["CMAKE_ARGS"] = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", *links, built["wheel"]], cwd=venv, env=env)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {"venv": venv, "env": env, "bin": venv / "bin"}


def test_the_wheel_and_sdist_carry_the_package_its_data_and_types(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    for folder in ("migrations", "queries", "suites", "examples"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert f"ironbench/shipped/{path.relative_to(REPO).as_posix()}" in names
    assert {
        "ironbench/py.typed",
        "ironbench/core/rules/ironclad.yaml",
        "ironbench/generators/data/synonyms.yaml",
        "ironbench/generators/data/wording.yaml",
    } <= names
    assert not [n for n in names if n.split("/")[0] not in ("ironbench",) and ".dist-info" not in n]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    import tarfile

    with tarfile.open(built["sdist"]) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {
        "migrations/env.py",
        "queries/failure_breakdown.sql",
        "suites/demo.yaml",
        "LICENSE",
        "CHANGELOG.md",
    } <= members
    assert {"mkdocs.yml", "docs/index.md", "tests/conftest.py"} <= members


def test_the_installed_wheel_runs_from_an_empty_directory(installed, tmp_path):
    env, bin_ = installed["env"], installed["bin"]
    work = tmp_path / "empty"
    work.mkdir()
    ironbench = bin_ / "ironbench"

    where = run([bin_ / "python", "-c", "import ironbench, sys; print(ironbench.__file__); print(sys.path)"], work, env)
    assert str(installed["venv"]) in where.stdout.splitlines()[0]
    assert str(REPO) not in where.stdout  # no source tree anywhere on the path

    from ironbench import __version__

    assert run([ironbench, "--version"], work, env).stdout.strip() == f"ironbench {__version__}"

    # shipped suites by name, twice (a pair to compare), on the simulated Ironclad
    first = run([ironbench, "run", "baseline", "--target", "fixture", "-q"], work, env).stdout.strip()
    second = run([ironbench, "run", "baseline", "--target", "fixture", "-q", "--no-report"], work, env).stdout.strip()
    assert (work / "outputs" / first / "report.html").is_file()

    # a shipped query, by name and with --run
    breakdown = run([ironbench, "query", "failure_breakdown.sql", "-f", "json"], work, env).stdout
    assert {row["case_id"] for row in json.loads(breakdown)} <= {
        "compile_email_regex",
        "convert_list_to_dict",
        "simple_cache",
    }
    stability = json.loads(run([ironbench, "query", "stability.sql", "--run", first, "-f", "json"], work, env).stdout)
    assert len(stability) == 3

    compared = run([ironbench, "compare", first, second, "--format", "json"], work, env).stdout
    assert json.loads(compared)["failed"] is False  # the same simulated system twice

    report = run([ironbench, "report", second, "--compare", first], work, env).stdout.strip()
    assert (work / report).is_file() and (work / report).stat().st_size > 10_000

    run([ironbench, "export", first, "--format", "parquet", "--to", "export"], work, env)
    counted = run(
        [
            bin_ / "python",
            "-c",
            "import duckdb; print(duckdb.sql(\"SELECT count(*) FROM 'export/invocations.parquet'\").fetchone()[0])",
        ],
        work,
        env,
    )
    assert int(counted.stdout) > 0

    # a store an older ironbench left behind, upgraded by the wheel's own migrations
    old = store_at_revision(work / "old.db", OLD_REVISION)
    from ironbench.store.migrate import SCHEMA_HEAD

    upgraded = run([ironbench, "db", "upgrade", "--store", old], work, env).stdout
    assert upgraded.strip().endswith(f"at revision {SCHEMA_HEAD}")
    run([ironbench, "run", "stress", "--target", "fixture", "--store", old, "-q", "--no-report"], work, env)

    # the demo's AI rewrites on the embedded model, through the wheel's llm plugin (the
    # simulated Ironclad stands in for forge, which takes minutes)
    demo = run([ironbench, "run", "demo", "--target", "fixture", "-q", "--no-report"], work, env).stdout.strip()
    rewrites = json.loads(run([ironbench, "query", "ai_acceptance.sql", "--run", demo, "-f", "json"], work, env).stdout)
    assert rewrites and all(row["attempts"] > 0 for row in rewrites)

    # the examples, copied into a folder of the user's, run as they are
    run([ironbench, "init", "bench"], work, env)
    run([ironbench, "run", "bench/baseline.yaml", "--target", "fixture", "-q", "--no-report"], work, env)
    # a store used by a run keeps its space reserve beside it (docs/concepts/store.md)
    assert sorted(p.name for p in work.iterdir()) == ["bench", "export", "old.db", "old.db-reserve", "outputs"]
