"""Infrastructure errors: an invocation whose backend failed is kept, but flagged.

Revision ID: 0005_infra_errors
Revises: 0004_gauntlet
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_infra_errors"
down_revision = "0004_gauntlet"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The line that matched an infrastructure-error rule ("Error connecting to
    # Ollama"), or NULL: such runs are evidence about the backend, not the target.
    with op.batch_alter_table("invocations") as batch:
        batch.add_column(sa.Column("infra_error", sa.String, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("invocations") as batch:
        batch.drop_column("infra_error")
