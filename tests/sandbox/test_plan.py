"""The fence's plan and its backends as data: which backend a plan picks on a machine and what
it records, the bubblewrap options and the Landlock rules a program gets, and a plan read back
from its record."""

import os
import resource

import pytest

from ironbench.core.errors import SandboxError
from ironbench.sandbox import BACKENDS, Endpoint, FencePlan, MachineFence, SandboxPolicy
from ironbench.sandbox.bubblewrap import options
from ironbench.sandbox.landlock import around, rules
from ironbench.sandbox.plan import LEVEL_CAP_VARIABLE, make_plan

FULL = MachineFence("full", "bubblewrap 0.11.0", (), "/usr/bin/bwrap", "/usr/bin/nsenter", 7)
PARTIAL = MachineFence("partial", "landlock 7 + seccomp", (), None, None, 7, "bubblewrap cannot make namespaces here")
NONE = MachineFence("none", "none", (), None, None, 0, "bubblewrap is not installed")


@pytest.fixture(autouse=True)
def _uncapped(monkeypatch):
    monkeypatch.delenv(LEVEL_CAP_VARIABLE, raising=False)


def test_the_backends_register_by_name_each_with_its_level():
    assert {name: backend.level for name, backend in BACKENDS.items()} == {
        "none": "none",
        "bubblewrap": "full",
        "landlock": "partial",
    }


def test_a_plan_takes_the_highest_backend_the_machine_allows_and_records_it():
    policy = SandboxPolicy(hidden=("/srv/out",), allow_read=("/opt/agent",), pass_env=("OPENAI_API_KEY",))
    plan = make_plan(policy, FULL)
    assert (plan.level, plan.backend, plan.mechanism) == ("full", "bubblewrap", "bubblewrap 0.11.0")
    assert plan.hidden[0] == "/srv/out" and "/tmp" in plan.hidden and plan.answer_key == ("/srv/out",)
    assert plan.read_back == ("/opt/agent",) and plan.environment[-1] == "OPENAI_API_KEY"
    assert {"call": "ptrace", "action": "EPERM", "why": "reads or drives another process"} in plan.refused
    partial = make_plan(policy, PARTIAL)
    assert (partial.level, partial.backend, partial.mechanism) == ("partial", "landlock", "landlock 7 + seccomp")
    assert partial.gaps[0].startswith("processes:") and "namespaces: bubblewrap cannot" in partial.gaps[-1]
    assert any(rule["action"] == "notify" for rule in partial.refused)
    unfenced = make_plan(policy, NONE)
    assert (unfenced.level, unfenced.backend, unfenced.hidden) == ("none", "none", ())
    assert unfenced.gaps == ("namespaces: bubblewrap is not installed", "files: Landlock is not available")


def test_endpoints_without_nsenter_are_the_landlock_fence_and_recorded_so(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # not root: a namespace is entered with nsenter
    policy = SandboxPolicy(gateway=Endpoint("127.0.0.1", 11434))
    no_nsenter = MachineFence("full", "bubblewrap 0.11.0", (), "/usr/bin/bwrap", None, 7)
    plan = make_plan(policy, no_nsenter)
    assert (plan.level, plan.backend, plan.mechanism) == ("partial", "landlock", "landlock 7 + seccomp")
    assert any(gap.startswith("network: nsenter (util-linux) is not installed") for gap in plan.gaps)
    assert make_plan(SandboxPolicy(), no_nsenter).backend == "bubblewrap"  # no endpoint: no namespace to enter


def test_the_level_a_run_took_is_the_level_elsewhere_or_a_refusal(monkeypatch):
    assert make_plan(SandboxPolicy(level="partial"), FULL).backend == "landlock"
    with pytest.raises(SandboxError, match=r"^the run's fence is full, and this process reaches partial only"):
        make_plan(SandboxPolicy(level="full"), PARTIAL)
    with pytest.raises(SandboxError, match=r"^--sandbox on: this machine allows the partial fence only: processes:"):
        make_plan(SandboxPolicy(mode="on"), PARTIAL)
    monkeypatch.setenv(LEVEL_CAP_VARIABLE, "none")
    capped = make_plan(SandboxPolicy(), FULL)
    assert capped.level == "none" and capped.gaps == ("capped at none by IRONBENCH_FENCE_LEVEL",)
    assert make_plan(SandboxPolicy(mode="off"), FULL).gaps == ("files, processes and network: --sandbox off",)


def test_a_memory_cap_that_cannot_be_given_is_recorded(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(resource, "getrlimit", lambda _what: (1 << 30, 1 << 30))
    plan = make_plan(SandboxPolicy(memory_mb=8192), FULL)
    assert plan.memory_mb == 1024
    assert plan.gaps[-1] == "memory: 1024 MB of address space (this process's own hard limit), not 8192 MB"


def test_a_plan_reads_back_from_its_record():
    plan = make_plan(SandboxPolicy(hidden=("/srv/out",), allow_net=(Endpoint("api.example.com", 443),)), FULL)
    assert FencePlan.from_dict(plan.to_dict()) == plan
    assert plan.endpoints == ("api.example.com:443",)


@pytest.fixture
def tree(tmp_path):
    """A machine's folders in small: the answer key beside what a program needs."""
    for folder in ("home/me/agent/venv/lib", "home/me/agent/suite", "home/me/other", "srv/out/workdirs/run_001"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "home/me/agent/suite/check.py").write_text("secret")
    (tmp_path / "home/me/agent/tool.py").write_text("tool")
    (tmp_path / "srv/out/ironbench.db").write_text("store")
    return tmp_path


def _plan(tree, **fields) -> FencePlan:
    answer_key = (str(tree / "srv/out"), str(tree / "home/me/agent/suite"))
    plan = make_plan(SandboxPolicy(hidden=answer_key, memory_mb=1024, **fields), FULL)
    hidden = (*answer_key, str(tree / "home"))  # the tree's own home, for this test
    return FencePlan(**{**plan.to_dict(), "hidden": hidden, "refused": plan.refused})


def test_the_bubblewrap_options_hide_the_answer_key_and_read_back_only_what_is_needed(tree):
    plan = _plan(tree, allow_write=(str(tree / "home/me/other"),))
    workdir = str(tree / "srv/out/workdirs/run_001")
    agent = str(tree / "home/me/agent")
    found = options(plan, (agent,), workdir, plan.hidden)
    size = str(1024 << 20)
    home, out, suite, other = (str(tree / p) for p in ("home", "srv/out", "home/me/agent/suite", "home/me/other"))
    assert found == [
        "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--as-pid-1",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        # each hidden tree emptied (the suite lies in the home: gone with it), its own /tmp/home
        "--size", size, "--tmpfs", home, "--size", size, "--tmpfs", out, "--dir", "/tmp/home",
        # what the program needs from a hidden tree, with the answer key inside it hidden again
        "--ro-bind-try", agent, agent, "--size", size, "--tmpfs", suite,
        "--bind", workdir, workdir, "--bind-try", other, other,
        "--remount-ro", home, "--remount-ro", out, "--remount-ro", suite,
        "--chdir", workdir,
    ]  # fmt: skip


def test_the_landlock_rules_allow_around_the_answer_key_even_inside_what_is_read_back(tree):
    plan = _plan(tree)
    allowed = around(list(plan.hidden), str(tree))
    assert str(tree / "srv") not in allowed and str(tree / "home") not in allowed
    assert allowed == []  # both of the tree's folders hold something hidden, and nothing else is there
    (tree / "etc").mkdir()
    (tree / "srv/www").mkdir()
    allowed = around(list(plan.hidden), str(tree))
    assert allowed == [str(tree / "etc"), str(tree / "srv/www")]
    workdir, private = str(tree / "srv/out/workdirs/run_001"), "/tmp/ironbench-fenced-x"
    ruleset = rules(plan, allowed, (str(tree / "home/me/agent"),), workdir, private, 7)
    assert str(tree / "home/me/agent/venv") in ruleset.read and str(tree / "home/me/agent/tool.py") in ruleset.read
    assert not any("suite" in path for path in ruleset.read)
    assert ruleset.write == (workdir, private, "/dev/null") and ruleset.connect == ()
    assert rules(plan, allowed, (), workdir, private, 3).connect is None  # ABI 3 fences no TCP port


def test_around_never_follows_a_link_to_allow_what_it_leads_to(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "run").symlink_to(tmp_path / "run")
    (tmp_path / "var" / "tmp").mkdir()
    allowed = around([str(tmp_path / "run"), str(tmp_path / "var" / "tmp")], str(tmp_path))
    assert allowed == [str(tmp_path / "var" / "run")]  # the link itself: a rule on it allows nothing beyond
