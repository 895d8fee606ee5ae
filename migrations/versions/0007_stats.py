"""Statistics: decisions carry one-sided bounds, direction and p-value; gauntlet conversations.

Revision ID: 0007_stats
Revises: 0006_facts
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_stats"
down_revision = "0006_facts"
branch_labels = None
depends_on = None

_DECISION_COLUMNS = (
    # One-sided exact (Clopper-Pearson) 95% bounds on the success rate, and for a stable
    # case the lower bound on the chance that the instruction reproduces its outcome.
    ("success_lower_95", sa.Float),
    ("success_upper_95", sa.Float),
    ("reproduce_lower_95", sa.Float),
    # Adversarial: which way a difference went; stress ladders and unstable references:
    # the p-value behind the verdict.
    ("direction", sa.String),
    ("p_value", sa.Float),
)


def _columns(table: str, with_conversation: bool) -> list[sa.Column]:
    keys = ["run_id", "engine", "scenario"] + (["conversation"] if with_conversation else []) + ["turn"]
    columns = [sa.Column(k, sa.Integer if k in ("conversation", "turn") else sa.String, primary_key=True) for k in keys]
    if table == "turns":
        columns += [
            sa.Column("suite_id", sa.String, nullable=False),
            sa.Column("domain", sa.String, nullable=False),
            sa.Column("attempt", sa.Integer, nullable=False),
            sa.Column("prompt", sa.String, nullable=False),
            sa.Column("answer", sa.String, nullable=False),
            sa.Column("duration_ms", sa.Integer, nullable=False),
        ]
    else:
        columns += [
            sa.Column("scorer", sa.String, primary_key=True),
            sa.Column("suite_id", sa.String, nullable=False),
            sa.Column("domain", sa.String, nullable=False),
            sa.Column("violated", sa.Boolean, nullable=False),
            sa.Column("detail", sa.String, nullable=False),
        ]
    return columns + [
        sa.Column("timestamp_utc", sa.String, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
    ]


def _rebuild(table: str, with_conversation: bool) -> None:
    """SQLite cannot change a primary key in place: copy into a new table and swap."""
    columns = _columns(table, with_conversation)
    names = [c.name for c in columns]
    op.create_table(f"{table}_new", *columns)
    source = [("1" if n == "conversation" else n) for n in names]
    where = "" if with_conversation else " WHERE conversation = 1"
    op.execute(f"INSERT INTO {table}_new ({', '.join(names)}) SELECT {', '.join(source)} FROM {table}{where}")
    op.drop_table(table)
    op.rename_table(f"{table}_new", table)


def upgrade() -> None:
    with op.batch_alter_table("decisions") as batch:
        for name, kind in _DECISION_COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))
    # A scenario is played `conversations` times (different seeds): the conversation
    # becomes part of each turn's identity. Existing turns are conversation 1.
    for table in ("turns", "turn_scores"):
        _rebuild(table, True)


def downgrade() -> None:
    for table in ("turns", "turn_scores"):
        _rebuild(table, False)
    with op.batch_alter_table("decisions") as batch:
        for name, _ in reversed(_DECISION_COLUMNS):
            batch.drop_column(name)
