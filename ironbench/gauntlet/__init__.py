"""Gauntlet: multi-turn pressure scenarios against several chat engines, side by side."""
