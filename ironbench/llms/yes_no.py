"""Yes/no questions to a model: the grammar that constrains the answer, and how it is read."""

import re

# Where the backend takes a grammar (the embedded model does), the answer can only be one
# of these two words; elsewhere the first word of the answer is read.
YES_NO_GRAMMAR = 'root ::= "yes" | "no"'
# A verdict is a fact, not a sample: temperature 0 and a fixed seed make it reproducible,
# and the model-call cache makes asking again free.
YES_NO_OPTIONS = {"temperature": 0.0, "seed": 0, "max_tokens": 3, "grammar": YES_NO_GRAMMAR}


def yes_or_no(reply: str) -> bool | None:
    """True for an answer whose first word is yes, False for no, None for anything else."""
    word = re.match(r"\W*(\w+)", reply.lower())
    if word and word.group(1) in ("yes", "no"):
        return word.group(1) == "yes"
    return None
