"""The shipped DuckDB queries (`ironbench query NAME.sql`); installed as `ironbench.shipped.queries`."""
