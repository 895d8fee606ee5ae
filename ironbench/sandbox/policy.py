"""What a run allows its targets and checks: paths, endpoints, variables, memory; and the
levels a machine's fence reaches."""

import ipaddress
import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from ironbench.core.errors import SandboxError
from ironbench.core.kinds import FENCE_LEVELS  # noqa: F401  (the sandbox's face names it)

SandboxMode = Literal["auto", "on", "off"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
DEFAULT_MEMORY_MB = 8192  # address space (RLIMIT_AS): a model runtime reserves far more than it touches
PASS_ENV_VARIABLE = "IRONBENCH_PASS_ENV"  # names to pass, comma-separated (what --pass-env adds to)
# Passed to every fenced target: what a program needs to run at all (HOME and TMPDIR are its own).
BASE_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM")
# ironbench's own targets' settings (forge's model and seed, fixture's seed and pace): the harness's own
HARNESS_ENV = ("IRONBENCH_FORGE_MODEL", "IRONBENCH_FORGE_SEED", "IRONBENCH_FIXTURE_SEED", "IRONBENCH_FIXTURE_SLEEP_MS")
_HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """A host and TCP port a target may reach (`--allow-net HOST:PORT`)."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str, where: str = "--allow-net") -> "Endpoint":
        host, sep, port = text.strip().rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise SandboxError(f"{where} {text!r}: expected HOST:PORT, e.g. 127.0.0.1:11434 or api.openai.com:443")
        if host == "localhost":
            host = "127.0.0.1"
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            if not _HOSTNAME.fullmatch(host):
                raise SandboxError(f"{where} {text!r}: {host!r} is not a host name or an IP address") from None
        else:
            if address.version != 4:
                raise SandboxError(f"{where} {text!r}: IPv6 endpoints are not supported; name the host instead")
        return cls(host, int(port))

    @classmethod
    def of_url(cls, url: str) -> "Endpoint":
        """The endpoint an http URL names (`http://127.0.0.1:8080/...`)."""
        rest = url.split("://", 1)[-1].split("/", 1)[0]
        return cls.parse(rest if ":" in rest else f"{rest}:80", "url")

    @property
    def loopback(self) -> bool:
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def literal(self) -> bool:
        """Named by an IP address, not a host name."""
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The fence a run asks for: `mode` (auto: the highest level the machine allows; on: full
    or refuse; off: no fence), what its targets may read and write beyond their own working
    directory, the endpoints they may reach beyond the model gateway, the variables they get
    beyond the fence's own, and their memory. `hidden` and `gateway` are the run's own (the
    answer key's folders, the model gateway's address), filled in when the run starts; `level`
    is the level the run's fence took, carried to the processes that fence for it elsewhere (a
    check's host server): they take that level, or refuse (None: the highest the machine allows)."""

    mode: str | None = None  # None: not asked (the suite's, else auto)
    allow_read: tuple[str, ...] = ()
    allow_write: tuple[str, ...] = ()
    allow_net: tuple[Endpoint, ...] = ()
    pass_env: tuple[str, ...] = ()
    memory_mb: int = DEFAULT_MEMORY_MB
    hidden: tuple[str, ...] = field(default=(), compare=True)
    gateway: Endpoint | None = None
    level: str | None = None

    @property
    def fenced(self) -> bool:
        return self.mode != "off"

    def with_suite(
        self,
        mode: str | None,
        allow_read: list[str],
        allow_write: list[str],
        allow_net: list[str],
        pass_env: list[str],
        memory_mb: int | None,
    ) -> "SandboxPolicy":
        """This policy (the command line's) with what a suite asks beside it: the command line's
        mode and memory win, the lists add up."""
        return replace(
            self,
            mode=self.mode or mode,
            allow_read=tuple(dict.fromkeys([*allow_read, *self.allow_read])),
            allow_write=tuple(dict.fromkeys([*allow_write, *self.allow_write])),
            allow_net=tuple(dict.fromkeys([*(Endpoint.parse(e, "allow_net") for e in allow_net), *self.allow_net])),
            pass_env=tuple(dict.fromkeys([*pass_env, *self.pass_env])),
            memory_mb=self.memory_mb if self.memory_mb != DEFAULT_MEMORY_MB or memory_mb is None else memory_mb,
        )

    def with_run(self, hidden: tuple[str, ...], gateway: Endpoint | None) -> "SandboxPolicy":
        """This policy with the run's answer key hidden and its gateway reachable."""
        kept = tuple(sorted({os.path.realpath(path) for path in (*self.hidden, *hidden)}))
        return replace(self, hidden=kept, gateway=gateway)

    def at_level(self, level: str) -> "SandboxPolicy":
        """This policy as a fence that took `level` carries it to another process."""
        return replace(self, level=level)

    def endpoints(self) -> tuple[Endpoint, ...]:
        """Every endpoint a target may reach: the gateway, then what the run allows."""
        found = [self.gateway] if self.gateway is not None else []
        return tuple(dict.fromkeys([*found, *self.allow_net]))

    def environment(self, environ: dict[str, str]) -> dict[str, str]:
        """What a fenced target gets of `environ`: the base set, then each name passed."""
        names = [*BASE_ENV, *HARNESS_ENV, *self.pass_env, *_names(environ.get(PASS_ENV_VARIABLE, ""))]
        return {name: environ[name] for name in names if name in environ}

    @classmethod
    def from_dict(cls, data: dict) -> "SandboxPolicy":
        """A policy as a run recorded it (`to_dict`)."""
        return cls(
            mode=data.get("mode"),
            allow_read=tuple(data.get("allow_read", ())),
            allow_write=tuple(data.get("allow_write", ())),
            allow_net=tuple(Endpoint.parse(text) for text in data.get("allow_net", ())),
            pass_env=tuple(data.get("pass_env", ())),
            memory_mb=int(data.get("memory_mb") or DEFAULT_MEMORY_MB),
        )

    def to_wire(self) -> str:
        """The whole policy as JSON (the run's own parts too), for a process that fences for it."""
        gateway = None if self.gateway is None else str(self.gateway)
        return json.dumps(
            {**self.to_dict(), "mode": self.mode, "hidden": list(self.hidden), "gateway": gateway, "level": self.level}
        )

    @classmethod
    def from_wire(cls, text: str) -> "SandboxPolicy":
        """`to_wire`'s policy."""
        data = json.loads(text)
        gateway = None if data.get("gateway") is None else Endpoint.parse(data["gateway"])
        return replace(
            cls.from_dict(data), hidden=tuple(data.get("hidden", ())), gateway=gateway, level=data.get("level")
        )

    def to_dict(self) -> dict:
        return {
            "mode": self.mode or "auto",  # as it ran: not asked is auto
            "allow_read": list(self.allow_read),
            "allow_write": list(self.allow_write),
            "allow_net": [str(e) for e in self.allow_net],
            "pass_env": list(self.pass_env),
            "memory_mb": self.memory_mb,
        }


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def policy_from_options(
    mode: str | None,
    allow_read: list[str] | None,
    allow_write: list[str] | None,
    allow_net: list[str] | None,
    pass_env: list[str] | None,
    memory_mb: int | None,
) -> SandboxPolicy:
    """A policy from the command line's words (each path made absolute; each bad value one error)."""
    if mode is not None and mode not in SANDBOX_MODES:
        raise SandboxError(f"--sandbox {mode!r}: one of {', '.join(SANDBOX_MODES)}")
    for name in pass_env or ():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise SandboxError(f"--pass-env {name!r}: not an environment variable's name")
    paths = {}
    for option, given in (("--allow-read", allow_read), ("--allow-write", allow_write)):
        found = []
        for path in given or ():
            absolute = os.path.realpath(os.path.expanduser(path))
            if not os.path.exists(absolute):
                raise SandboxError(f"{option} {path}: no such file or folder")
            found.append(absolute)
        paths[option] = tuple(found)
    return SandboxPolicy(
        mode=mode,
        allow_read=paths["--allow-read"],
        allow_write=paths["--allow-write"],
        allow_net=tuple(Endpoint.parse(text) for text in allow_net or ()),
        pass_env=tuple(pass_env or ()),
        memory_mb=memory_mb or DEFAULT_MEMORY_MB,
    )
