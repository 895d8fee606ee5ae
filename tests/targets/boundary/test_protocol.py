"""The protocol, declared once: frames arrive whole however a channel splits them, every message
comes back as the shape it left, and the host answers every operation the protocol names."""

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.targets.boundary import protocol


@given(st.lists(st.binary(max_size=300), max_size=6), st.lists(st.integers(1, 50), min_size=1, max_size=20))
def test_frames_arrive_whole_however_the_channel_splits_them(payloads, cuts):
    stream = b"".join(protocol.frame(p) for p in payloads)
    frames, got, at = protocol.Frames(), [], 0
    for cut in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        frames.feed(stream[at : at + cut])
        at += cut
        while (payload := frames.next()) is not None:
            got.append(payload)
    frames.feed(stream[at:])
    while (payload := frames.next()) is not None:
        got.append(payload)
    assert got == payloads and not frames.buffer


def test_a_frame_over_its_limit_is_refused_before_it_is_read():
    frames = protocol.Frames(limit=10)
    frames.feed(protocol.HEADER.pack(11))
    with pytest.raises(protocol.FrameError, match="11 bytes"):
        frames.next()
    read, write = os.pipe()
    os.write(write, protocol.HEADER.pack(protocol.MAX_FRAME + 1))
    with pytest.raises(protocol.FrameError):
        protocol.read_frame(read)
    os.close(read)
    os.close(write)


SETUP = protocol.Setup("/tmp/x", "/usr/bin/python3", ("/site",), "plain")
MESSAGES = [
    protocol.Warm(SETUP),
    protocol.Ready(12),
    protocol.CheckOrder("python", {"name": "add.py"}, 2.5, SETUP, source="def check(c): pass", entry_point="add"),
    protocol.CheckOrder("pytest", {"name": "calc.py"}, 60.0, SETUP, files={"test_calc.py": "def test(): pass"}),
    protocol.HostStarted(34),
    protocol.Answer(
        (protocol.Fact("wrong", "AssertionError", "check"), protocol.Fact("tampered", "é\ud800", "host")),
        ("a note",),
        1,
        2,
        30,
        "out",
    ),
    protocol.Answer((protocol.Fact("timeout", "killed after 2 s", "zygote"),)),
    protocol.HostOrder("/tmp/x/brick", {"HOME": "/tmp/x/brick"}),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_message_comes_back_as_the_shape_it_left(message):
    assert protocol.decode_message(protocol.encode_message(message)) == message


@pytest.mark.parametrize("payload", [b"", b"[]", b'{"message": "launch"}', b'{"message": "ready"}', b"\xff"])
def test_a_message_of_no_known_shape_is_refused(payload):
    with pytest.raises(protocol.FrameError, match="no known shape"):
        protocol.decode_message(payload)


def test_the_host_answers_every_operation_and_no_other():
    host = (Path(protocol.__file__).parent / "host.py").read_text()
    answered = set(re.findall(r"op == ops\.([A-Z]+)\b", host)) | {
        name for pair in re.findall(r"op in \(ops\.([A-Z]+), ops\.([A-Z]+)\)", host) for name in pair
    }
    assert {getattr(protocol.Op, name) for name in answered} == protocol.OPS
    # the judge's side names operations only through Op
    for side in ("remote.py", "values.py", "judge.py", "imports.py"):
        text = (Path(protocol.__file__).parent / side).read_text()
        assert not re.search(r'request\(\s*"', text), side
