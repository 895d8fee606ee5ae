"""The store's alembic revisions; installed as `ironbench.shipped.migrations`."""
