"""Suites written to the spec and outputs another harness wrote: complexity, imports, versions.

A canonical suite's cases carry a complexity (small, mid, large) in the invocation and
decision tables; runs imported from another harness's outputs tree or another store say so
(`imported`, `imported_from`), and an imported invocation lists the outcome fields its
recorded summary gives otherwise (`disagrees`); a run records how its target's version was
found. Rows written before this revision have none of these (null).

Revision ID: 0014_spec_import
Revises: 0013_checks
Create Date: 2026-12-10
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_spec_import"
down_revision = "0013_checks"
branch_labels = None
depends_on = None

INVOCATION_TABLES = ("invocations", "superseded_invocations", "surplus_invocations")
RUN_COLUMNS = ("ironclad_version_source", "imported", "imported_from")


def upgrade() -> None:
    for table in INVOCATION_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("complexity", sa.String, nullable=True))
            batch.add_column(sa.Column("disagrees", sa.String, nullable=True))
    with op.batch_alter_table("decisions") as batch:
        batch.add_column(sa.Column("complexity", sa.String, nullable=True))
    with op.batch_alter_table("runs") as batch:
        for column in RUN_COLUMNS:
            batch.add_column(sa.Column(column, sa.String, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        for column in RUN_COLUMNS:
            batch.drop_column(column)
    with op.batch_alter_table("decisions") as batch:
        batch.drop_column("complexity")
    for table in INVOCATION_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("disagrees")
            batch.drop_column("complexity")
