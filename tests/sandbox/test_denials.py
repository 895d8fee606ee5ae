"""What the fence denied a program, as data: read from what the fence saw and from what a failed
program printed, matched only against what its plan withheld and the machine has; honest
failures that merely use the same words are never the fence's (a property over many of them);
the credential line names names, never values."""

import os
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.sandbox import Endpoint, SandboxPolicy, credentials_line, fence_caused, withheld_credentials
from ironbench.sandbox.denials import Program, explain
from ironbench.sandbox.machine import MachineFence
from ironbench.sandbox.plan import LEVEL_CAP_VARIABLE, make_plan
from ironbench.sandbox.watch import Seen

FULL = MachineFence("full", "bubblewrap 0.11.0", (), "/usr/bin/bwrap", "/usr/bin/nsenter", 7)
ENVIRON = ("PATH", "LANG", "OPENAI_API_KEY", "GITHUB_TOKEN", "USER", "IRONBENCH_TEST_SECRET", "AGENT_MODE")
GIVEN = frozenset(("PATH", "LANG", "HOME", "TMPDIR"))
NOTHING_LISTENS: frozenset[int] = frozenset()


@pytest.fixture(autouse=True)
def _uncapped(monkeypatch):
    monkeypatch.delenv(LEVEL_CAP_VARIABLE, raising=False)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A user's home with an agent's config in it (and an SSH key), as the harness's machine has it."""
    found = tmp_path / "home"
    (found / ".config" / "agent").mkdir(parents=True)
    (found / ".config" / "agent" / "config.json").write_text("{}")
    (found / ".ssh").mkdir()
    (found / ".ssh" / "id_rsa").write_text("key")
    monkeypatch.setenv("HOME", str(found))
    return found


def plan_for(home: Path, answer_key: tuple[str, ...] = (), **policy):
    return make_plan(SandboxPolicy(hidden=answer_key, **policy).with_run(answer_key, None), FULL)


def program(output: str, failed: bool = True, seen: tuple[Seen, ...] = (), instruction: str = "Write add.") -> Program:
    return Program(output, instruction, failed, "/work/out/run/add/run_001", GIVEN, seen)


def denied(plan, prog: Program, home: Path, listening: frozenset[int] = NOTHING_LISTENS):
    return explain(plan, prog, ENVIRON, str(home), listening)


def test_a_variable_of_the_harness_not_passed_and_named_missing_is_the_fence_with_its_flag(home):
    plan = plan_for(home)
    found = denied(plan, program("Error: OPENAI_API_KEY is not set\n"), home)
    assert [(d.kind, d.what, d.flag, d.explains) for d in found] == [
        ("variable", "OPENAI_API_KEY", "--pass-env OPENAI_API_KEY", True)
    ]
    assert fence_caused(found) and found[0].line() == "OPENAI_API_KEY was not passed (--pass-env OPENAI_API_KEY)"
    assert denied(plan, program("KeyError: 'GITHUB_TOKEN'"), home)[0].flag == "--pass-env GITHUB_TOKEN"


@pytest.mark.parametrize(
    "output",
    [
        "Error: PATH is not set",  # passed: not the fence's
        "Error: ANTHROPIC_API_KEY is not set",  # not in the harness's environment: nothing withheld
        "AssertionError: USER not found in the record",  # a session's own word, never a credential
        "Error: IRONBENCH_TEST_SECRET is missing",  # the harness's own: never suggested
        "OPENAI_API_KEY_FILE is not set",  # another name that begins with it
        "Loaded OPENAI_API_KEY from the config",  # named, but not as missing
    ],
)
def test_a_variable_line_that_is_not_the_fence_names_nothing(home, output):
    assert denied(plan_for(home), program(output), home) == ()


def test_a_variable_the_instruction_names_is_no_evidence(home):
    prog = program("Error: AGENT_MODE is not set", instruction="Read AGENT_MODE and fail when it is not set.")
    assert denied(plan_for(home), prog, home) == ()


def test_nothing_is_read_from_the_output_of_a_program_that_succeeded(home):
    assert denied(plan_for(home), program("Error: OPENAI_API_KEY is not set", failed=False), home) == ()


def test_a_hidden_path_the_machine_has_is_named_with_its_folder_to_allow(home):
    plan = plan_for(home)
    inside = "/tmp/home/.config/agent/config.json"  # the program's own home, at full
    output = f"FileNotFoundError: [Errno 2] No such file or directory: '{inside}'"
    (found,) = denied(plan, program(output), home)
    assert (found.kind, found.what, found.flag, found.explains) == (
        "path", "~/.config/agent/config.json", "--allow-read ~/.config/agent", True,
    )  # fmt: skip
    absolute = denied(plan, program(f"cat: {home}/.config/agent/config.json: No such file or directory"), home)
    assert [d.flag for d in absolute] == ["--allow-read ~/.config/agent"]


@pytest.mark.parametrize(
    "line",
    [
        "No such file or directory: '{home}/.config/nothing/here.json'",  # not on the machine either
        "No such file or directory: '/usr/share/nothing-of-that-name'",  # not hidden
        "Permission denied: '/proc/1/mem'",  # not hidden: the kernel's own refusal
        "read {home}/.config/agent/config.json fine",  # no failure said
        "No such file or directory: '/work/out/run/add/run_001/missing.txt'",  # its own folder
    ],
)
def test_a_path_line_that_is_not_the_fence_names_nothing(home, line):
    assert denied(plan_for(home), program(line.format(home=home)), home) == ()


def test_a_path_through_a_link_is_not_looked_through(home, tmp_path):
    (home / "linked").symlink_to(home / ".config")
    assert denied(plan_for(home), program(f"No such file or directory: '{home}/linked/agent/config.json'"), home) == ()


def test_the_answer_key_and_a_credential_store_get_no_flag(home, tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "check_add.py").write_text("assert True")
    plan = plan_for(home, answer_key=(str(suite),))
    (key,) = denied(plan, program(f"No such file or directory: '{suite}/check_add.py'"), home)
    assert key.flag is None and "answer key" in key.line() and fence_caused([key])
    # a file the suite's folder does not hold (a target named by a path that is not there): its own
    assert denied(plan, program(f"python: can't open file '{suite}/agent.py': [Errno 2] No such file"), home) == ()
    (ssh,) = denied(plan, program("No such file or directory: '/tmp/home/.ssh/id_rsa'"), home)
    assert (ssh.what, ssh.flag) == ("~/.ssh/id_rsa", None) and "credential store" in ssh.line()


@pytest.mark.parametrize(
    ("make", "printed", "why"),
    [
        (".claude/.credentials.json", "~/.claude/.credentials.json", "credential store"),
        (".bash_history", "~/.bash_history", "history"),
        (".config/openai/key", "~/.config/openai/key", "credential store"),
        ("agent-sock/agent.1", "~/agent-sock/agent.1", "unix socket"),
        ("project/outputs/run_1/add.py", "~/project/outputs/run_1/add.py", "ironbench store"),
    ],
)
def test_a_path_a_target_could_steer_the_user_into_allowing_gets_no_flag(home, make, printed, why):
    """A failing target's output is its word: it names a path to be handed it, and the advice must
    not hand it a credential, a shell's history, a socket (at full a read-only allowance lets it
    connect) or another run's store."""
    path = home / make
    path.parent.mkdir(parents=True, exist_ok=True)
    if "sock" in make:
        import socket

        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(str(path))
            (found,) = denied(plan_for(home), program(f"No such file or directory: '{path}'"), home)
    else:
        path.write_text("secret")
        if "outputs" in make:
            (home / "project" / "outputs" / "ironbench.db").write_text("")
        (found,) = denied(plan_for(home), program(f"No such file or directory: '{path}'"), home)
    assert (found.what, found.flag, found.explains) == (printed, None, True) and why in found.line()


def test_the_harness_s_own_code_is_never_suggested_for_writing(home, tmp_path, monkeypatch):
    """A target printing a read-only error for ironbench's own site-packages (where the fence
    hides nothing) was told to ask for --allow-write there: what ironbench, its judge and its
    gateway import, unfenced."""
    import dataclasses
    import sys

    packages = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    packages.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(packages)])
    plan = dataclasses.replace(plan_for(home), hidden=(str(home),))  # the venv's tree is not hidden
    line = f"OSError: [Errno 30] Read-only file system: '{packages}/sitecustomize.py'"
    (found,) = denied(plan, program(line), home)
    assert (found.flag, found.explains) == (None, True) and "suggests no flag" in found.line()


@pytest.mark.parametrize("printed", ["/tmp/home", "~/.cache/huggingface/token", "~/.kaggle/kaggle.json"])
def test_a_folder_whose_allowance_would_give_a_credential_store_is_never_suggested(home, printed):
    """`--allow-read ~` was suggested for a target that printed its own home missing, and
    following it gave ~/.ssh; the stores of other tools are credential stores too."""
    (home / ".cache" / "huggingface").mkdir(parents=True)
    (home / ".cache" / "huggingface" / "token").write_text("hf_x")
    (home / ".kaggle").mkdir()
    (home / ".kaggle" / "kaggle.json").write_text("{}")
    found = denied(plan_for(home), program(f"No such file or directory: '{printed}'"), home)
    assert found and all(d.flag is None for d in found), found


def test_a_hidden_path_outside_the_home_gets_no_flag(home, tmp_path):
    """The machine's temporary and runtime trees hold other runs and other programs' sockets."""
    other_run = tmp_path / "elsewhere" / "out"
    other_run.mkdir(parents=True)
    (other_run / "ironbench.db").write_text("")
    (found,) = denied(plan_for(home), program(f"No such file or directory: '{other_run}/ironbench.db'"), home)
    assert found.flag is None and "outside your home" in found.line()


def test_only_the_end_of_a_long_output_is_read(home):
    early = "Error: OPENAI_API_KEY is not set\n"
    filler = ("x" * 99 + "\n") * 1000  # more than is read of an output, less than was read before
    assert denied(plan_for(home), program(early + filler), home) == ()
    assert denied(plan_for(home), program(filler + early), home)[0].flag == "--pass-env OPENAI_API_KEY"


def test_a_folder_that_holds_a_credential_store_is_never_suggested(home):
    (home / ".config" / "gh").mkdir()
    (home / ".config" / "settings.json").write_text("{}")
    (found,) = denied(plan_for(home), program(f"No such file or directory: '{home}/.config/settings.json'"), home)
    assert found.flag == "--allow-read ~/.config/settings.json"  # the file, not ~/.config


def test_an_endpoint_refused_explains_a_failure_only_where_something_listens(home):
    plan = plan_for(home)
    seen = (Seen("endpoint", "127.0.0.1:8765", "network"),)
    refused = program("ConnectionRefusedError: [Errno 111] Connection refused", seen=seen)
    (listened,) = denied(plan, refused, home, frozenset({8765}))
    assert (listened.what, listened.flag, listened.explains) == ("127.0.0.1:8765", "--allow-net 127.0.0.1:8765", True)
    (idle,) = denied(plan, refused, home, NOTHING_LISTENS)  # allowing it would change nothing
    assert not idle.explains and not fence_caused([idle])
    quiet = denied(plan, program("AssertionError: 3 != 4", seen=seen), home, frozenset({8765}))
    assert not fence_caused(quiet)  # refused, but its failure says nothing of it


def test_an_endpoint_named_in_a_failing_line_is_found_without_the_fence_seeing_it(home):
    plan = plan_for(home)
    node = program("Error: connect ECONNREFUSED 127.0.0.1:8765")
    assert [d.flag for d in denied(plan, node, home, frozenset({8765}))] == ["--allow-net 127.0.0.1:8765"]
    requests = program(
        "HTTPConnectionPool(host='127.0.0.1', port=8765): Max retries exceeded with url: /v1 "
        "(Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))"
    )
    assert fence_caused(denied(plan, requests, home, frozenset({8765})))
    remote = program("httpx.ConnectError: [Errno -3] Temporary failure in name resolution (https://api.openai.com/v1)")
    assert [d.flag for d in denied(plan, remote, home)] == ["--allow-net api.openai.com:443"]


def test_an_allowed_endpoint_that_fails_is_not_the_fence(home):
    plan = plan_for(home, allow_net=(Endpoint("127.0.0.1", 11434),))
    down = program("Error connecting to Ollama: connect ECONNREFUSED 127.0.0.1:11434")
    assert denied(plan, down, home, frozenset({11434})) == ()


def test_a_look_up_the_network_saw_takes_its_port_from_the_output(home):
    plan = plan_for(home)
    seen = (Seen("lookup", "api.example.com", "network"),)
    said = program("getaddrinfo failed for http://api.example.com:8080/v1", seen=seen)
    assert [d.flag for d in denied(plan, said, home)] == ["--allow-net api.example.com:8080"]
    unsaid = program(
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>", seen=seen
    )
    assert [(d.flag, d.explains) for d in denied(plan, unsaid, home)] == [("--allow-net api.example.com:443", True)]


def test_partials_supervisor_refuses_a_connect_as_a_permission(home):
    seen = (Seen("endpoint", "127.0.0.1:8765", "supervisor"),)
    found = denied(
        plan_for(home), program("PermissionError: [Errno 13] Permission denied", seen=seen), home, frozenset({8765})
    )
    assert fence_caused(found) and found[0].seen == "supervisor"


def test_a_missing_allowed_path_is_told_and_is_no_fence_cause(home):
    seen = (Seen("missing", f"{home}/.config/gone", "fence"),)
    (found,) = denied(plan_for(home), program("No such file or directory: '~/.config/gone/x'", seen=seen), home)
    assert found.kind == "missing" and found.what == "~/.config/gone" and not fence_caused([found])


def test_an_unfenced_plan_denies_nothing(home):
    plan = make_plan(SandboxPolicy(mode="off"), FULL)
    assert denied(plan, program("Error: OPENAI_API_KEY is not set"), home) == ()


def test_denials_are_bounded(home):
    seen = tuple(Seen("endpoint", f"127.0.0.1:{port}", "network") for port in range(1000, 1100))
    assert (
        len(denied(plan_for(home), program("Connection refused", seen=seen), home, frozenset(range(1000, 1100)))) == 16
    )


# -- honest failures: words the fence's own failures use, about nothing it withheld -----------------

WORDS = st.sampled_from(
    [
        "Error:", "not set", "missing", "No such file or directory:", "Permission denied", "KeyError:",
        "Connection refused", "getaddrinfo failed", "required", "Read-only file system", "FAILED", "assert",
        "127.0.0.1:11434", "/usr/lib/python3/x.py", "/nonexistent/folder/file", "~/never/made.txt",
        "/tmp/home/not/there", "PATH", "LANG", "ANTHROPIC_API_KEY", "USER", "add(2, 3) == 6", "==", "'",
    ]
)  # fmt: skip
NAMES = st.text(string.ascii_uppercase + "_", min_size=3, max_size=12).filter(lambda n: n not in ENVIRON)


@given(st.lists(st.lists(st.one_of(WORDS, NAMES), min_size=1, max_size=8).map(" ".join), min_size=1, max_size=12))
def test_an_honest_failure_is_never_the_fences(tmp_path_factory, lines):
    """Whatever a failing target prints of these words (a withheld variable aside: the fixture
    environment has none of the names drawn), paths the machine lacks, an allowed endpoint: never
    the fence's doing."""
    home = tmp_path_factory.mktemp("home")
    plan = make_plan(SandboxPolicy(allow_net=(Endpoint("127.0.0.1", 11434),)).with_run((), None), FULL)
    found = explain(plan, program("\n".join(lines)), ("PATH", "LANG", "USER"), str(home), frozenset({11434}))
    assert not fence_caused(found), found


# -- the line said before the first invocation ------------------------------------------------------


def test_the_credentials_line_names_each_withheld_name_and_no_value():
    environ = {
        "OPENAI_API_KEY": "sk-live-123456", "GITHUB_TOKEN": "ghp_abcdef", "DB_PASSWORD": "hunter2",
        "AWS_SECRET_ACCESS_KEY": "wJalr", "PATH": "/usr/bin", "IRONBENCH_TEST_SECRET": "s3cr3t", "HOME": "/root",
        "TOKENIZERS_PARALLELISM": "false", "PASSED_API_KEY": "pk-998877",
    }  # fmt: skip
    names = withheld_credentials(SandboxPolicy(pass_env=("PASSED_API_KEY",)), environ)
    assert names == ["AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "OPENAI_API_KEY"]
    line = credentials_line(names)
    assert line is not None and "--pass-env OPENAI_API_KEY" in line and "--pass-env DB_PASSWORD" in line
    assert not any(value in line for value in environ.values() if len(value) > 4 and value not in ("false",))
    assert credentials_line(withheld_credentials(SandboxPolicy(), {"PATH": "/usr/bin"})) is None
    assert withheld_credentials(SandboxPolicy(mode="off"), environ) == []  # unfenced: it gets them all


def test_a_name_passed_through_the_environment_variable_is_not_withheld(monkeypatch):
    environ = {"OPENAI_API_KEY": "sk", "IRONBENCH_PASS_ENV": "OPENAI_API_KEY"}
    assert withheld_credentials(SandboxPolicy(), environ) == []


def test_the_harness_home_is_the_default(home):
    assert os.path.expanduser("~") == str(home)
