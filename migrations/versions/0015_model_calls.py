"""Model calls: every call a target made to the run's model gateway (`gateway_calls`,
shown by `ironbench query` as the view `model_calls`), the long texts they hold, once per
run (`gateway_texts`), and per invocation what they add up to. The table named
`model_calls` stays the coordinator's own cache of model answers. Invocations recorded by
an ironbench older than this revision have NULL model columns.

Revision ID: 0015_model_calls
Revises: 0014_spec_import
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_model_calls"
down_revision = "0014_spec_import"
branch_labels = None
depends_on = None

INVOCATION_TABLES = ("invocations", "superseded_invocations", "surplus_invocations")
MODEL_COLUMNS = (
    ("model_calls", sa.Integer),
    ("prompt_tokens", sa.Integer),
    ("completion_tokens", sa.Integer),
    ("model_seconds", sa.Float),
)


def upgrade() -> None:
    for table in INVOCATION_TABLES:
        with op.batch_alter_table(table) as batch:
            for name, kind in MODEL_COLUMNS:
                batch.add_column(sa.Column(name, kind, nullable=True))
    op.create_table(
        "gateway_calls",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("suite_id", sa.String, nullable=False),
        sa.Column("invocation_key", sa.String, nullable=False),
        sa.Column("rerun", sa.Integer, nullable=False),
        sa.Column("case_id", sa.String, nullable=False),
        sa.Column("variant_id", sa.String, nullable=False),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("group_path", sa.String, nullable=False),
        sa.Column("call_index", sa.Integer, nullable=False),
        sa.Column("api", sa.String, nullable=False),
        sa.Column("requested_model", sa.String, nullable=False),
        sa.Column("served_model", sa.String, nullable=False),
        sa.Column("stream", sa.Boolean, nullable=False),
        sa.Column("messages", sa.String, nullable=False),
        sa.Column("options", sa.String, nullable=False),
        sa.Column("answer", sa.String, nullable=True),
        sa.Column("answer_sha256", sa.String, nullable=True),
        sa.Column("prompt_tokens", sa.Integer, nullable=True),
        sa.Column("completion_tokens", sa.Integer, nullable=True),
        sa.Column("latency_ms", sa.Float, nullable=False),
        sa.Column("error", sa.String, nullable=True),
        sa.Column("error_kind", sa.String, nullable=True),
        sa.Column("status", sa.Integer, nullable=False),
        sa.Column("retry_after", sa.Float, nullable=True),
        sa.Column("divergence", sa.String, nullable=True),
        sa.Column("timestamp_utc", sa.String, nullable=False),
    )
    op.create_index("ix_gateway_calls_run_id", "gateway_calls", ["run_id"])
    op.create_index("ix_gateway_calls_invocation_key", "gateway_calls", ["invocation_key"])
    op.create_table(
        "gateway_texts",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("sha256", sa.String, primary_key=True),
        sa.Column("text", sa.String, nullable=False),
        sa.Column("chars", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("gateway_texts")
    op.drop_index("ix_gateway_calls_invocation_key", "gateway_calls")
    op.drop_index("ix_gateway_calls_run_id", "gateway_calls")
    op.drop_table("gateway_calls")
    for table in INVOCATION_TABLES:
        with op.batch_alter_table(table) as batch:
            for name, _ in reversed(MODEL_COLUMNS):
                batch.drop_column(name)
