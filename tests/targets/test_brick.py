"""A brick is taken as data: only a regular file beneath the target's folder, reached without
following a link, its bytes read once; anything else is no brick, with the reason, and a name
that leads into the answer key is tampering."""

import os
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.targets.brick import MAX_BRICK_BYTES, Brick, NoBrick, take_brick

SOURCE = b"def add(a, b):\n    return a + b\n"


@pytest.fixture
def layout(tmp_path) -> tuple[Path, Path]:
    """A target's working folder with its brick, and an answer key beside it."""
    workdir = tmp_path / "work"
    (workdir / "verified_bricks").mkdir(parents=True)
    (workdir / "verified_bricks" / "add.py").write_bytes(SOURCE)
    key = tmp_path / "suite"
    key.mkdir()
    (key / "reference.py").write_bytes(b"def add(a, b):\n    return a + b  # the reference\n")
    (key / "test_add.py").write_bytes(b"from add import add\n")
    return workdir, key


def test_a_brick_beneath_its_folder_is_taken_with_its_own_test(layout):
    workdir, _key = layout
    (workdir / "verified_bricks" / "test_add.py").write_bytes(b"def test(): pass\n")
    (workdir / "verified_bricks" / "conftest.py").write_bytes(b"")
    brick = take_brick(workdir, "verified_bricks/add.py")
    assert isinstance(brick, Brick)
    assert brick.content == SOURCE and brick.name == "add.py" and brick.module == "add"
    assert brick.beside == (("test_add.py", b"def test(): pass\n"),)
    assert brick.neighbours == ("add.py", "conftest.py", "test_add.py")
    absolute = take_brick(workdir, str(workdir / "verified_bricks" / "add.py"))  # absolute, beneath
    assert isinstance(absolute, Brick) and absolute.content == SOURCE and absolute.beside == brick.beside
    assert take_brick(workdir, "./verified_bricks/./add.py").content == SOURCE


@pytest.mark.parametrize(
    ("named", "why"),
    [
        ("/etc/passwd", "outside the target's working folder"),
        ("../suite/reference.py", "climbs out"),
        ("verified_bricks/../../suite/reference.py", "climbs out"),
        ("", "no path"),
        ("verified_bricks", "not a regular file"),
        ("missing.py", "not in the target's working folder"),
        ("verified_bricks/add.py/x.py", "not a folder"),
    ],
)
def test_a_name_that_is_no_file_beneath_the_folder_is_no_brick(layout, named, why):
    workdir, _key = layout
    refused = take_brick(workdir, named)
    assert isinstance(refused, NoBrick) and why in refused.reason and not refused.tampered


def test_links_are_never_followed_and_into_the_answer_key_they_are_tampering(layout):
    workdir, key = layout
    bricks = workdir / "verified_bricks"
    (bricks / "ref.py").symlink_to(key / "reference.py")
    (workdir / "linked").symlink_to(key)
    (bricks / "elsewhere.py").symlink_to(bricks / "add.py")
    answer_key = (str(key),)
    for named in ("verified_bricks/ref.py", "linked/reference.py", str(key / "reference.py"), "../suite/reference.py"):
        refused = take_brick(workdir, named, answer_key)
        assert isinstance(refused, NoBrick) and refused.tampered, named
        assert "answer key" in refused.reason and str(key / "reference.py") in refused.reason
    inside = take_brick(workdir, "verified_bricks/elsewhere.py", answer_key)  # a link, even to its own brick
    assert isinstance(inside, NoBrick) and not inside.tampered and "symbolic link" in inside.reason


def test_its_own_test_is_taken_only_as_a_regular_file(layout, tmp_path):
    workdir, key = layout
    (tmp_path / "elsewhere.py").write_bytes(b"def test(): pass\n")
    (workdir / "verified_bricks" / "test_add.py").symlink_to(tmp_path / "elsewhere.py")
    brick = take_brick(workdir, "verified_bricks/add.py", (str(key),))
    assert isinstance(brick, Brick) and brick.beside == ()


def test_a_fifo_a_hard_link_and_an_oversized_file_are_no_brick(layout, tmp_path):
    workdir, key = layout
    os.mkfifo(workdir / "pipe.py")
    os.link(key / "reference.py", workdir / "hard.py")
    with (workdir / "big.py").open("wb") as handle:
        handle.truncate(MAX_BRICK_BYTES + 1)
    assert "not a regular file" in take_brick(workdir, "pipe.py").reason  # opened without waiting
    assert "hard link" in take_brick(workdir, "hard.py").reason
    assert "larger than" in take_brick(workdir, "big.py").reason


def test_a_folder_of_too_many_names_is_not_read_whole(layout, monkeypatch):
    workdir, _key = layout
    monkeypatch.setattr("ironbench.targets.brick.MAX_FOLDER_NAMES", 5)
    for n in range(5):
        (workdir / "verified_bricks" / f"f{n}.txt").write_bytes(b"")
    refused = take_brick(workdir, "verified_bricks/add.py")
    assert isinstance(refused, NoBrick) and "holds more than 5 names" in refused.reason


def test_the_wire_form_carries_every_byte(layout):
    workdir, _key = layout
    (workdir / "verified_bricks" / "odd.py").write_bytes(bytes(range(256)))
    brick = take_brick(workdir, "verified_bricks/odd.py")
    assert Brick.from_wire(brick.to_wire()) == brick


_NAME = st.text(string.ascii_letters + string.digits + "._-/", min_size=1, max_size=30)


@given(named=_NAME)
def test_whatever_the_name_nothing_outside_the_folder_is_ever_read(tmp_path_factory, named):
    root = tmp_path_factory.mktemp("t")
    workdir = root / "work"
    workdir.mkdir()
    (root / "secret.py").write_bytes(b"SECRET")
    (workdir / "up").symlink_to(root)
    taken = take_brick(workdir, named)
    assert not (isinstance(taken, Brick) and taken.content == b"SECRET")


def test_a_link_beside_the_brick_into_the_answer_key_is_tampering_and_one_to_its_own_folder_is_not(layout):
    workdir, key = layout
    bricks = workdir / "verified_bricks"
    answer_key = (str(key), str(workdir.parent))  # the output folder holds the working folder
    (bricks / "notes.txt").symlink_to(workdir / "verified_bricks" / "add.py")
    (bricks / "own.py").symlink_to(bricks / "add.py")
    assert isinstance(take_brick(workdir, "verified_bricks/add.py", answer_key), Brick)
    refused = take_brick(workdir, "verified_bricks/own.py", answer_key)
    assert isinstance(refused, NoBrick) and not refused.tampered and "symbolic link" in refused.reason
    for name, leads_to in (("test_add.py", key / "test_add.py"), ("data.json", key / "reference.py")):
        link = bricks / name
        link.symlink_to(leads_to)
        refused = take_brick(workdir, "verified_bricks/add.py", answer_key)
        assert isinstance(refused, NoBrick) and refused.tampered, name
        assert f"verified_bricks/{name} beside the brick is a symbolic link" in refused.reason
        assert str(leads_to) in refused.reason
        link.unlink()
