"""Every older shape of a stored payload is read as today's, by its named upcaster: each tested on a
payload that shape's ironbench recorded (tests/fixtures/recorded_events/TYPE_COMMIT.json, from a
run of that commit's code), and shown to give the next recorded shape's keys."""

import json
from dataclasses import fields
from pathlib import Path

import pytest

from ironbench.core.events import EVENT_TYPES, InvocationCompleted, RunFinished, event_from_dict
from ironbench.core.upcasters import UPCASTERS, upcast, version_of

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded_events"
# Per event type, the commit that recorded each of its shapes, version 1 first: the store's
# first revision (or the type's own first commit), then each commit that changed the shape.
SHAPES = {
    "run_started": ["78fe111", "8522bb5", "661b376", "3cf0719", "4a83c48", "f696db4", "bafd3a5", "5b5c833", "631ca7f"],
    "invocation_started": ["78fe111", "cb3309d", "bafd3a5"],
    "invocation_completed": [
        *("78fe111", "cb3309d", "f7edeb4", "8522bb5", "661b376"),
        *("4a83c48", "78ff71c", "d42879e", "bafd3a5", "5b5c833"),
        "920ce2e",
    ],
    "decision_taken": ["78fe111", "cb3309d", "57616b2", "8522bb5", "4a83c48", "bafd3a5"],
    "check_completed": ["ad86fd6", "4e7cf17"],
    "ai_output_rejected": ["8d6a758", "e63ff98", "116ed57"],
    "scenario_started": ["0fbdc3e", "57616b2"],
    "turn_answered": ["0fbdc3e", "57616b2"],
    "turn_scored": ["0fbdc3e", "57616b2"],
    "scenario_finished": ["0fbdc3e", "57616b2"],
}
RECORDINGS = [(t, version, commit) for t, commits in SHAPES.items() for version, commit in enumerate(commits, 1)]
STEPS = [(t, version, commits) for t, commits in SHAPES.items() for version in range(1, len(commits))]


def recorded(event_type: str, commit: str) -> dict:
    return json.loads((RECORDED / f"{event_type}_{commit}.json").read_text())


def field_names(event_type: str) -> set[str]:
    return {f.name for f in fields(EVENT_TYPES[event_type])}


def test_every_shape_has_its_recording_and_every_type_its_version():
    assert sorted(p.name for p in RECORDED.glob("*.json")) == sorted(f"{t}_{c}.json" for t, _, c in RECORDINGS)
    assert set(UPCASTERS) == set(SHAPES)
    for event_type, cls in EVENT_TYPES.items():
        assert cls.version == version_of(event_type) == len(SHAPES.get(event_type, [None]))


@pytest.mark.parametrize("event_type, version, commits", STEPS, ids=[f"{t}_v{v}_v{v + 1}" for t, v, _ in STEPS])
def test_each_upcaster_brings_its_recorded_shape_to_the_next(event_type, version, commits):
    step = UPCASTERS[event_type][version - 1]
    assert step.__name__ == f"upcast_{event_type}_v{version}_v{version + 1}"
    assert step.__doc__.startswith(commits[version]), "its docstring names the commit that changed the shape"
    older, newer = recorded(event_type, commits[version - 1]), recorded(event_type, commits[version])
    upcast_payload = step(older)
    assert list(upcast_payload) == [*older, *(k for k in newer if k not in older)]
    assert set(upcast_payload) == set(newer)
    assert {k: upcast_payload[k] for k in older} == older  # what was recorded stays as recorded


@pytest.mark.parametrize("event_type, version, commit", RECORDINGS, ids=[f"{t}_v{v}_{c}" for t, v, c in RECORDINGS])
def test_a_recorded_payload_reads_as_today_with_nothing_defaulted_or_dropped(event_type, version, commit):
    payload = recorded(event_type, commit)
    # every payload before per-type versions was stored as version 1, whatever its shape
    today = upcast(event_type, payload, 1)
    assert set(today) == field_names(event_type)
    assert {k: today[k] for k in payload} == payload
    assert upcast(event_type, payload, version) == today
    event = event_from_dict(event_type, payload, 1)
    assert event.to_dict() == today


def test_the_first_revisions_runs_were_baseline_runs_of_their_case_group():
    """What cb3309d recorded for the same case, in the first shape that has a group."""
    for event_type in ("invocation_started", "invocation_completed", "decision_taken"):
        first, grouped = recorded(event_type, "78fe111"), recorded(event_type, "cb3309d")
        assert first["case_id"] == grouped["case_id"] == "email_regex"
        today = upcast(event_type, first, 1)
        assert (
            (today["mode"], today["group"])
            == (grouped["mode"], grouped["group"])
            == ("baseline", "baseline/email_regex")
        )


def test_a_payload_in_todays_shape_is_left_as_it_is():
    completed = recorded("invocation_completed", SHAPES["invocation_completed"][-1])
    assert upcast("invocation_completed", completed, 1) == completed
    assert upcast("invocation_completed", completed, InvocationCompleted.version) is completed
    finished = RunFinished(invocations=3, successes=2)
    assert RunFinished.version == 1 and event_from_dict("run_finished", finished.to_dict(), 1) == finished


def test_a_newer_payload_is_read_without_what_this_version_does_not_know():
    payload = {**recorded("invocation_completed", SHAPES["invocation_completed"][-1]), "a_later_field": 1}
    event = event_from_dict("invocation_completed", payload, InvocationCompleted.version + 1)
    assert isinstance(event, InvocationCompleted) and "a_later_field" not in event.to_dict()
