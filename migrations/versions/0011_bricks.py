"""Bricks: the sha256 of the file a successful run saved, per invocation.

Successful runs that converge in outcome may still write different code: the digest (never
a copy) tells how many distinct bricks a case's runs produced. Invocations recorded by an
ironbench older than this revision have none (their events do not carry it).

Revision ID: 0011_bricks
Revises: 0010_leases
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_bricks"
down_revision = "0010_leases"
branch_labels = None
depends_on = None

TABLES = ("invocations", "superseded_invocations", "surplus_invocations")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("brick_sha256", sa.String, nullable=True))


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("brick_sha256")
