"""Adversarial and stress modes: variants table; group, generator and level columns.

Revision ID: 0002_variants_and_modes
Revises: 0001_initial
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_variants_and_modes"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("invocations") as batch:
        batch.add_column(sa.Column("group_path", sa.String, nullable=True))
        batch.add_column(sa.Column("generator", sa.String, nullable=True))
        batch.add_column(sa.Column("level", sa.Integer, nullable=True))
        batch.add_column(sa.Column("case_mode", sa.String, nullable=True))
    with op.batch_alter_table("decisions") as batch:
        batch.add_column(sa.Column("group_path", sa.String, nullable=True))
        batch.add_column(sa.Column("generator", sa.String, nullable=True))
        batch.add_column(sa.Column("level", sa.Integer, nullable=True))
        batch.add_column(sa.Column("case_mode", sa.String, nullable=True))
        batch.add_column(sa.Column("reference_source", sa.String, nullable=True))
    op.create_table(
        "variants",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("case_mode", sa.String, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("generator", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=True),
        sa.Column("instruction", sa.String, nullable=False),
        sa.Column("instruction_hash", sa.String, nullable=False),
        sa.Column("seed", sa.Integer, nullable=True),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("dropped", sa.Boolean, nullable=False),
        sa.Column("reason", sa.String, nullable=True),
        sa.Column("timestamp_utc", sa.String, nullable=False),
    )
    op.create_index("ix_variants_run_id", "variants", ["run_id"])
    # Rows written before this revision were all baseline runs.
    op.execute("UPDATE invocations SET case_mode = 'baseline', group_path = 'baseline/' || case_id")
    op.execute("UPDATE decisions SET case_mode = 'baseline', group_path = 'baseline/' || case_id")


def downgrade() -> None:
    op.drop_table("variants")
    with op.batch_alter_table("decisions") as batch:
        for column in ("reference_source", "case_mode", "level", "generator", "group_path"):
            batch.drop_column(column)
    with op.batch_alter_table("invocations") as batch:
        for column in ("case_mode", "level", "generator", "group_path"):
            batch.drop_column(column)
