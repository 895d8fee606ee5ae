"""Initial schema: append-only events, read models, projection positions.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.String, nullable=False, unique=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("stream", sa.String, nullable=False),
        sa.Column("type", sa.String, nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("idempotency_key", sa.String, nullable=True, unique=True),
        sa.Column("payload", sa.String, nullable=False),
    )
    op.create_index("ix_events_run_id", "events", ["run_id"])
    op.create_index("ix_events_run_stream", "events", ["run_id", "stream"])
    # History cannot be rewritten by any code path: the database refuses it.
    op.execute(
        "CREATE TRIGGER events_no_update BEFORE UPDATE ON events "
        "BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE refused'); END"
    )
    op.execute(
        "CREATE TRIGGER events_no_delete BEFORE DELETE ON events "
        "BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END"
    )

    op.create_table(
        "runs",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("mode", sa.String, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("started_utc", sa.String, nullable=False),
        sa.Column("finished_utc", sa.String, nullable=True),
        sa.Column("target", sa.String, nullable=False),
        sa.Column("ironclad_version", sa.String, nullable=False),
    )
    op.create_table(
        "invocations",
        sa.Column("invocation_key", sa.String, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("mode", sa.String, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=False),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("instruction_hash", sa.String, nullable=False),
        sa.Column("instruction_length", sa.Integer, nullable=False),
        sa.Column("success", sa.Boolean, nullable=False),
        sa.Column("failure_stage", sa.String, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("repairs_triggered", sa.Integer, nullable=False),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        sa.Column("timed_out", sa.Boolean, nullable=False),
        sa.Column("harness_error", sa.String, nullable=True),
        sa.Column("exit_code", sa.Integer, nullable=True),
        sa.Column("debug_artifacts_present", sa.Boolean, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
    )
    op.create_index("ix_invocations_run_id", "invocations", ["run_id"])
    op.create_table(
        "decisions",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("mode", sa.String, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=False),
        sa.Column("decision", sa.String, nullable=False),
        sa.Column("reason", sa.String, nullable=False),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("successes", sa.Integer, nullable=False),
        sa.Column("success_rate", sa.Float, nullable=False),
        sa.Column("wilson_low", sa.Float, nullable=False),
        sa.Column("wilson_high", sa.Float, nullable=False),
        sa.Column("chance_agreement", sa.Float, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
    )
    op.create_index("ix_decisions_run_id", "decisions", ["run_id"])
    op.create_table(
        "projection_positions",
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("last_seq", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    for table in ("projection_positions", "decisions", "invocations", "runs"):
        op.drop_table(table)
    op.execute("DROP TRIGGER IF EXISTS events_no_update")
    op.execute("DROP TRIGGER IF EXISTS events_no_delete")
    op.drop_table("events")
