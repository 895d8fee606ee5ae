"""Models: AI rejections read model and the model-call cache.

Revision ID: 0003_models
Revises: 0002_variants_and_modes
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_models"
down_revision = "0002_variants_and_modes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rejections",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("generator", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("model", sa.String, nullable=False),
        sa.Column("ai_output", sa.String, nullable=False),
        sa.Column("failure_reasons", sa.String, nullable=False),
        sa.Column("reason_count", sa.Integer, nullable=False),
        sa.Column("timestamp_utc", sa.String, nullable=False),
    )
    op.create_index("ix_rejections_run_id", "rejections", ["run_id"])
    # A memo, not history: the answer a model gave to one exact call, so a resumed
    # run never pays twice. Keyed by (model, prompt, options, seed, attempt).
    op.create_table(
        "model_calls",
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("model", sa.String, nullable=False),
        sa.Column("prompt", sa.String, nullable=False),
        sa.Column("system", sa.String, nullable=True),
        sa.Column("options", sa.String, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("response", sa.String, nullable=False),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        sa.Column("created_utc", sa.String, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("model_calls")
    op.drop_table("rejections")
