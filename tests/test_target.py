import sys
import time
from pathlib import Path

import pytest

from ironbench.errors import TargetError
from ironbench.targets.command import cap_output, ensure_fresh_dir, invoke, preflight
from ironbench.targets.registry import resolve_target
from ironbench.targets.version import target_version


def test_argv_is_never_passed_through_a_shell(tmp_path):
    target = resolve_target([sys.executable, "-c", "import sys; print(sys.argv[1])", "{instruction}"])
    instruction = "a; rm -rf / && echo $HOME `id`"
    result = invoke(target.argv(instruction), tmp_path, 10, {})
    assert result.stdout.strip() == instruction


def test_command_string_template_is_split_like_a_shell_line():
    target = resolve_target('python3 "my agent.py" --prompt={instruction}')
    assert target.argv("hi there") == ["python3", "my agent.py", "--prompt=hi there"]


def test_template_without_placeholder_is_rejected():
    with pytest.raises(TargetError, match=r"neither a registered target .* nor a command containing \{instruction\}"):
        resolve_target("python3 agent.py")


def test_missing_executable_and_missing_module_fail_preflight():
    with pytest.raises(TargetError, match="not found: 'definitely-not-here'"):
        preflight(resolve_target("definitely-not-here {instruction}"))
    with pytest.raises(TargetError, match="module not installed: 'no_such_pkg.mod'"):
        preflight(resolve_target([sys.executable, "-m", "no_such_pkg.mod", "{instruction}"]))
    preflight(resolve_target("fixture"))


def test_timeout_kills_the_whole_process_group(tmp_path):
    code = ("import subprocess, sys, time, pathlib;"
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']);"
            "pathlib.Path('child.pid').write_text(str(c.pid)); time.sleep(600)")
    started = time.monotonic()
    result = invoke([sys.executable, "-c", code], tmp_path, 1.5, {})
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 10
    child = int((tmp_path / "child.pid").read_text())
    assert _dead_or_zombie(child)


def _dead_or_zombie(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_environment_reaches_the_target(tmp_path):
    result = invoke([sys.executable, "-c", "import os; print(os.environ['IRONCLAD_DEBUG'])"], tmp_path, 10,
                    {"IRONCLAD_DEBUG": "1"})
    assert result.stdout.strip() == "1" and result.exit_code == 0


def test_output_cap_keeps_head_and_tail():
    text = "HEAD" + "x" * 200_000 + "TAIL"
    capped, truncated = cap_output(text, cap=1000)
    assert truncated and capped.startswith("HEAD") and capped.endswith("TAIL") and len(capped) < 1100
    assert cap_output("short") == ("short", False)


def test_fresh_dir_removes_leftovers(tmp_path):
    work = tmp_path / "w"
    (work / "verified_bricks").mkdir(parents=True)
    (work / "verified_bricks" / "old.py").write_text("stale")
    ensure_fresh_dir(work)
    assert work.is_dir() and list(work.iterdir()) == []


def test_version_is_git_commit_of_source_or_unknown(tmp_path):
    assert len(target_version(resolve_target("fixture"))) == 40  # ironbench's own checkout
    script = tmp_path / "agent.py"
    script.write_text("print(1)")
    assert target_version(resolve_target([sys.executable, str(script), "{instruction}"])) == "unknown"
    pyyaml = resolve_target([sys.executable, "-m", "yaml", "{instruction}"])
    assert target_version(pyyaml)[0].isdigit()  # no git checkout: the package version


def test_a_package_inside_someone_elses_checkout_is_not_versioned_by_it(tmp_path):
    import subprocess as sp

    sp.run(["git", "init", "-q", str(tmp_path)], check=True)
    package = tmp_path / "venv" / "site" / "agent.py"
    package.parent.mkdir(parents=True)
    package.write_text("print(1)")
    (tmp_path / ".gitignore").write_text("venv/\n")
    sp.run(["git", "-C", str(tmp_path), "add", ".gitignore"], check=True)
    sp.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"], check=True)
    assert target_version(resolve_target([sys.executable, str(package), "{instruction}"])) == "unknown"
