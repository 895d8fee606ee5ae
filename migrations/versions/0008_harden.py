"""Hash chain: every event stores a hash over its columns and its predecessor's hash.

Revision ID: 0008_harden
Revises: 0007_stats
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from ironbench.store.chain import COLUMNS, GENESIS, event_hash

revision = "0008_harden"
down_revision = "0007_stats"
branch_labels = None
depends_on = None

_NO_UPDATE = (
    "CREATE TRIGGER events_no_update BEFORE UPDATE ON events "
    "BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE refused'); END"
)
_NO_DELETE = (
    "CREATE TRIGGER events_no_delete BEFORE DELETE ON events "
    "BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END"
)


def upgrade() -> None:
    op.add_column("events", sa.Column("hash", sa.String, nullable=True))
    # Events written before this revision are chained now, in order: the chain is
    # evidence from the upgrade on. The append-only trigger steps aside only here.
    conn = op.get_bind()
    op.execute("DROP TRIGGER IF EXISTS events_no_update")
    rows = conn.exec_driver_sql(f"SELECT {COLUMNS} FROM events ORDER BY seq").fetchall()
    previous = GENESIS
    updates = []
    for row in rows:
        previous = event_hash(previous, *row[:-1])
        updates.append((previous, row[0]))
    if updates:
        conn.exec_driver_sql("UPDATE events SET hash = ? WHERE seq = ?", updates)
    op.execute(_NO_UPDATE)


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS events_no_update")
    op.execute("DROP TRIGGER IF EXISTS events_no_delete")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("hash")
    op.execute(_NO_UPDATE)
    op.execute(_NO_DELETE)
