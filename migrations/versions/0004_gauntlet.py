"""Gauntlet: turns and their scores per scorer.

Revision ID: 0004_gauntlet
Revises: 0003_models
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_gauntlet"
down_revision = "0003_models"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "turns",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("engine", sa.String, primary_key=True),
        sa.Column("scenario", sa.String, primary_key=True),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("domain", sa.String, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("prompt", sa.String, nullable=False),
        sa.Column("answer", sa.String, nullable=False),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
    )
    # The latest score per (turn, scorer): rescoring appends events, this keeps the newest.
    op.create_table(
        "turn_scores",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("engine", sa.String, primary_key=True),
        sa.Column("scenario", sa.String, primary_key=True),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("scorer", sa.String, primary_key=True),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("domain", sa.String, nullable=False),
        sa.Column("violated", sa.Boolean, nullable=False),
        sa.Column("detail", sa.String, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("turn_scores")
    op.drop_table("turns")
