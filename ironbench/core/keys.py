"""Identities derived from content: instruction hashes and invocation keys."""

import hashlib


def instruction_hash(instruction: str) -> str:
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()


def invocation_key(run_id: str, suite_id: str, case_id: str, variant_id: str, run_index: int) -> str:
    """The deterministic identity of one invocation; recorded complete at most once."""
    return f"{run_id}/{suite_id}/{case_id}/{variant_id}/{run_index:03d}"
