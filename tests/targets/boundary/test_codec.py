"""The boundary's codec: every plain value round-trips exactly, limits hold, and decoding any
bytes at all runs no code but the codec's own and the plain types' constructors."""

import decimal
import fractions
import gc
import math
import pathlib
import struct
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.targets.boundary import codec

floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([-0.0, 0.0, math.inf, -math.inf, math.nan])
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**600), max_value=2**600)
    | floats
    | st.complex_numbers(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.binary()
    | st.builds(bytearray, st.binary())
    | st.just(Ellipsis)
    | st.builds(range, st.integers(-5, 5), st.integers(-5, 50), st.integers(1, 3))
    | st.decimals(allow_nan=False)
    | st.fractions()
    | st.builds(pathlib.PosixPath, st.text(st.characters(exclude_characters="\0"), max_size=20))
)
hashables = st.recursive(
    st.none() | st.booleans() | st.integers() | floats | st.text() | st.binary(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=8,
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(hashables, inner, max_size=4)
        | st.sets(hashables, max_size=4)
        | st.frozensets(hashables, max_size=4)
    ),
    max_leaves=30,
)


def same(a: object, b: object) -> bool:
    """Equal, of exactly the same types all the way down, floats bit for bit (nan and -0.0)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) is complex:
        return same(a.real, b.real) and same(a.imag, b.imag)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return same(list(a.items()), list(b.items()))
    if type(a) in (set, frozenset):
        return len(a) == len(b) and all(any(same(x, y) for y in b) for x in a)
    if type(a) is decimal.Decimal:
        return str(a) == str(b)
    return a == b


@given(values)
def test_every_plain_value_round_trips_exactly(value):
    assert same(codec.decode(codec.encode(value)), value)


def test_the_values_json_loses_keep_their_type_and_bits():
    odd = [
        -0.0,
        math.nan,
        math.inf,
        complex(-0.0, math.nan),
        10**400,
        -(10**400),
        "\ud800 lone surrogate",
        b"\x00\xff",
        bytearray(b"ab"),
        (1,),
        frozenset({1, (2, 3)}),
        {(1, 2): {"x": [None]}},
        {1, 2.5, "a"},
        range(0, 10, 3),
        slice(1, None, -1),
        decimal.Decimal("-1.50"),
        fractions.Fraction(-3, 7),
        pathlib.PurePosixPath("a/b"),
        int,
        ValueError,
    ]
    for value in odd:
        assert same(codec.decode(codec.encode(value)), value), value


def test_subclasses_and_other_objects_have_no_plain_form_without_a_fallback():
    class Evil(int):
        def __eq__(self, other):
            return True

    for value in (Evil(3), object(), lambda: 1, (x for x in ()), iter([1]), sys):
        with pytest.raises(codec.Unencodable):
            codec.encode(value)
    # a sender that trusts its own objects sends a subclass as its plain type
    assert type(codec.decode(codec.encode(Evil(3), subclasses=True))) is int


def test_a_fallback_makes_handles_and_the_receivers_factory_makes_their_objects():
    sent = codec.encode([1, object()], lambda value: (b"H", (7, "object")))
    made = codec.decode(sent, lambda descriptor: ("handle", descriptor))
    assert made == [1, ("handle", (7, "object"))]
    with pytest.raises(codec.CodecError, match="unexpected tag"):
        codec.decode(sent)  # no factory: a handle is refused


def test_nesting_and_size_are_limited_both_ways():
    deep: list = []
    for _ in range(codec.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(codec.Unencodable, match="nested deeper"):
        codec.encode(deep)
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(codec.Unencodable):
        codec.encode(cyclic)
    hand_made = b"l\x01\x00\x00\x00" * (codec.MAX_DEPTH + 5) + b"N"
    with pytest.raises(codec.CodecError, match="nested deeper"):
        codec.decode(hand_made)
    with pytest.raises(codec.TooLarge):
        codec.encode(["x" * 1000] * 100, max_bytes=50_000)
    with pytest.raises(codec.TooLarge):
        codec.encode(10 ** (10**5), max_bytes=1000)
    with pytest.raises(codec.CodecError, match="length of"):
        codec.decode(b"s\xff\xff\xff\x7fabc")  # a length larger than what follows
    with pytest.raises(codec.CodecError, match="length of"):
        codec.decode(b"l\xff\xff\xff\x7f")  # a count no message could hold
    with pytest.raises(codec.CodecError, match="bytes after"):
        codec.decode(codec.encode(1) + b"N")


def test_a_built_in_class_is_looked_up_by_name_in_a_fixed_table():
    assert codec.decode(b"K\x03\x00\x00\x00int") is int
    for name in (b"os", b"eval", b"__import__", b"exec"):
        with pytest.raises(codec.CodecError, match="not a built-in class"):
            codec.decode(b"K" + len(name).to_bytes(4, "little") + name)


ALLOWED = {codec.__file__, fractions.__file__, pathlib.__file__}


def _decode_watched(data: bytes) -> set[str]:
    """Decode `data` and return the files of every Python function that ran."""
    ran: set[str] = set()

    def profile(frame, event, arg):
        if event == "call":
            ran.add(frame.f_code.co_filename)

    gc.disable()  # a collection would run the test runner's own callbacks
    sys.setprofile(profile)
    try:
        codec.decode(data)
    except codec.CodecError:
        pass
    finally:
        sys.setprofile(None)
        gc.enable()
    return ran


@given(st.binary(max_size=200))
def test_decoding_any_bytes_is_a_value_or_a_codec_error_and_runs_no_other_code(data):
    assert _decode_watched(data) - ALLOWED == set()


@given(values, st.data())
def test_decoding_a_damaged_message_is_a_value_or_a_codec_error_and_runs_no_other_code(value, data):
    encoded = bytearray(codec.encode(value))
    if encoded:
        at = data.draw(st.integers(0, len(encoded) - 1))
        encoded[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(encoded)))
    assert _decode_watched(bytes(encoded[:cut])) <= ALLOWED


def test_copy_back_positions_follow_the_order_both_sides_walk_containers():
    inner = [1]
    sent = {"a": inner, "b": ({2}, bytearray(b"x"))}
    track: list = []
    data = codec.encode(sent, track=track)
    made: list = []
    codec.decode(data, containers=made)
    assert [type(c) for c in track] == [type(c) for c in made] == [dict, list, set, bytearray]
    # an update names a tracked container by its position
    update = codec.encode([inner, 5], refs={id(inner): 1})
    assert codec.decode(update, ref=lambda k: track[k]) == [inner, 5]
    assert codec.decode(update, ref=lambda k: track[k])[0] is inner
