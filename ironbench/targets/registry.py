"""Named targets. Built-ins register exactly as a plugin would: via register_target."""

import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ironbench.core.errors import TargetError

PLACEHOLDER = "{instruction}"


@dataclass(frozen=True)
class TargetSpec:
    name: str
    argv_template: tuple[str, ...]

    def argv(self, instruction: str) -> list[str]:
        return [part.replace(PLACEHOLDER, instruction) for part in self.argv_template]


_REGISTRY: dict[str, Callable[[], list[str]]] = {}


def register_target(name: str, argv_factory: Callable[[], list[str]]) -> None:
    """Make `--target NAME` (or `target: NAME` in a suite) mean the argv the factory returns."""
    _REGISTRY[name] = argv_factory


def _load_plugins() -> None:
    from ironbench.core.plugins import load_plugins

    load_plugins("ironbench.targets")


def registered_targets() -> list[str]:
    _load_plugins()
    return sorted(_REGISTRY)


DEFAULT_TARGET = "ironclad"

register_target("ironclad", lambda: [sys.executable, "-m", "ironclad_ai_guardrails.ironclad", PLACEHOLDER])
register_target("fixture", lambda: [sys.executable, "-m", "ironbench.targets.fixture_ironclad", PLACEHOLDER])
register_target("forge", lambda: [sys.executable, "-m", "ironbench.targets.forge", PLACEHOLDER])


def resolve_target(spec: str | list[str] | None) -> TargetSpec:
    """A registered name, a command line with {instruction}, or an argv list."""
    if spec is None:
        spec = DEFAULT_TARGET
    if isinstance(spec, str):
        _load_plugins()
        if spec in _REGISTRY:
            return TargetSpec(spec, tuple(_REGISTRY[spec]()))
        try:
            argv = shlex.split(spec)
        except ValueError as exc:
            raise TargetError(f"target {spec!r}: cannot split command line: {exc}") from None
        name = "command"
    else:
        argv = list(spec)
        name = "command"
    if not argv:
        raise TargetError("target: empty command")
    if not any(PLACEHOLDER in part for part in argv):
        known = ", ".join(registered_targets())
        raise TargetError(
            f"target {spec!r}: neither a registered target ({known}) nor a command containing {PLACEHOLDER}"
        )
    return TargetSpec(name, tuple(argv))
