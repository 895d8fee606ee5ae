"""Redaction: secret values found in text, in nested values and in chunked streams."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.redact import MIN_SECRET_LENGTH, Redactor, secret_values


def test_secret_looking_names_and_explicit_names_are_chosen_short_values_are_not():
    environ = {"OPENAI_API_KEY": "sk-123456789", "GITHUB_TOKEN": "ghp_abcdefgh", "DB_PASSWORD": "hunter2hunter",
               "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "GCP_CREDENTIALS": "/path/creds.json",
               "KEYBOARD": "us", "HOME": "/home/me", "MY_VAR": "x1", "PATH": "/usr/bin"}
    found = secret_values(environ, ["MY_VAR"])
    assert set(found.values()) == {"OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY",
                                   "GCP_CREDENTIALS", "MY_VAR"}
    assert len("us") < MIN_SECRET_LENGTH


def test_nested_values_are_redacted_everywhere():
    redactor = Redactor({"s3cr3t-value": "API_KEY"})
    value = {"a": ["x s3cr3t-value y", {"s3cr3t-value": 1}], "n": 3, "b": None}
    assert redactor.value(value) == {"a": ["x [REDACTED:API_KEY] y", {"[REDACTED:API_KEY]": 1}], "n": 3, "b": None}


def test_a_secret_containing_another_is_replaced_whole():
    redactor = Redactor({"abcdefgh": "SHORT_KEY", "abcdefghijkl": "LONG_KEY"})
    assert redactor.text("abcdefghijkl abcdefgh") == "[REDACTED:LONG_KEY] [REDACTED:SHORT_KEY]"


SECRETS = {"tok-AAAA1111": "A_TOKEN", "tok-AAAA1111-extended": "B_TOKEN", "päss-wörd-ü": "C_PASSWORD"}


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.one_of(st.sampled_from(sorted(SECRETS)), st.text(alphabet="atok-A1ü ", max_size=6)),
                       max_size=20),
       cuts=st.lists(st.integers(0, 300), max_size=15))
def test_streamed_redaction_equals_redacting_the_whole_text_however_it_is_chunked(pieces, cuts):
    redactor = Redactor(SECRETS)
    data = "".join(pieces).encode("utf-8")
    stream = redactor.stream()
    out, position = [], 0
    for cut in sorted(cuts) + [len(data)]:
        cut = max(position, min(cut, len(data)))
        out.append(stream.feed(data[position:cut]))
        position = cut
    out.append(stream.finish())
    assert b"".join(out) == redactor.text(data.decode("utf-8")).encode("utf-8")
