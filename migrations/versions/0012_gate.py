"""The sequential regression gate: a run's gate (`run --against`) and each of its looks.

Revision ID: 0012_gate
Revises: 0011_bricks
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_gate"
down_revision = "0011_bricks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gates",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("against", sa.String, nullable=False),
        sa.Column("margin", sa.Float, nullable=False),
        sa.Column("alpha", sa.Float, nullable=False),
        sa.Column("power", sa.Float, nullable=False),
        sa.Column("rate", sa.Float, nullable=False),
        sa.Column("cap", sa.Integer, nullable=False),
        sa.Column("cases", sa.Integer, nullable=False),
        sa.Column("end_round", sa.Integer, nullable=False),
        sa.Column("met", sa.Boolean, nullable=False),
    )
    op.create_table(
        "gate_looks",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("look", sa.Integer, nullable=False),
        sa.Column("invocations", sa.Integer, nullable=False),
        sa.Column("success_drop", sa.Float, nullable=False),
        sa.Column("se", sa.Float, nullable=False),
        sa.Column("z", sa.Float, nullable=False),
        sa.Column("upper", sa.Float, nullable=False),
        sa.Column("lower", sa.Float, nullable=False),
        sa.Column("low", sa.Float, nullable=False),
        sa.Column("high", sa.Float, nullable=False),
        sa.Column("decision", sa.String, nullable=False),
        sa.Column("p_fixed", sa.Float, nullable=True),
        sa.Column("failed", sa.Boolean, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
    )
    op.create_index("ix_gate_looks_run_id", "gate_looks", ["run_id"])


def downgrade() -> None:
    op.drop_table("gate_looks")
    op.drop_table("gates")
