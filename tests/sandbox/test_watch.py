"""What the fence's network sees of a program, in a network namespace the fence makes: a refused
connection and a name looked up are seen, a connection that was accepted is not; the DNS question
is read from any bytes without failing."""

import os
import socket
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.sandbox.network import inside, made_here
from ironbench.sandbox.watch import MAX_SEEN, Sightings, drain, nameservers, question

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="the harness makes network namespaces of its own as root only"
)


def query(name: str) -> bytes:
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + labels + b"\x00\x00\x01\x00\x01"


@needs_root
def test_a_refused_connection_and_a_look_up_are_seen_an_accepted_connection_is_not():
    net, watch = made_here()
    assert watch is not None

    def program() -> None:
        with socket.create_server(("127.0.0.1", 0)) as server:  # a server of its own: reached
            socket.create_connection(server.getsockname()).close()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", 8765), timeout=5)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.sendto(query("api.openai.com"), ("127.0.0.53", 53))
            udp.sendto(query("1.0.0.127.in-addr.arpa"), ("127.0.0.53", 53))  # a reverse look-up: no name

    try:
        inside(net, program)
    finally:
        os.close(net)
    seen = Sightings()
    drain(watch, seen)
    assert [(s.kind, s.what, s.by) for s in seen.items()] == [
        ("endpoint", "127.0.0.1:8765", "network"),
        ("lookup", "api.openai.com", "network"),
    ]


@needs_root
def test_the_machines_name_servers_are_on_the_namespaces_loopback():
    servers = nameservers()
    if not servers:
        pytest.skip("this machine's name servers are all on the loopback")
    net, watch = made_here()
    assert watch is not None

    def look_up() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.sendto(query("example.org"), (servers[0], 53))  # no route out: it reaches the loopback

    try:
        inside(net, look_up)
    finally:
        os.close(net)
    seen = Sightings()
    drain(watch, seen)
    assert [s.what for s in seen.items()] == ["example.org"]


def test_sightings_are_kept_once_each_and_bounded():
    seen = Sightings()
    for port in range(MAX_SEEN * 2):
        seen.add("endpoint", f"127.0.0.1:{port}", "network")
        seen.add("endpoint", f"127.0.0.1:{port}", "network")
    assert len(seen.items()) == MAX_SEEN


def test_a_question_is_read_from_a_query():
    assert question(query("API.OpenAI.com")) == "api.openai.com"
    assert question(query("x" * 64 + ".com")) is None  # a label too long: not read
    answer = bytearray(query("example.org"))
    answer[2] |= 0x80
    assert question(bytes(answer)) is None  # a response, not a query
    assert question(struct.pack("!6H", 1, 0x0100, 0, 0, 0, 0)) is None


@given(st.binary(max_size=600))
def test_any_bytes_are_a_question_or_none(data):
    found = question(data)
    assert found is None or (found and found == found.lower())
