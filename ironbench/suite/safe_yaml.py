"""Suite YAML without surprises: bounded size and depth, no aliases, no duplicate keys, sane values.

Everything here runs before a suite is validated, let alone run, so a hostile file
costs milliseconds and one line of error, never a traceback or a half-written run.
"""

import math
import re

import yaml

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32  # a real suite nests about 7 deep
MAX_STRING = 100_000  # characters in any one value; instructions have their own, smaller cap
INT64 = 2**63
# Control characters (tab and newline excepted), and bidirectional overrides, which
# make text display differently from what it is.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class YamlRefused(ValueError):
    """The file is not a YAML document ironbench accepts; the message says where and why."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (no billion laughs), duplicate keys (no silent
    last-wins) and nesting deeper than MAX_DEPTH (no RecursionError)."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlRefused(f"line {event.start_mark.line + 1}: aliases (*{event.anchor}) are not allowed")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise YamlRefused(f"line {mark.line + 1}: nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the constructor reports it
            if duplicate:
                raise YamlRefused(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
        return super().construct_mapping(node, deep)


def load(text: str) -> object:
    """Parse one YAML document under the limits above; YamlRefused or yaml.YAMLError otherwise."""
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _where(path: str) -> str:
    return path or "top level"


def check_values(data: object, path: str = "", depth: int = 0) -> None:
    """Every value within bounds: numbers fit 64 bits and are finite, strings are at most
    MAX_STRING characters without control characters, nesting at most MAX_DEPTH deep."""
    if depth > MAX_DEPTH:
        raise YamlRefused(f"{_where(path)}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(data, bool) or data is None:
        return
    if isinstance(data, int):
        if not -INT64 <= data < INT64:
            raise YamlRefused(f"{_where(path)}: number {str(data)[:20]}... is out of range (a 64-bit integer)")
    elif isinstance(data, float):
        if not math.isfinite(data):
            raise YamlRefused(f"{_where(path)}: {data} is not a finite number")
    elif isinstance(data, str):
        if len(data) > MAX_STRING:
            raise YamlRefused(f"{_where(path)}: {len(data):,} characters; at most {MAX_STRING:,}")
        unsafe = _UNSAFE.search(data)
        if unsafe:
            raise YamlRefused(f"{_where(path)}: contains control character U+{ord(unsafe.group(0)):04X}")
    elif isinstance(data, dict):
        for key, value in data.items():
            check_values(key, path, depth + 1)
            name = str(key)[:40]
            check_values(value, f"{path}.{name}" if path else name, depth + 1)
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(data):
            check_values(value, f"{path}[{index}]", depth + 1)
