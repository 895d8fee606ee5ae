"""Plugin discovery: installed packages extend ironbench through entry points.

A plugin module registers on import, with the same functions the built-ins use:
register_target (group "ironbench.targets"), register_generator
("ironbench.generators") and register_scorer ("ironbench.scorers").
"""

from functools import cache


@cache
def load_plugins(group: str) -> None:
    from importlib.metadata import entry_points

    for entry in entry_points(group=group):
        entry.load()
