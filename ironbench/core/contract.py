"""The single-string contract: an instruction names the task, never the harness around it."""

import re
import unicodedata

# Each pattern is one forbidden concept of the spec; word boundaries keep
# "logic" or "contest" legal while "logs" and "tests" are not.
_FORBIDDEN = re.compile(
    r"\b("
    r"tests?|testing|pytest|unittests?|coverage"
    r"|validat(?:e|es|ed|ion|ing)"
    r"|performance|performant|optimi[sz](?:e|es|ed|ation|ing)"
    r"|tool(?:s|ing)?"
    r"|harness(?:es|ing)?"
    r"|benchmark(?:s|ed|ing)?"
    r"|log(?:s|ged|ging)?"
    r"|debug(?:s|ged|ging)?"
    r")\b",
    re.IGNORECASE,
)

# Cyrillic and Greek letters drawn like Latin ones: "tеsts" with a Cyrillic е reads,
# to a person and to a model, as "tests".
_LOOK_ALIKES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеіјорсхуѕԁһԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧονρτυχ",
    "ABESIJKMHOPCTXYaeijopcxysdhqwABEZHIKMNOPTYXovptux",
)
# Characters that print as nothing (besides the format characters, category Cf).
_BLANKS = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"}


def skeleton(text: str) -> str:
    """What `text` reads as: compatibility forms folded, accents, invisible characters
    and look-alikes removed or mapped to the Latin letter they imitate."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Cf") and c not in _BLANKS)
    return kept.translate(_LOOK_ALIKES)


def forbidden_word(instruction: str) -> str | None:
    """Return the first forbidden word in the instruction (as it reads), or None when it is clean."""
    match = _FORBIDDEN.search(skeleton(instruction))
    return match.group(0) if match else None


def normalise_instruction(text: str) -> str:
    """The NFKC form of an instruction; ValueError if it holds a control or invisible
    character, which would make it say something other than what it shows."""
    text = unicodedata.normalize("NFKC", text)
    for index, char in enumerate(text):
        if char in "\n\t":
            continue
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp") or char in _BLANKS:
            kind = "control" if category == "Cc" else "invisible"
            raise ValueError(f"instruction contains {kind} character U+{ord(char):04X} at position {index}")
    return text
