"""Checks and failure causes: the harness's own verdict on each saved brick, and why each
failed validation attempt failed.

`checks` holds the latest check of each invocation (a re-check by `ironbench check`
replaces it); the three invocation tables gain `correct` (null: not checked),
`check_verdict` and `failure_cause` (the cause of the last failed validation attempt of a
run that failed); `failure_causes` holds every failed attempt's cause. Invocations recorded
before this revision have none of them.

Revision ID: 0013_checks
Revises: 0012_gate
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_checks"
down_revision = "0012_gate"
branch_labels = None
depends_on = None

TABLES = ("invocations", "superseded_invocations", "surplus_invocations")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("correct", sa.Boolean, nullable=True))
            batch.add_column(sa.Column("check_verdict", sa.String, nullable=True))
            batch.add_column(sa.Column("failure_cause", sa.String, nullable=True))
    op.create_table(
        "checks",
        sa.Column("invocation_key", sa.String, primary_key=True),
        sa.Column("rerun", sa.Integer, nullable=False),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=False),
        sa.Column("group_path", sa.String, nullable=False),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("kind", sa.String, nullable=False),
        sa.Column("check_sha256", sa.String, nullable=False),
        sa.Column("verdict", sa.String, nullable=False),
        sa.Column("correct", sa.Boolean, nullable=True),
        sa.Column("passed", sa.Integer, nullable=True),
        sa.Column("failed", sa.Integer, nullable=True),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        sa.Column("detail", sa.String, nullable=False),
        sa.Column("output", sa.String, nullable=False),
        sa.Column("recheck", sa.Boolean, nullable=False),
        sa.Column("brick_path", sa.String, nullable=False),
        sa.Column("brick_sha256", sa.String, nullable=True),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
    )
    op.create_index("ix_checks_run_id", "checks", ["run_id"])
    op.create_table(
        "failure_causes",
        sa.Column("invocation_key", sa.String, primary_key=True),
        sa.Column("attempt", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=False),
        sa.Column("group_path", sa.String, nullable=True),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("cause", sa.String, nullable=False),
        sa.Column("passed", sa.Integer, nullable=True),
        sa.Column("failed", sa.Integer, nullable=True),
        sa.Column("file", sa.String, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
    )
    op.create_index("ix_failure_causes_run_id", "failure_causes", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_failure_causes_run_id", "failure_causes")
    op.drop_table("failure_causes")
    op.drop_index("ix_checks_run_id", "checks")
    op.drop_table("checks")
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("failure_cause")
            batch.drop_column("check_verdict")
            batch.drop_column("correct")
