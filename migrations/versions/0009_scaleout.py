"""Surplus runs: invocations past their group's decision (started by --speculate).

They are kept, but apart: `surplus_invocations` has the columns of `invocations`, so
every query, rate, comparison and report over `invocations` counts evidence only.

Revision ID: 0009_scaleout
Revises: 0008_harden
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_scaleout"
down_revision = "0008_harden"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "surplus_invocations",
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
        sa.Column("group_path", sa.String, nullable=True),
        sa.Column("generator", sa.String, nullable=True),
        sa.Column("level", sa.Integer, nullable=True),
        sa.Column("case_mode", sa.String, nullable=True),
        sa.Column("infra_error", sa.String, nullable=True),
        sa.Column("rerun", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_index("ix_surplus_invocations_run_id", "surplus_invocations", ["run_id"])


def downgrade() -> None:
    op.drop_table("surplus_invocations")
