"""The data ironbench ships: in a built wheel, the repository's top-level `migrations/`,
`queries/`, `suites/` and `examples/` are installed here as `ironbench.shipped.<folder>`.

The folders stay at the repository's top level (pyproject.toml maps them into this
package with `package-dir`; an editable install maps them through setuptools' finder),
and code reaches them through `ironbench.core.shipped`, never through a path relative
to the source tree.
"""
