"""Text for terminals: tables fitted to the width, numbers as people write them, escaped controls.

The progress bar (console/progress.py) is imported by itself: it is the one part that needs rich.
"""

from ironbench.console.layout import render, terminal_width, wrap
from ironbench.console.numbers import number, percent, points
from ironbench.console.printable import printable

__all__ = ["number", "percent", "points", "printable", "render", "terminal_width", "wrap"]
