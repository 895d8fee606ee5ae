"""The fence of a check's bricks, through the front door: the host server (which forks one host
per brick) writes only where the hosts' folders are made and reaches no endpoint of the run's;
each host writes only its own check's folder, binds no socket, signals neither the server nor a
sibling; a host server a brick stopped is replaced at once, the check whose brick ran recorded as
`tampered`, the checks after it unharmed."""

import os
import signal
import socket
import sqlite3
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import yaml

from ironbench.sandbox import SandboxPolicy
from ironbench.sandbox.kernel import landlock_abi
from ironbench.sandbox.policy import Endpoint
from ironbench.targets.boundary import procs
from tests.conftest import cli, needs_fence

needs_partial = needs_fence("partial")
needs_signal_scope = pytest.mark.skipif(landlock_abi() < 6, reason="Landlock scopes signals from ABI 6")
ADD = {"entry_point": "add", "python": "def check(candidate):\n    assert candidate(2, 3) == 5\n"}

# The agent: copies bricks/<case>/add.py to verified_bricks/ and says so, Ironclad's way.
TARGET = """\
import os, shutil, sys
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs("verified_bricks", exist_ok=True)
shutil.copy(os.path.join(here, "bricks", os.environ["IRONBENCH_CASE_ID"], "add.py"), "verified_bricks/add.py")
print("[SUCCESS] Verified brick saved to: verified_bricks/add.py", flush=True)
"""

HONEST = "def add(a, b):\n    return a + b\n"


def _run(tmp_path: Path, bricks: dict[str, str], *flags: str, env: dict | None = None):
    """`ironbench run` of one case per brick (in order), the agent saving each; the checks'
    verdicts and details by case."""
    agent = tmp_path / "agent"
    for case, source in bricks.items():
        (agent / "bricks" / case).mkdir(parents=True)
        (agent / "bricks" / case / "add.py").write_text(textwrap.dedent(source))
    (agent / "target.py").write_text(TARGET)
    suite = {
        "suite_id": "hosts",
        "mode": "baseline",
        "timeout_seconds": 60,
        "stop": {"rule": "fixed", "runs": 1},
        "check": ADD,
        "target": [sys.executable, str(agent / "target.py"), "{instruction}"],
        "cases": [{"id": case, "instruction": "Write add(a, b)."} for case in bricks],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    out = tmp_path / "out"
    cli("run", str(tmp_path / "suite.yaml"), "--out", str(out), "--no-report", "-q", *flags, env=env, check=True)
    with sqlite3.connect(out / "ironbench.db") as conn:
        rows = conn.execute("SELECT case_id, verdict, detail FROM checks").fetchall()
    return {case: (verdict, detail) for case, verdict, detail in rows}


# -- the host server ------------------------------------------------------------------------------


def test_the_host_server_gets_none_of_what_the_run_allows_its_targets_but_reading():
    from ironbench.targets.boundary.launch import HostLaunch, host_policy

    policy = SandboxPolicy(
        allow_read=("/srv/data",),
        allow_write=("/srv/shared",),
        allow_net=(Endpoint("127.0.0.1", 8765),),
        hidden=("/srv/key",),
        gateway=Endpoint("127.0.0.1", 4000),
        level="partial",
    )
    launch = HostLaunch(("python",), "/x", {}, (), 1, 2, reads=("/prog",), writes=("/tmp/bricks",))
    server = host_policy(launch, policy.to_wire())
    assert server.allow_write == ("/tmp/bricks",)
    assert server.endpoints() == ()
    assert server.allow_read == ("/srv/data", "/prog")
    assert server.hidden == ("/srv/key",) and server.level == "partial"


@needs_partial
def test_a_brick_cannot_write_the_runs_allow_write_folder(tmp_path):
    shared = tmp_path / "shared"  # what the next invocation of the target reads
    shared.mkdir()
    brick = f"""
    def add(a, b):
        try:
            with open({str(shared / "from_brick.txt")!r}, "w") as handle:
                handle.write(repr((a, b)))
        except OSError:
            pass
        return a + b
    """
    found = _run(tmp_path, {"bw": brick}, "--allow-write", str(shared))
    assert found["bw"][0] == "correct"
    assert list(shared.iterdir()) == []


@needs_partial
def test_a_brick_reaches_no_endpoint_the_run_allows_its_targets(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted: list[object] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    watcher = threading.Thread(target=accept, daemon=True)
    watcher.start()
    brick = f"""
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"from the brick")
    except OSError:
        pass
    def add(a, b):
        return a + b
    """
    try:
        found = _run(tmp_path, {"net": brick}, "--allow-net", f"127.0.0.1:{port}")
    finally:
        done.set()
        watcher.join()
        listener.close()
    assert found["net"][0] == "correct"
    assert accepted == []


# -- each host in its own folder ------------------------------------------------------------------

# Returns the sum only if it could write its own folder and nothing of another check's: every
# other check folder beside its own (the next check's judge lays its folder out meanwhile), and
# a socket bound there (the partial fence's supervisor binds outside the host's own domain).
SIBLINGS = """
import glob, os, socket, tempfile, time
parts = os.getcwd().split(os.sep)  # .../ironbench-hosts-*/<its check's folder>/...
at = max(i for i, part in enumerate(parts) if part.startswith("ironbench-hosts-"))
mine = os.sep.join(parts[: at + 2])
wrote = []
with tempfile.NamedTemporaryFile() as handle:  # its own folder: $TMPDIR
    handle.write(b"mine")
deadline = time.monotonic() + 5
others = []
while not others and time.monotonic() < deadline:
    others = [f for f in glob.glob(os.path.join(os.path.dirname(mine), "*")) if f != mine]
    time.sleep(0.02)
for other in others:
    for path in (other, os.path.join(other, "brick")):
        try:
            with open(os.path.join(path, "planted.py"), "w") as handle:
                handle.write("planted")
            wrote.append(path)
        except OSError:
            pass
        try:
            socket.socket(socket.AF_UNIX).bind(os.path.join(path, "ironbench_check"))
            wrote.append(path + " (socket)")
        except OSError:
            pass
def add(a, b):
    return a + b if others and not wrote else -1
"""


@needs_partial
def test_a_brick_writes_its_own_check_folder_and_no_other(tmp_path):
    found = _run(tmp_path, {"first": SIBLINGS, "second": HONEST, "third": SIBLINGS})
    assert {case: verdict for case, (verdict, _) in found.items()} == {
        "first": "correct",
        "second": "correct",
        "third": "correct",
    }


SIGNALS = """
import os, time
refused = []
parent = os.getppid()
try:
    os.kill(parent, 0)
except PermissionError:
    refused.append(parent)
siblings = []
deadline = time.monotonic() + 5
while not siblings and time.monotonic() < deadline:  # the next check's host, forked meanwhile
    try:
        with open(f"/proc/{parent}/task/{parent}/children") as handle:
            siblings = [int(p) for p in handle.read().split() if int(p) != os.getpid()]
    except OSError:
        pass
    time.sleep(0.02)
for sibling in siblings:
    try:
        os.kill(sibling, 0)
    except PermissionError:
        refused.append(sibling)
def add(a, b):
    return a + b if siblings and refused == [parent, *siblings] else -1
"""


@needs_partial
@needs_signal_scope
def test_a_brick_cannot_signal_its_host_server_or_a_sibling_host(tmp_path):
    found = _run(tmp_path, {"signals": SIGNALS, "after": HONEST})
    assert found["signals"][0] == "correct", found


# -- a stopped host server ------------------------------------------------------------------------

# Red team 1's "stopper": a brick that stops the process that forked it, then checks after it.
STOPPER = """
import os, signal
try:
    os.kill(os.getppid(), signal.SIGSTOP)
except OSError:
    pass
def add(a, b):
    return a + b
"""


@needs_partial
def test_a_brick_that_stops_its_host_server_harms_no_later_check(tmp_path):
    found = _run(tmp_path, {"stopper": STOPPER, "b": HONEST, "c": HONEST, "d": HONEST})
    assert found["stopper"][0] in ("correct", "tampered")  # refused (signals scoped), or caught
    assert {case: found[case][0] for case in "bcd"} == {"b": "correct", "c": "correct", "d": "correct"}


def _servers_and_hosts(pid: int) -> tuple[list[int], list[int]]:
    """The host servers below `pid` (this test's run only), and their hosts (forks of a server:
    the same command line)."""
    below = procs.descendants(pid)
    found = []
    for child in below:
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        program = cmdline[0].endswith(b"bwrap")  # bubblewrap's monitor names the program too
        if not program and b"--serve" in cmdline and any(part.endswith(b"host.pyc") for part in cmdline):
            found.append(child)
    # at full the fence's first process is a bare init running the same program: the server is its child
    inits = {child for child in found if procs.first_in_namespace(child)}
    servers = [c for c in found if c not in inits and (_parent(c) not in found or _parent(c) in inits)]
    return servers, [h for h in found if _parent(h) in servers]


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


@needs_partial
def test_a_host_server_stopped_while_a_brick_runs_is_that_bricks_doing(tmp_path):
    """However the server came to be stopped (a kernel that cannot scope signals lets its brick
    do it): the zygote sees it within a fraction of a second, the running check is `tampered`,
    and the checks after it get a fresh server."""
    sleeper = """
    import os, time
    def add(a, b):
        open("running", "w").close()
        time.sleep(3)
        return a + b
    """
    found: dict = {}
    stopped: list[int] = []

    def stop_when_running() -> None:
        me = os.getpid()
        deadline = time.monotonic() + 120
        while not stopped and time.monotonic() < deadline:
            servers, hosts = _servers_and_hosts(me)
            if any(Path(f"/proc/{host}/cwd/running").exists() for host in hosts):
                for server in servers:
                    os.kill(server, signal.SIGSTOP)
                    stopped.append(server)
            time.sleep(0.05)

    stopper = threading.Thread(target=stop_when_running, daemon=True)
    stopper.start()
    found.update(_run(tmp_path, {"sleeper": sleeper, "b": HONEST, "c": HONEST}))
    stopper.join(5)
    assert stopped
    assert found["sleeper"][0] == "tampered" and "was stopped while the brick ran" in found["sleeper"][1]
    assert (found["b"][0], found["c"][0]) == ("correct", "correct")


# At import, sets mode 0 on every folder and file it can find of the hosts' folders (its siblings',
# the next check's laid out meanwhile, and the hosts' folder itself), for 2 s.
CHMODDER = """
import os, time
parts = os.getcwd().split(os.sep)
at = max(i for i, part in enumerate(parts) if part.startswith("ironbench-hosts-"))
root = os.sep.join(parts[: at + 1])
deadline = time.monotonic() + 2
while time.monotonic() < deadline:
    for folder, names, files in os.walk(root):
        for name in [*names, *files]:
            try:
                os.chmod(os.path.join(folder, name), 0)
            except OSError:
                pass
    try:
        os.chmod(root, 0)
    except OSError:
        pass
    time.sleep(0.01)
def add(a, b):
    return a + b
"""


@needs_partial
def test_a_brick_changes_no_files_mode_so_no_later_check_is_harmed(tmp_path):
    """Mode 0 on the next check's folder made honest bricks import errors, and on the hosts'
    folder tampered: Landlock governs no mode, and at partial the supervisor changed it for any
    host. A host changes no file's mode, owner, times or attributes."""
    found = _run(tmp_path, {"a_chmod": CHMODDER, "b": HONEST, "c": HONEST})
    assert {case: verdict for case, (verdict, _) in found.items()} == {
        "a_chmod": "correct",
        "b": "correct",
        "c": "correct",
    }
