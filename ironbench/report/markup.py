"""Strict HTML building: every string is escaped unless it is Markup made here.

Text from suites, targets and models reaches the page only through `esc` (directly
or via `el`), so a `<script>` in an instruction or an answer is shown, never run.
"""

import html
import json
import re
from collections.abc import Iterable

from ironbench.run.preview import word_diff_ops


class Markup(str):
    """A string that is already safe HTML: built by this module, never from raw input."""

    __slots__ = ()


def esc(value: object) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def _children(items: Iterable) -> Iterable[str]:
    for item in items:
        if item is None or item is False:
            continue
        if isinstance(item, (list, tuple)):
            yield from _children(item)
        else:
            yield esc(item)


def join(items: Iterable) -> Markup:
    return Markup("".join(_children(items)))


_VOID = {"br", "hr", "input", "meta", "img", "col", "wbr"}
_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9:-]*$")


def el(tag: str, attrs: dict | None = None, *children) -> Markup:
    """`<tag attrs>children</tag>`; attribute values and string children are escaped.
    None or False attributes are left out; True gives a bare attribute."""
    parts = [f"<{tag}"]
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        if not _NAME.match(name):  # attribute names are ours, but never let one smuggle markup
            raise ValueError(f"bad attribute name {name!r}")
        parts.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    if tag in _VOID:
        return Markup("".join(parts) + ">")
    return Markup("".join(parts) + ">" + "".join(_children(children)) + f"</{tag}>")


def leaf(tag: str, attrs: dict) -> Markup:
    """An SVG element without children, self-closed: `<circle .../>` (foreign content allows it)."""
    return Markup(el(tag, attrs)[: -len(f"></{tag}>")] + "/>")


def json_script(data: object, element_id: str) -> Markup:
    """Data for scripts (and for people saving the page): inert, and unable to close its element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    for raw, safe in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, safe)
    return Markup(f'<script type="application/json" id="{esc(element_id)}">{text}</script>')


_SHOWN = str.maketrans({"\n": "⏎\n", "\t": "⇥"})


def _visible(text: str) -> str:
    """Whitespace a diff added or removed, made visible (a space alone would be invisible)."""
    if text.strip():
        return text
    return text.translate(_SHOWN).replace(" ", "·")


ELIDED = "…"


def _elide(text: str, context: int, before: bool, after: bool) -> str:
    """Unchanged text next to changes (`before`: one precedes it, `after`: one follows),
    cut to `context` words on each side that touches a change."""
    parts = re.split(r"(\s+)", text)  # words at even indexes (maybe "" at the ends), whitespace at odd ones
    words = [i for i in range(0, len(parts), 2) if parts[i]]
    if len(words) <= context * (before + after) + 1:
        return text
    head = "".join(parts[: words[context - 1] + 1]) if before else ""
    tail = "".join(parts[words[-context] :]) if after else ""
    return " ".join(part for part in (head, ELIDED, tail) if part)


def word_diff_html(base: str, variant: str, context: int | None = None) -> Markup:
    """The console's word diff as HTML: <del> removed words, <ins> added ones. With
    `context`, unchanged stretches keep only that many words next to each change."""
    ops = word_diff_ops(base, variant)
    out = []
    for index, (op, text) in enumerate(ops):
        if op == "equal":
            if context is not None and len(ops) > 1:
                text = _elide(text, context, before=index > 0, after=index < len(ops) - 1)
            out.append(esc(text))
        else:
            out.append(el("del" if op == "delete" else "ins", None, _visible(text)))
    return Markup("".join(out))
