"""Gauntlet: multi-turn pressure scenarios against several chat engines, side by side."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.gauntlet.engines import Engine, build_engine
from ironbench.gauntlet.scoring import Score, get_scorer, register_scorer, scorer_names

__all__ = ["Engine", "Score", "build_engine", "get_scorer", "register_scorer", "scorer_names"]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.gauntlet.engines import preflight_engines as preflight_engines
    from ironbench.gauntlet.rescore import rescore_run as rescore_run
    from ironbench.gauntlet.rounds import run_gauntlet as run_gauntlet

_EXPORTS = {
    "preflight_engines": "engines",
    "rescore_run": "rescore",
    "run_gauntlet": "rounds",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
