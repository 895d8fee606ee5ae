"""Shared test helpers: a scripted target honouring Ironclad's contract, suites, the CLI."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import settings

from ironbench.core.kinds import FENCE_LEVELS
from ironbench.run.runner import RunPaths
from ironbench.suite.models import parse_suite
from ironbench.targets.brick import take_brick

SCRIPTED = Path(__file__).parent / "fixtures" / "scripted_ironclad.py"
SCRIPTED_TARGET = [sys.executable, str(SCRIPTED), "{instruction}"]
REPO = Path(__file__).resolve().parents[1]


def _fence_level() -> str:
    """The level a run's fence takes on this machine, as the tests run: the highest the machine
    allows, capped by IRONBENCH_FENCE_LEVEL (how CI runs the default tier again at `partial`)."""
    from ironbench.sandbox import SandboxPolicy, machine_fence
    from ironbench.sandbox.plan import make_plan

    return make_plan(SandboxPolicy(), machine_fence()).level


FENCE_LEVEL = _fence_level()


def needs_fence(level: str):
    """Skip a test below the fence `level` it needs, saying which level this run has."""
    below = FENCE_LEVELS.index(FENCE_LEVEL) < FENCE_LEVELS.index(level)
    return pytest.mark.skipif(below, reason=f"needs the {level} fence; this run has {FENCE_LEVEL}")


def past_fence(lines: list[str]) -> list[str]:
    """What `show` says after its fence line, where it has one (below full the fence comes first)."""
    return lines[1:] if lines and lines[0].startswith("fence ") else lines


# Properties are about behaviour, never about time: a loaded machine (CI, -n 2 beside other
# work) makes an example slow, not wrong, so no example has a deadline.
settings.register_profile("ironbench", deadline=None)
settings.load_profile("ironbench")


def make_suite(cases: dict[str, int], **fields):
    """A baseline suite: {case_id: runs}."""
    data = {
        "suite_id": fields.pop("suite_id", "unit"),
        "mode": "baseline",
        "timeout_seconds": fields.pop("timeout_seconds", 30),
        "debug_enabled": fields.pop("debug_enabled", True),
        "target": SCRIPTED_TARGET,
        "cases": [
            {"id": cid, "instruction": f"Write a function named {cid}.", "runs": runs} for cid, runs in cases.items()
        ],
        **fields,
    }
    return parse_suite(data, "test.yaml")


# What the tests' own targets (tests/fixtures) read from their environment: a fenced target
# gets only the variables it is given (IRONBENCH_PASS_ENV is --pass-env's environment form).
FIXTURE_ENV = (
    "SCRIPTED_OUTCOMES", "SCRIPTED_SLEEP_MS", "SCRIPTED_SLEEP_BY_RUN", "SCRIPTED_ECHO", "SCRIPTED_DEBUG_FILES",
    "REPLAY_TRANSCRIPTS", "REPLAY_SEQUENCE", "REPLAY_DOWN_FLAG", "PIDS_DIR", "KILL_WITH", "KILL_AT_RENAME",
    "FILL_AT", "CANNED_MODEL_SERVER", "AGENT_HOLD", "AGENT_STREAM", "AGENT_MAX_REPAIRS", "AGENT_HIDE_ERRORS",
    "AGENT_CLIENT", "COIN_SLEEP_MS", "SCRIPTED_STATE", "PLAIN_CODES", "TOY_AGENT_OUTCOMES", "AGENT_SYSTEM", "CAPPED_STORE_PAGES",
)  # fmt: skip
# Set for the whole session: runs that module-scoped fixtures make start before any autouse fixture.
os.environ["IRONBENCH_PASS_ENV"] = ",".join(FIXTURE_ENV)


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch):
    """Re-runs after an infrastructure error start at once (tests of the backoff set their own)."""
    monkeypatch.setenv("IRONBENCH_BACKOFF", "0")


@pytest.fixture
def paths(tmp_path) -> RunPaths:
    return RunPaths.resolve(tmp_path / "out", None)


@pytest.fixture
def script(monkeypatch):
    """Set the scripted target's outcomes: script({case: [outcome, ...]})."""

    def set_script(outcomes: dict[str, list[str]], sleep_ms: int = 0) -> None:
        monkeypatch.setenv("SCRIPTED_OUTCOMES", json.dumps(outcomes))
        monkeypatch.setenv("SCRIPTED_SLEEP_MS", str(sleep_ms))

    return set_script


def taken(brick: Path):
    """A saved brick as the harness takes it from its folder (what `run_check` checks)."""
    return take_brick(brick.parent, brick.name)


def write_suite(path: Path, suite) -> Path:
    path.write_text(yaml.safe_dump(suite.to_dict(), sort_keys=False))
    return path


def cli(*args: str, env: dict | None = None, cwd: Path | None = None, check: bool = False, stdin: str | None = None):
    """The real console entry point, in a subprocess (tables at their natural width unless
    `env` sets COLUMNS, whatever the shell running the tests exports), `stdin` its input."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    result = subprocess.run(
        [sys.executable, "-m", "ironbench.cli.main", *args],
        capture_output=True,
        text=True,
        env={**inherited, **(env or {})},
        cwd=cwd or REPO,
        timeout=300,
        check=False,
        input=stdin,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"ironbench {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def query(out: Path, sql: str) -> list[dict]:
    """`ironbench query SQL --format json` over the store in `out`, read back."""
    return json.loads(cli("query", sql, "--out", str(out), "--format", "json", check=True).stdout)


def store_at_revision(path: Path, revision: str) -> Path:
    """A store migrated only up to `revision`, as an older ironbench left it."""
    from alembic import command
    from sqlalchemy import create_engine

    from ironbench.store.migrate import alembic_config

    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        config = alembic_config(path)
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
    engine.dispose()
    return path


@pytest.fixture
def scripted_model():
    """The scripted llm model (`scripted-rewriter`): set `.answers`, read `.calls`."""
    import llm

    from tests.fixtures import llm_scripted

    if not llm.plugins.pm.is_registered(llm_scripted):
        llm.plugins.pm.register(llm_scripted, name="ironbench-tests-scripted")
    llm_scripted.ScriptedRewriter.answers = []
    llm_scripted.ScriptedRewriter.calls = []
    yield llm_scripted.ScriptedRewriter


@pytest.fixture
def scripted_judge(scripted_model):
    """The scripted judge (`scripted-judge`, takes a grammar): set `.answers`, read `.calls`."""
    from tests.fixtures import llm_scripted

    llm_scripted.ScriptedJudge.answers = []
    llm_scripted.ScriptedJudge.calls = []
    yield llm_scripted.ScriptedJudge


def fenced(*, write: tuple = (), read: tuple = ()):
    """A fence that also lets the run's targets write (or read) these paths: a test's targets
    that keep state between invocations outside their own folders (a sequence to replay, a
    marker of an outage already seen)."""
    from ironbench.sandbox import SandboxPolicy

    return SandboxPolicy(allow_write=tuple(str(p) for p in write), allow_read=tuple(str(p) for p in read))


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt here, as in a terminal (a shell running the tests in the
    background leaves it ignored); restored after."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are handled on the main thread only")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def host_pid(pid: int, needle: str) -> int:
    """A live fenced process's pid as this machine sees it, from the pid it saw itself by (in its
    own pid namespace) and a text of its command line; `pid` itself when it ran unfenced."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        nspid = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
        if len(nspid) > 1 and int(nspid[-1]) == pid and needle.encode() in cmdline:
            return int(entry.name)
    return pid
