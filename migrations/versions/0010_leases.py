"""Run leases and a space reserve.

`run_leases`: the coordinator writing a run (host, pid, process start, heartbeat), so a
second coordinator is refused and a dead one's run can be taken over. Leases are
operational state, not history: they are not events, and change freely.
`store_reserve`: one row of filler, freed when the disk fills so that the run can still
record why it stopped.

Revision ID: 0010_leases
Revises: 0009_scaleout
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_leases"
down_revision = "0009_scaleout"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_leases",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("host", sa.String, nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("process_started", sa.Float, nullable=False),
        sa.Column("acquired_utc", sa.String, nullable=False),
        sa.Column("heartbeat_utc", sa.String, nullable=False),
    )
    op.create_table(
        "store_reserve",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("filler", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("store_reserve")
    op.drop_table("run_leases")
