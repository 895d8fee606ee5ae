"""Re-run invocation slots, run labels and recorded environment.

An invocation slot whose attempt hit an infrastructure error is run again; the
`invocations` read model keeps only each slot's live (latest) attempt, and the
attempts it replaced move to `superseded_invocations`. Runs carry the `--label`
they were given and the environment variables their suite asked to record.

Revision ID: 0006_facts
Revises: 0005_infra_errors
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_facts"
down_revision = "0005_infra_errors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("invocations") as batch:
        # 0 for a slot's first attempt, k for its k-th re-run.
        batch.add_column(sa.Column("rerun", sa.Integer, nullable=False, server_default="0"))
    op.create_table(
        "superseded_invocations",
        sa.Column("invocation_key", sa.String, primary_key=True),
        sa.Column("rerun", sa.Integer, primary_key=True),
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
        sa.Column("infra_error", sa.String, nullable=True),
        sa.Column("exit_code", sa.Integer, nullable=True),
        sa.Column("debug_artifacts_present", sa.Boolean, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("group_path", sa.String, nullable=True),
        sa.Column("generator", sa.String, nullable=True),
        sa.Column("level", sa.Integer, nullable=True),
        sa.Column("case_mode", sa.String, nullable=True),
    )
    op.create_index("ix_superseded_invocations_run_id", "superseded_invocations", ["run_id"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("label", sa.String, nullable=True))
        batch.add_column(sa.Column("environment", sa.String, nullable=True))  # JSON object


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("environment")
        batch.drop_column("label")
    op.drop_table("superseded_invocations")
    with op.batch_alter_table("invocations") as batch:
        batch.drop_column("rerun")
