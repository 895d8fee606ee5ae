"""What the fence denied a program, each with the flag that allows it: read from what the fence saw
(watch.py) and, when the program failed, from what it printed, matched only against what the
plan withheld: a variable of the harness's environment it was not given, a path the plan hides
that the machine has, an endpoint the plan does not allow. A denial `explains` the failure when
the program's output shows it failed for it. Pure, but for a look at the harness's own machine:
whether a path exists (never through a link) and whether a local port has a listener.

What a program prints is its own claim: a denial read from it names what the plan withheld and
the machine has, never that the program needed it. So the flag is a suggestion, and none is
given where a target's word could steer the user into handing it something: the run's own
answer key, a credential store or a shell's history in the home, a path outside the home (the
machine's temporary and runtime trees hold other programs' sockets and other runs), a folder
holding an ironbench store, a unix socket or a folder holding one (connecting to a socket is
not writing, so a read-only allowance at `full` would let it connect).
"""

import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ironbench.sandbox.plan import FencePlan, under
from ironbench.sandbox.policy import BASE_ENV, HARNESS_ENV, PASS_ENV_VARIABLE, Endpoint, SandboxPolicy
from ironbench.sandbox.watch import Seen

MAX_DENIALS = 16  # an invocation's denials kept
MAX_CANDIDATES = 64  # paths and endpoints of an output looked at
# What of a failed program's output is read for what it lacked: its last lines, each cut (a
# program's output is the target's, and its length is its choice: the reading stays bounded)
MAX_LINES, MAX_LINE, MAX_TAIL = 400, 1000, 64 * 1024
# The program's home inside the fence (full: /tmp/home; partial: a private folder of its own):
# a path printed beneath it is the user's home's, as the flag names it.
_FENCED_HOME = re.compile(r"^(?:/tmp/home|/\S*?/ironbench-fenced-[A-Za-z0-9_]+)(?=/|$)")
_NAME_CHARS = r"A-Za-z0-9_"
# A session's own variables: a program that lacks one of these is never short of a credential or
# a setting, and their names are words a failing test may print.
_SESSION = frozenset(
    [
        "USER",
        "LOGNAME",
        "SHELL",
        "PWD",
        "OLDPWD",
        "HOSTNAME",
        "MAIL",
        "SHLVL",
        "DISPLAY",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "COLUMNS",
        "LINES",
    ]
)
# A line saying that a variable is missing, a file cannot be had, a connection or look-up failed.
_UNSET = re.compile(
    r"not set|\bunset\b|missing|not found|not defined|undefined|required|must be (?:set|provided|given)|"
    r"please (?:set|export|provide)|KeyError|environment variable|env var|\bempty\b|not configured|"
    r"not provided|no api key|not available",
    re.IGNORECASE,
)
_NO_FILE = re.compile(
    r"No such file or directory|Permission denied|Read-only file system|Operation not permitted|"
    r"\bE(?:NOENT|ACCES|ROFS|PERM)\b|FileNotFoundError|PermissionError|cannot (?:open|access|read|stat|find)|"
    r"can't (?:open|read|find)|could not (?:open|read|find)|not found|does not exist|doesn't exist",
    re.IGNORECASE,
)
_READ_ONLY = re.compile(r"Read-only file system|\bEROFS\b", re.IGNORECASE)
_REFUSED = re.compile(r"Permission denied|\bEACCES\b", re.IGNORECASE)
_NO_LOOKUP = re.compile(
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname|getaddrinfo|"
    r"Could not resolve|Failed to resolve|NameResolutionError|\bEAI_AGAIN\b|\bENOTFOUND\b|"
    r"No address associated|name resolution",
    re.IGNORECASE,
)
_NO_CONNECTION = re.compile(
    r"Connection refused|ECONNREFUSED|Network is unreachable|ENETUNREACH|No route to host|"
    r"Failed to establish a new connection|Max retries exceeded|ConnectError|ConnectionError|"
    r"Connection error|could not connect|couldn't connect|cannot connect|failed to connect|connect ECONN|"
    r"APIConnectionError",
    re.IGNORECASE,
)
_PATH = re.compile(r"(?<![^\s'\"`(\[=<:])(~?/[^\s'\"`<>|;,()\[\]{}*?]+)")
_HOST_PORT = re.compile(
    r"(?<![\w.-])(?:(?P<scheme>https?|wss?)://)?(?P<host>localhost|\d{1,3}(?:\.\d{1,3}){3}|"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)"
    r"(?::(?P<port>\d{1,5}))?(?![\w-])"
)
_HOST_IS_PORT_IS = re.compile(r"host=['\"](?P<host>[^'\"]+)['\"],\s*port=(?P<port>\d{1,5})")
_SCHEME_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
# The credential stores of a home: a program's word that it needs one is no reason to suggest it.
CREDENTIAL_STORES = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc", ".git-credentials",
    ".pgpass", ".password-store", ".local/share/keyrings", ".mozilla", ".config/google-chrome",
    ".config/chromium", ".config/gh", ".pypirc", ".npmrc", ".claude", ".claude.json", ".codex", ".gemini",
    ".config/openai", ".config/anthropic", ".config/claude", ".config/github-copilot", ".config/op", ".vault-token",
    ".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".node_repl_history",
    ".local/share/fish", ".config/fish/fish_history", ".lesshst", ".viminfo", ".ironbench",
    ".cache/huggingface", ".huggingface", ".kaggle", ".cargo/credentials", ".cargo/credentials.toml",
    ".config/rclone", ".terraform.d", ".s3cfg", ".boto", ".m2/settings.xml", ".databrickscfg",
    ".config/hub", ".config/op", ".config/gh-copilot", ".netlify", ".vercel", ".fly", ".wrangler",
    ".config/io.datasette.llm", ".config/git", ".git-credentials", ".ollama", ".config/containers", ".pulumi",
    ".env",
)  # fmt: skip
STORE_FILE = "ironbench.db"  # a folder holding one holds runs: never suggested
SYSTEM_TREES = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/sys", "/proc", "/dev",
    "/var/lib", "/var/cache", "/var/log", "/snap", "/nix",
)  # fmt: skip
_CREDENTIAL_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|"
    r"ACCESS_KEY(?:_ID)?|PRIVATE_KEY|AUTH)$"
)


@dataclass(frozen=True, slots=True)
class Denial:
    """One thing the fence withheld from a program: `kind` variable, path, endpoint or missing
    (an allowed path the machine did not have when it started); `what` its name, its path (the
    user's home as ~) or HOST:PORT; `flag` the option that allows it (None: no flag is
    suggested); `seen` how it is known (output, network, supervisor, fence); `explains` the
    program's output shows that it failed for it."""

    kind: str
    what: str
    flag: str | None
    seen: str
    explains: bool = False
    note: str = field(default="", compare=False)  # why there is no flag

    def line(self) -> str:
        """`OPENAI_API_KEY was not passed (--pass-env OPENAI_API_KEY)`."""
        said = {
            "variable": f"{self.what} was not passed",
            "path": f"{self.what} is hidden",
            "endpoint": f"{self.what} is not allowed",
            "missing": f"{self.what} is allowed but was missing when it started",
        }.get(self.kind, f"{self.what} was denied")
        if self.flag and self.flag.startswith("--allow-write"):
            said = f"{self.what} is read-only"
        return f"{said} ({self.flag or self.note or 'no flag allows it'})"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "what": self.what,
            "flag": self.flag,
            "seen": self.seen,
            "explains": self.explains,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "Denial":
        return cls(
            str(data.get("kind", "")),
            str(data.get("what", "")),
            None if data.get("flag") is None else str(data["flag"]),
            str(data.get("seen", "")),
            bool(data.get("explains", False)),
            str(data.get("note", "")),
        )


@dataclass(frozen=True, slots=True)
class Program:
    """What `explain` reads of one fenced program: what it printed (as recorded: redacted), its
    instruction, whether it failed, its working folder, the names of the variables it got, and
    what the fence saw."""

    output: str
    instruction: str
    failed: bool
    workdir: str
    given: frozenset[str]
    seen: tuple[Seen, ...] = ()


def explain(
    plan: FencePlan,
    program: Program,
    environ: Iterable[str],
    home: str | None = None,
    listening: "frozenset[int] | None" = None,
) -> tuple[Denial, ...]:
    """What the fence denied `program` (see the module's docstring), the first MAX_DENIALS, those
    that explain its failure first. `environ`: the names of the harness's variables; `home`: the
    user's home; `listening`: the TCP ports this machine listens on at its loopback (None: read
    from /proc/net)."""
    if not plan.fenced:
        return ()
    home = home or os.path.expanduser("~")
    found: dict[tuple[str, str], Denial] = {}

    def add(denial: Denial) -> None:
        key = (denial.kind, denial.what)
        if key not in found or denial.explains and not found[key].explains:
            found[key] = denial

    lines = _failing_lines(program.output) if program.failed else {}
    for denial in _variables(lines.get("unset", []), program, environ):
        add(denial)
    for denial in _paths(plan, lines.get("file", []), program.workdir, home):
        add(denial)
    ports: list[frozenset[int]] = [] if listening is None else [listening]

    def listened() -> frozenset[int]:
        if not ports:
            ports.append(listening_ports())
        return ports[0]

    for denial in _endpoints(plan, program, lines, home, listened):
        add(denial)
    ordered = sorted(found.values(), key=lambda d: not d.explains)
    return tuple(ordered[:MAX_DENIALS])


def caused(denials: Iterable[Denial]) -> bool:
    """Whether these denials explain the program's failure (the fence is its cause)."""
    return any(d.explains and d.kind != "missing" for d in denials)


def _failing_lines(output: str) -> dict[str, list[str]]:
    """The lines of `output` that say a variable is missing, a file cannot be had, a look-up or
    a connection failed (each kind's)."""
    found: dict[str, list[str]] = {"unset": [], "file": [], "lookup": [], "connection": []}
    for line in output[-MAX_TAIL:].splitlines()[-MAX_LINES:]:
        line = line[:MAX_LINE]
        for kind, pattern in (
            ("unset", _UNSET), ("file", _NO_FILE), ("lookup", _NO_LOOKUP), ("connection", _NO_CONNECTION)
        ):  # fmt: skip
            if pattern.search(line):
                found[kind].append(line)
    return found


def _variables(lines: list[str], program: Program, environ: Iterable[str]) -> list[Denial]:
    """Each variable of the harness's, not given and not named in the instruction (where naming
    it says nothing), that a failing line names as missing."""
    if not lines:
        return []
    withheld = sorted(
        (
            name
            for name in environ
            if len(name) >= 3 and name not in program.given and name not in _SESSION
            and not name.startswith("IRONBENCH_") and name not in program.instruction
        ),
        key=len,
        reverse=True,
    )  # fmt: skip
    if not withheld:
        return []
    names = re.compile(rf"(?<![{_NAME_CHARS}])(?:{'|'.join(map(re.escape, withheld))})(?![{_NAME_CHARS}])")
    found: dict[str, Denial] = {}
    for line in lines:
        for match in names.finditer(line):
            name = match.group(0)
            found.setdefault(name, Denial("variable", name, f"--pass-env {name}", "output", explains=True))
    return list(found.values())


def _paths(plan: FencePlan, lines: list[str], workdir: str, home: str) -> list[Denial]:
    """Each path a failing line names that the plan hides (or, read-only, keeps from writing)
    and the machine has."""
    visible = (workdir, os.path.realpath(workdir), *plan.read_back, *plan.writable)
    found: list[Denial] = []
    looked = 0
    for line in lines:
        for match in _PATH.finditer(line):
            looked += 1
            if looked > MAX_CANDIDATES:
                return found
            path = _as_users(match.group(1).rstrip(".:,;'\""), home)
            if path is None or any(under(path, tree) for tree in visible) or any(d.what == path for d in found):
                continue
            denial = _path_denial(plan, path, bool(_READ_ONLY.search(line)), home)
            if denial is not None:
                found.append(denial)
    return found


def _path_denial(plan: FencePlan, path: str, read_only: bool, home: str) -> Denial | None:
    shown, exists = _tilde(path, home), _exists(path)
    if any(under(path, key) for key in plan.answer_key):
        return (
            Denial("path", shown, None, "output", True, "the run's own answer key: never allowed") if exists else None
        )
    hidden = any(under(path, tree) for tree in plan.hidden)
    if hidden and exists:
        option, target = "--allow-read", _folder_or_file(path, plan, home)
    elif read_only and not hidden and plan.level == "full" and not _system(path):
        target = path if _exists(path) else os.path.dirname(path)
        if not _exists(target) or not os.access(target, os.W_OK, follow_symlinks=False):
            return None  # read-only here too: not the fence's doing
        option = "--allow-write"
    else:
        return None
    unsuggested = _unsuggested(path, target, home)
    if unsuggested:
        return Denial("path", shown, None, "output", True, f"{unsuggested}: ironbench suggests no flag for it")
    return Denial("path", shown, f"{option} {_tilde(target, home)}", "output", True)


def _unsuggested(path: str, target: str, home: str) -> str:
    """Why no flag is suggested for a path a program's output named ("": one is), allowing `target`."""
    if _credential_store(path, home):
        return "a credential store or a shell's history"
    if target == home or any(under(os.path.join(home, store), target) for store in CREDENTIAL_STORES):
        return "a folder holding a credential store (a read allowance over it would give them all)"
    if any(under(path, tree) or under(tree, path) for tree in _harness_code()):
        return "ironbench's own interpreter and code"
    if not under(path, home) or home in ("", "/"):
        return "outside your home"
    if _holds_socket(target):
        return "a unix socket, or a folder holding one"
    if _near_store(target, home):
        return "a folder holding an ironbench store"
    return ""


def _harness_code() -> tuple[str, ...]:
    """Where the harness's own interpreter and imports live (a target that may write there
    writes what ironbench, its judge and its gateway run unfenced)."""
    trees = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    trees.update(entry for entry in sys.path if entry and os.path.isabs(entry) and entry != os.getcwd())
    return tuple(os.path.realpath(tree) for tree in trees)


def _holds_socket(path: str) -> bool:
    """Whether `path` is a unix socket or a folder whose own entries include one (never through a link)."""
    try:
        info = os.lstat(path)
        if stat.S_ISSOCK(info.st_mode):
            return True
        if not stat.S_ISDIR(info.st_mode):
            return False
        with os.scandir(path) as entries:
            for index, entry in enumerate(entries):
                if index >= 4096:
                    return True  # too many to look at: not known, so no flag
                if stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                    return True
    except OSError:
        return False
    return False


def _near_store(path: str, home: str) -> bool:
    """Whether `path`, a folder on its way up to the home, or its own entries hold an ironbench store."""
    folder = path if _is_folder(path) else os.path.dirname(path)
    while under(folder, home) and folder != home:
        if _exists(os.path.join(folder, STORE_FILE)):
            return True
        folder = os.path.dirname(folder)
    return False


def _endpoints(
    plan: FencePlan, program: Program, lines: dict[str, list[str]], home: str, ports: Callable[[], frozenset[int]]
) -> list[Denial]:
    """Each endpoint the fence refused (seen) or a failing line names, not allowed; it explains
    the failure when the output says a connection or a look-up failed (partial's supervisor
    refuses a connect as a permission) and, on this machine's loopback, something listens there
    (else allowing it would change nothing)."""
    allowed = {str(Endpoint.parse(e)) for e in plan.endpoints}
    failing = [*lines.get("connection", []), *lines.get("lookup", [])]
    said = bool(failing)
    refused = said or any(_REFUSED.search(line) for line in lines.get("file", []))
    found: list[Denial] = []
    for seen in program.seen:
        if seen.kind == "endpoint":
            found.append(_endpoint(seen.what, seen.by, refused if seen.by == "supervisor" else said, allowed, ports))
        elif seen.kind == "lookup":
            found.append(
                _endpoint(f"{seen.what}:{_port_of(seen.what, program.output) or 443}", seen.by, said, allowed, ports)
            )
        elif seen.kind == "path":
            found.append(
                Denial("path", _tilde(seen.what, home), None, seen.by, False, "a unix socket outside its folder")
            )
        elif seen.kind == "missing":
            found.append(Denial("missing", _tilde(seen.what, home), None, seen.by, False, "the machine has it no more"))
    looked = 0
    for line in failing:
        for host, port in _named_endpoints(line):
            looked += 1
            if looked > MAX_CANDIDATES:
                break
            if port is not None:
                found.append(_endpoint(f"{host}:{port}", "output", True, allowed, ports))
    kept: dict[str, Denial] = {}
    for denial in found:
        if denial.kind == "endpoint" and denial.what in allowed:
            continue
        if denial.what not in kept or denial.explains and not kept[denial.what].explains:
            kept[denial.what] = denial
    return [d for d in kept.values() if d.kind != "endpoint" or d.flag is not None]


def _endpoint(text: str, seen: str, said: bool, allowed: set[str], ports: Callable[[], frozenset[int]]) -> Denial:
    try:
        endpoint = Endpoint.parse(text)
    except Exception:  # noqa: BLE001 (what the program printed is no endpoint: nothing suggested)
        return Denial("endpoint", text, None, seen)
    if str(endpoint) in allowed:
        return Denial("endpoint", str(endpoint), None, seen)
    explains = said and (not endpoint.loopback or endpoint.port in ports())
    return Denial("endpoint", str(endpoint), f"--allow-net {endpoint}", seen, explains)


def _named_endpoints(line: str) -> list[tuple[str, int | None]]:
    found: list[tuple[str, int | None]] = []
    for match in _HOST_IS_PORT_IS.finditer(line):
        found.append((match.group("host"), int(match.group("port"))))
    for match in _HOST_PORT.finditer(line):
        port = match.group("port")
        scheme = match.group("scheme")
        if port is None and scheme is None:
            continue  # a bare word with dots (a module, a file) names no endpoint
        number = int(port) if port else _SCHEME_PORTS[scheme.lower()]
        found.append((match.group("host"), number if 0 < number < 65536 else None))
    return found


def _port_of(host: str, output: str) -> int | None:
    """The port `output` names beside a host name the fence saw looked up (HOST:PORT, or a URL's scheme)."""
    for found, port in _named_endpoints(output[-200_000:]):
        if found.lower() == host:
            return port
    return None


def listening_ports(tables: tuple[str, ...] = ("/proc/net/tcp", "/proc/net/tcp6")) -> frozenset[int]:
    """The TCP ports this machine listens on for its loopback (its own /proc: no connection made)."""
    ports: set[int] = set()
    loopback_or_any = {"00000000", "0100007F", "00000000000000000000000000000000", "00000000000000000000000001000000"}
    for table in tables:
        try:
            with open(table, encoding="ascii", errors="replace") as handle:
                rows = handle.read(4 << 20).splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) > 3 and parts[3] == "0A":  # LISTEN
                address, _, port = parts[1].partition(":")
                if address in loopback_or_any or address.endswith("7F"):
                    ports.add(int(port, 16))
    return frozenset(ports)


def _as_users(printed: str, home: str) -> str | None:
    """A path as the program printed it, as the user's machine has it (its fenced home is the
    user's home); None: not a plain absolute path."""
    if printed.startswith("~"):
        if not printed.startswith(("~/",)) and printed != "~":
            return None
        printed = home + printed[1:]
    printed = _FENCED_HOME.sub(home.rstrip("/") or "/", printed, count=1)
    if "\0" in printed or not printed.startswith("/"):
        return None
    return os.path.normpath(printed)


def _tilde(path: str, home: str) -> str:
    return "~" + path[len(home.rstrip("/")) :] if under(path, home) and home not in ("", "/") else path


def _folder_or_file(path: str, plan: FencePlan, home: str) -> str:
    """What to allow for `path`: its folder, unless that is a hidden tree itself or the home,
    or holds a credential store."""
    folder = os.path.dirname(path)
    roots = {*plan.hidden, home, "/"}
    holds_store = any(under(os.path.join(home, store), folder) for store in CREDENTIAL_STORES)
    return path if folder in roots or holds_store or not _is_folder(folder) else folder


def _system(path: str) -> bool:
    """The machine's own trees, read-only to every target: a write there is never suggested."""
    return any(under(path, tree) for tree in SYSTEM_TREES)


def _credential_store(path: str, home: str) -> bool:
    return any(under(path, os.path.join(home, store)) for store in CREDENTIAL_STORES)


def _exists(path: str) -> bool:
    """Whether the harness's machine has `path`, looked at one component at a time, never
    through a symbolic link (a link: not known, so no)."""
    current = "/"
    for part in Path(path).parts[1:]:
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except (OSError, ValueError):
            return False
        if stat.S_ISLNK(info.st_mode):
            return False
    return True


def _is_folder(path: str) -> bool:
    if not _exists(path):
        return False
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def withheld_credentials(policy: SandboxPolicy, environ: Mapping[str, str]) -> list[str]:
    """The names of the harness's variables that look like credentials (`*_API_KEY`, `*_TOKEN`,
    `*_SECRET`, `*_PASSWORD`...) and a fenced target is not given (never ironbench's own)."""
    if not policy.fenced:
        return []
    passed = set(policy.environment(dict(environ))) | {*BASE_ENV, *HARNESS_ENV}
    return sorted(
        name
        for name in environ
        if name not in passed and not name.startswith("IRONBENCH_") and _CREDENTIAL_NAME.search(name.upper())
    )


def credentials_line(names: list[str]) -> str | None:
    """The line said before a run's first invocation: the names, and what passes them (None: none)."""
    if not names:
        return None
    flags = " ".join(f"--pass-env {name}" for name in names)
    return (
        f"not passed to the target (the fence gives it only what it is told): {', '.join(names)}; "
        f"to pass {'it' if len(names) == 1 else 'them'}: {flags} (or {PASS_ENV_VARIABLE}={','.join(names)})"
    )
