import json
import sys
import time
from pathlib import Path

import pytest

from ironbench.core.errors import TargetError
from ironbench.targets.command import cap_output, ensure_fresh_dir, invoke, preflight
from ironbench.targets.registry import resolve_target
from ironbench.targets.version import probe_module, target_version


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
    with pytest.raises(TargetError, match="module 'no_such_pkg.mod' is not installed for"):
        preflight(resolve_target([sys.executable, "-m", "no_such_pkg.mod", "{instruction}"]))
    preflight(resolve_target("fixture"))


def test_a_relative_file_in_a_target_is_refused_with_the_path_to_give(tmp_path, monkeypatch):
    from tests.conftest import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_agent.py").write_text("print('hi')\n")
    with pytest.raises(
        TargetError,
        match=rf"target file 'my_agent.py' is a relative path.*give it as "
        rf"'{tmp_path / 'my_agent.py'}'",
    ):
        preflight(resolve_target("python3 my_agent.py --task {instruction}"))
    with pytest.raises(TargetError, match="'agents/missing.sh' is a relative path.*give its absolute path"):
        preflight(resolve_target("bash agents/missing.sh {instruction}"))
    # absolute paths, inline code and arguments around the instruction are fine
    preflight(resolve_target(f"python3 {tmp_path / 'my_agent.py'} --task={{instruction}}"))
    preflight(resolve_target([sys.executable, "-c", "import sys; print(sys.argv[1])", "{instruction}"]))
    # through the front door: one line, exit 2, nothing written
    suite = Path(__file__).resolve().parents[2] / "suites" / "baseline.yaml"
    result = cli("run", str(suite), "--target", "python3 my_agent.py {instruction}", "--out", "out", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "my_agent.py" in result.stderr
    assert not (tmp_path / "out").exists()


def test_timeout_kills_the_whole_process_group(tmp_path):
    code = (
        "import subprocess, sys, time, pathlib;"
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']);"
        "pathlib.Path('child.pid').write_text(str(c.pid)); time.sleep(600)"
    )
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
    result = invoke(
        [sys.executable, "-c", "import os; print(os.environ['IRONCLAD_DEBUG'])"], tmp_path, 10, {"IRONCLAD_DEBUG": "1"}
    )
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
    version = target_version(resolve_target("fixture")).value  # ironbench's own checkout
    assert version.startswith("git:") and len(version) == len("git:3fa91bc")
    script = tmp_path / "agent.py"
    script.write_text("print(1)")
    assert target_version(resolve_target([sys.executable, str(script), "{instruction}"])).value == "unknown"
    pyyaml = resolve_target([sys.executable, "-m", "yaml", "{instruction}"])
    assert target_version(pyyaml).value[0].isdigit()  # no git checkout: the package version


def test_a_package_inside_someone_elses_checkout_is_not_versioned_by_it(tmp_path):
    import subprocess as sp

    sp.run(["git", "init", "-q", str(tmp_path)], check=True)
    package = tmp_path / "venv" / "site" / "agent.py"
    package.parent.mkdir(parents=True)
    package.write_text("print(1)")
    (tmp_path / ".gitignore").write_text("venv/\n")
    sp.run(["git", "-C", str(tmp_path), "add", ".gitignore"], check=True)
    sp.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"], check=True)
    assert target_version(resolve_target([sys.executable, str(package), "{instruction}"])).value == "unknown"


def make_venv(root: Path) -> Path:
    """A virtualenv of its own (as a user's Ironclad would have), without ironbench in it."""
    import subprocess as sp

    sp.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(
        sp.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    return python, site


def install_fake_ironclad(site: Path, version: str = "1.0.0") -> None:
    """A package only this venv has, with a distribution record, printing Ironclad's contract."""
    package = site / "venv_only_ironclad"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ironclad.py").write_text(
        "import sys\nprint('[+] Verified after 0 repairs.')\n"
        "print('[SUCCESS] Verified brick saved to: verified_bricks/x.py')\n"
    )
    dist = site / f"venv_only_ironclad-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: venv-only-ironclad\nVersion: {version}\n")
    (dist / "top_level.txt").write_text("venv_only_ironclad\n")


def test_a_module_in_the_targets_own_virtualenv_passes_preflight_and_is_versioned(tmp_path):
    python, site = make_venv(tmp_path / "venv")
    install_fake_ironclad(site)
    target = resolve_target([str(python), "-m", "venv_only_ironclad.ironclad", "{instruction}"])
    preflight(target)  # ironbench's own environment does not have it; the target's interpreter does
    assert target_version(target).value == "1.0.0"
    with pytest.raises(TargetError, match="not installed for"):
        preflight(resolve_target([sys.executable, "-m", "venv_only_ironclad.ironclad", "{instruction}"]))


def test_a_module_from_a_git_checkout_is_versioned_by_its_short_commit(tmp_path):
    import subprocess as sp

    python, site = make_venv(tmp_path / "venv")
    checkout = tmp_path / "checkout"
    (checkout / "src" / "checked_out_pkg").mkdir(parents=True)
    (checkout / "src" / "checked_out_pkg" / "__init__.py").write_text("")
    (checkout / "src" / "checked_out_pkg" / "tool.py").write_text("print(1)\n")
    sp.run(["git", "init", "-q", str(checkout)], check=True)
    sp.run(["git", "-C", str(checkout), "add", "."], check=True)
    sp.run(["git", "-C", str(checkout), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"], check=True)
    commit = sp.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    (site / "checkout.pth").write_text(str(checkout / "src") + "\n")  # an editable install
    target = resolve_target([str(python), "-m", "checked_out_pkg.tool", "{instruction}"])
    assert target_version(target).value == f"git:{commit[:7]}"


def test_the_default_targets_error_shows_the_target_form_for_another_virtualenv(tmp_path):
    python, _ = make_venv(tmp_path / "venv")
    with pytest.raises(TargetError) as error:
        preflight(resolve_target([str(python), "-m", "ironclad_ai_guardrails.ironclad", "{instruction}"]))
    assert 'pass --target "/path/to/venv/bin/python -m ironclad_ai_guardrails.ironclad {instruction}"' in str(
        error.value
    )


@pytest.mark.slow
def test_a_run_against_a_target_in_its_own_virtualenv(tmp_path):
    import json

    from tests.conftest import cli, make_suite, write_suite

    python, site = make_venv(tmp_path / "venv")
    install_fake_ironclad(site)
    suite = write_suite(tmp_path / "s.yaml", make_suite({"c": 3}))
    out = tmp_path / "out"
    run_id = cli(
        "run",
        str(suite),
        "--target",
        f"{python} -m venv_only_ironclad.ironclad {{instruction}}",
        "--out",
        str(out),
        "-q",
        check=True,
    ).stdout.strip()
    summary = json.loads((out / run_id / "baseline" / "c" / "run_001" / "summary.json").read_text())
    assert (summary["success"], summary["attempts"], summary["ironclad_version"]) == (True, 1, "1.0.0")


def test_a_module_behind_env_a_runner_or_its_console_script_is_versioned_and_says_how(tmp_path):
    import subprocess as sp

    python, site = make_venv(tmp_path / "venv")
    install_fake_ironclad(site, "2.3.4")
    module = "venv_only_ironclad.ironclad"
    for argv in (
        ["env", str(python), "-m", module, "{instruction}"],
        [
            "/usr/bin/env",
            "-u",
            "HOME",
            "OLLAMA_HOST=http://127.0.0.1:9",
            str(python),
            "-u",
            "-X",
            "dev",
            "-m",
            module,
            "{instruction}",
        ],
        [str(python), f"-m{module}", "{instruction}"],
    ):
        found = target_version(resolve_target(argv))
        assert found.value == "2.3.4", argv
        assert "distribution venv-only-ironclad 2.3.4" in found.source and str(tmp_path / "venv") in found.source
    # a console script pip wrote: its shebang's interpreter, the module its function is in
    launcher = tmp_path / "venv" / "bin" / "ironclad"
    launcher.write_text(f"#!{python}\nimport sys\nfrom {module} import main\nsys.exit(main())\n")
    launcher.chmod(0o755)
    assert target_version(resolve_target([str(launcher), "{instruction}"])).value == "2.3.4"
    # installed from a repository at a commit (PEP 610): that commit, in the spec's format
    dist = site / "venv_only_ironclad-2.3.4.dist-info"
    commit = "3fa91bc0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6"
    (dist / "direct_url.json").write_text(
        json.dumps({"url": "https://example.org/ironclad.git", "vcs_info": {"vcs": "git", "commit_id": commit}})
    )
    probe_module.cache_clear()
    found = target_version(resolve_target(["env", str(python), "-m", module, "{instruction}"]))
    assert found.value == "git:3fa91bc" and commit in found.source and "direct_url.json" in found.source
    # a module its interpreter cannot import, and a command naming none: unknown, saying why
    missing = target_version(resolve_target(["env", str(python), "-m", "no_such_module", "{instruction}"]))
    assert missing.value == "unknown" and "cannot import no_such_module" in missing.source
    assert "names no Python module" in target_version(resolve_target(["echo", "{instruction}"])).source
    del sp


@pytest.mark.slow
def test_the_run_records_the_version_and_how_it_was_found(tmp_path):
    from tests.conftest import cli

    out = tmp_path / "out"
    run_id = cli(
        "run", "baseline", "--target", "fixture", "--out", str(out), "-q", "--no-report", check=True
    ).stdout.strip()
    metadata = json.loads((out / run_id / "metadata.json").read_text())
    assert metadata["ironclad_version"].startswith("git:")
    assert "imports ironbench.targets.fixture_ironclad from a git checkout" in metadata["ironclad_version_source"]
