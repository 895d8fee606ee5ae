"""Gauntlet: multi-turn pressure scenarios against several chat engines, side by side."""

from ironbench.gauntlet.engines import Engine, build_engine
from ironbench.gauntlet.scoring import Score, get_scorer, register_scorer, scorer_names

__all__ = ["Engine", "Score", "build_engine", "get_scorer", "register_scorer", "scorer_names"]
