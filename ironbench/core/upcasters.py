"""Upcasters: every older shape of an event's payload, brought to the next one by a named step.

An event type's version is the shape of its payload (`schema_version` in the store): 1 plus
the steps below it has. A stored payload is upgraded when it is read, never rewritten (the
events are hash-chained): `upcast(type, payload, version)` runs the steps from its version on.

Until each event type had its own version, every payload was stored as version 1, whatever
its shape. So a step adds only what its payload lacks: a payload of a later shape stored as
version 1 passes the earlier steps unchanged. Each step names the commit where the shape
changed on main (and the branch commit it came from), and is tested on a payload that the
commit before the change recorded (tests/fixtures/recorded_events/). The suite inside
`run_started` is the suite's own record (ironbench.suite reads it); no step here touches it.
"""

from collections.abc import Callable
from typing import Any

Payload = dict[str, Any]
Upcaster = Callable[[Payload], Payload]


def _with(payload: Payload, **added: Any) -> Payload:
    """The payload with the keys it lacks of `added` (an older shape's payload lacks them all)."""
    missing = {k: v for k, v in added.items() if k not in payload}
    return {**payload, **missing} if missing else payload


def _unrecorded(payload: Payload, *names: str) -> Payload:
    """The payload with None for each of `names` it lacks: facts not recorded before its shape had them."""
    return _with(payload, **dict.fromkeys(names))


def _baseline(payload: Payload) -> Payload:
    """Before cb3309d every case was a baseline case, and its group was `baseline/<case>`
    (what cb3309d's runs record for one)."""
    return _with(payload, mode="baseline", group=f"baseline/{payload['case_id']}")


# -- run_started -------------------------------------------------------------------------


def upcast_run_started_v1_v2(payload: Payload) -> Payload:
    """8522bb5 (from ccc6b36): the run's --label and the suite's record_env values (none before)."""
    return _with(payload, label=None, environment={})


def upcast_run_started_v2_v3(payload: Payload) -> Payload:
    """661b376 (from 4cef1e7): the names given with --redact (none before)."""
    return _with(payload, redact=[])


def upcast_run_started_v3_v4(payload: Payload) -> Payload:
    """3cf0719: the outcome rules (None: recorded before rules were, i.e. Ironclad's)."""
    return _unrecorded(payload, "rules")


def upcast_run_started_v4_v5(payload: Payload) -> Payload:
    """4a83c48 (from 2a117cb): --speculate and --scheduler (neither existed: no speculation, local threads)."""
    return _with(payload, speculate=False, scheduler=None)


def upcast_run_started_v5_v6(payload: Payload) -> Payload:
    """f696db4 (from 910a4ca): the sequential gate a run ran under (--against; none before)."""
    return _unrecorded(payload, "against")


def upcast_run_started_v6_v7(payload: Payload) -> Payload:
    """bafd3a5 (from 53a6e57): how the target's version was found (not recorded before)."""
    return _unrecorded(payload, "ironclad_version_source")


def upcast_run_started_v7_v8(payload: Payload) -> Payload:
    """5b5c833 (from d7774f0): the model gateway's served model and the replayed run (no gateway before)."""
    return _unrecorded(payload, "serve_model", "replay_of")


def upcast_run_started_v8_v9(payload: Payload) -> Payload:
    """631ca7f: the fence the run asked for (None: recorded before runs were fenced)."""
    return _unrecorded(payload, "sandbox")


# -- invocation_started -------------------------------------------------------------------


def upcast_invocation_started_v1_v2(payload: Payload) -> Payload:
    """cb3309d: the invocation's mode and group (baseline runs only before)."""
    return _baseline(payload)


def upcast_invocation_started_v2_v3(payload: Payload) -> Payload:
    """bafd3a5 (from 53a6e57): a canonical case's complexity (no canonical cases before)."""
    return _unrecorded(payload, "complexity")


# -- invocation_completed -----------------------------------------------------------------


def upcast_invocation_completed_v1_v2(payload: Payload) -> Payload:
    """cb3309d: mode, group, and an adversarial variant's generator or a stress level
    (baseline runs only before)."""
    return _unrecorded(_baseline(payload), "generator", "level")


def upcast_invocation_completed_v2_v3(payload: Payload) -> Payload:
    """f7edeb4: the output line that matched an infrastructure-error rule (none were read before)."""
    return _unrecorded(payload, "infra_error")


def upcast_invocation_completed_v3_v4(payload: Payload) -> Payload:
    """8522bb5 (from ccc6b36): which attempt of its slot this was (every slot ran once before)."""
    return _with(payload, rerun=0)


def upcast_invocation_completed_v4_v5(payload: Payload) -> Payload:
    """661b376 (from 4cef1e7): the files the whole streams were saved in (only the captured text before)."""
    return _unrecorded(payload, "stdout_path", "stderr_path")


def upcast_invocation_completed_v5_v6(payload: Payload) -> Payload:
    """4a83c48 (from 2a117cb): completed past its group's decision (--speculate; never before)."""
    return _with(payload, surplus=False)


def upcast_invocation_completed_v6_v7(payload: Payload) -> Payload:
    """78ff71c (from 540befa): the saved brick's sha256 (not read before)."""
    return _unrecorded(payload, "brick_sha256")


def upcast_invocation_completed_v7_v8(payload: Payload) -> Payload:
    """d42879e (from ad86fd6): why each failed validation attempt failed (not read before)."""
    return _unrecorded(payload, "failure_causes", "failure_cause")


def upcast_invocation_completed_v8_v9(payload: Payload) -> Payload:
    """bafd3a5 (from 53a6e57): a canonical case's complexity, and an imported run's recorded summary and the
    fields it disagrees on (neither existed before)."""
    return _unrecorded(payload, "complexity", "recorded", "disagrees")


def upcast_invocation_completed_v9_v10(payload: Payload) -> Payload:
    """5b5c833 (from d7774f0): what the invocation asked of the model gateway (no gateway before)."""
    return _unrecorded(payload, "model_calls", "prompt_tokens", "completion_tokens", "model_seconds")


def upcast_invocation_completed_v10_v11(payload: Payload) -> Payload:
    """920ce2e (from 5b5c833): why the brick a target named was not taken (every named brick was
    followed before, wherever it led)."""
    return _unrecorded(payload, "brick_refused")


# -- decision_taken -----------------------------------------------------------------------


def upcast_decision_taken_v1_v2(payload: Payload) -> Payload:
    """cb3309d: mode, group, generator, level, and the reference a variant is judged against
    (baseline decisions only before)."""
    return _unrecorded(_baseline(payload), "generator", "level", "reference", "reference_source")


def upcast_decision_taken_v2_v3(payload: Payload) -> Payload:
    """57616b2 (from 2bc2dfe): every baseline outcome of an unsettled reference, the exact bounds, the
    direction and the p-value (not computed before)."""
    bounds = ("success_lower_95", "success_upper_95", "reproduce_lower_95")
    return _unrecorded(payload, "reference_outcomes", *bounds, "direction", "p_value")


def upcast_decision_taken_v3_v4(payload: Payload) -> Payload:
    """8522bb5 (from ccc6b36): the stored baseline group a reference came from (not recorded before)."""
    return _unrecorded(payload, "reference_group")


def upcast_decision_taken_v4_v5(payload: Payload) -> Payload:
    """4a83c48 (from 2a117cb): the runs completed past the decision (--speculate; none before)."""
    return _unrecorded(payload, "surplus_runs")


def upcast_decision_taken_v5_v6(payload: Payload) -> Payload:
    """bafd3a5 (from 53a6e57): a canonical case's complexity (no canonical cases before)."""
    return _with(payload, complexity=None)


# -- ai_output_rejected -------------------------------------------------------------------


def upcast_ai_output_rejected_v1_v2(payload: Payload) -> Payload:
    """e63ff98 (from 544be3b): what was validated, the answer without trivial wrapping ("": not recorded;
    the answer itself was validated)."""
    return _with(payload, normalised_output="")


def upcast_ai_output_rejected_v2_v3(payload: Payload) -> Payload:
    """116ed57 (from 37e40df): the semantic judge's verdict (no judge before)."""
    return _unrecorded(payload, "judge")


# -- the gauntlet -------------------------------------------------------------------------


def _first_conversation(payload: Payload) -> Payload:
    """57616b2 (from 2bc2dfe): which conversation of its scenario (one per scenario before: conversation 1,
    which keeps the seeds runs had then)."""
    return _with(payload, conversation=1)


def upcast_scenario_started_v1_v2(payload: Payload) -> Payload:
    """57616b2 (from 2bc2dfe): the conversation it starts (see `_first_conversation`)."""
    return _first_conversation(payload)


def upcast_turn_answered_v1_v2(payload: Payload) -> Payload:
    """57616b2 (from 2bc2dfe): the conversation of the turn (see `_first_conversation`)."""
    return _first_conversation(payload)


def upcast_turn_scored_v1_v2(payload: Payload) -> Payload:
    """57616b2 (from 2bc2dfe): the conversation of the scored turn (see `_first_conversation`)."""
    return _first_conversation(payload)


def upcast_scenario_finished_v1_v2(payload: Payload) -> Payload:
    """57616b2 (from 2bc2dfe): the conversation it finishes (see `_first_conversation`)."""
    return _first_conversation(payload)


# -- check_completed ---------------------------------------------------------------------


def upcast_check_completed_v1_v2(payload: Payload) -> Payload:
    """4e7cf17: the timeout the check was allowed (calibrated on its reference), not recorded before."""
    return _unrecorded(payload, "timeout_ms")


# Per event type, its steps in order: the k-th brings version k to k + 1.
UPCASTERS: dict[str, tuple[Upcaster, ...]] = {
    "run_started": (
        upcast_run_started_v1_v2,
        upcast_run_started_v2_v3,
        upcast_run_started_v3_v4,
        upcast_run_started_v4_v5,
        upcast_run_started_v5_v6,
        upcast_run_started_v6_v7,
        upcast_run_started_v7_v8,
        upcast_run_started_v8_v9,
    ),
    "invocation_started": (upcast_invocation_started_v1_v2, upcast_invocation_started_v2_v3),
    "invocation_completed": (
        upcast_invocation_completed_v1_v2,
        upcast_invocation_completed_v2_v3,
        upcast_invocation_completed_v3_v4,
        upcast_invocation_completed_v4_v5,
        upcast_invocation_completed_v5_v6,
        upcast_invocation_completed_v6_v7,
        upcast_invocation_completed_v7_v8,
        upcast_invocation_completed_v8_v9,
        upcast_invocation_completed_v9_v10,
        upcast_invocation_completed_v10_v11,
    ),
    "decision_taken": (
        upcast_decision_taken_v1_v2,
        upcast_decision_taken_v2_v3,
        upcast_decision_taken_v3_v4,
        upcast_decision_taken_v4_v5,
        upcast_decision_taken_v5_v6,
    ),
    "check_completed": (upcast_check_completed_v1_v2,),
    "ai_output_rejected": (upcast_ai_output_rejected_v1_v2, upcast_ai_output_rejected_v2_v3),
    "scenario_started": (upcast_scenario_started_v1_v2,),
    "turn_answered": (upcast_turn_answered_v1_v2,),
    "turn_scored": (upcast_turn_scored_v1_v2,),
    "scenario_finished": (upcast_scenario_finished_v1_v2,),
}


def version_of(event_type: str) -> int:
    """The version an event type's payloads are written in today."""
    return 1 + len(UPCASTERS.get(event_type, ()))


def upcast(event_type: str, payload: Payload, version: int) -> Payload:
    """A payload stored at `version`, in today's shape (a newer one is left as it is)."""
    for step in UPCASTERS.get(event_type, ())[max(version, 1) - 1 :]:
        payload = step(payload)
    return payload
