"""Call costs: what each model call of a run cost (a model_call_priced event), the target's
calls through the gateway and ironbench's own, shown by `ironbench query` as the view `costs`.
Runs recorded before this revision have no rows: their calls were never priced.

Revision ID: 0016_call_costs
Revises: 0015_model_calls
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_call_costs"
down_revision = "0015_model_calls"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "call_costs",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("stream", sa.String, nullable=False),
        sa.Column("caller", sa.String, nullable=False),
        sa.Column("model", sa.String, nullable=False),
        sa.Column("invocation_key", sa.String, nullable=True),
        sa.Column("rerun", sa.Integer, nullable=False),
        sa.Column("call_index", sa.Integer, nullable=True),
        sa.Column("case_id", sa.String, nullable=True),
        sa.Column("variant_id", sa.String, nullable=True),
        sa.Column("run_index", sa.Integer, nullable=True),
        sa.Column("group_path", sa.String, nullable=True),
        sa.Column("input_tokens", sa.Integer, nullable=True),
        sa.Column("output_tokens", sa.Integer, nullable=True),
        sa.Column("cached_tokens", sa.Integer, nullable=True),
        sa.Column("model_seconds", sa.Float, nullable=False),
        sa.Column("pricing", sa.String, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("cost", sa.String, nullable=True),
        sa.Column("currency", sa.String, nullable=False),
        sa.Column("price_table", sa.String, nullable=True),
        sa.Column("provider", sa.String, nullable=True),
        sa.Column("priced_model", sa.String, nullable=True),
        sa.Column("timestamp_utc", sa.String, nullable=False),
    )
    op.create_index("ix_call_costs_run_id", "call_costs", ["run_id"])
    op.create_index("ix_call_costs_invocation_key", "call_costs", ["invocation_key"])


def downgrade() -> None:
    op.drop_index("ix_call_costs_invocation_key", "call_costs")
    op.drop_index("ix_call_costs_run_id", "call_costs")
    op.drop_table("call_costs")
