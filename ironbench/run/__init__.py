"""Running a suite: plan, schedule, invoke, decide, and record every fact as an event.

The coordinator (session.py) is the only writer and the only place decisions are taken;
planning, scheduling and stopping are pure functions of the suite and the outcomes.
"""

from ironbench.run.paths import RunPaths
from ironbench.run.preview import PreviewItem, preview
from ironbench.run.reporters import RedactingReporter, Reporter, SilentReporter
from ironbench.run.runner import resume_run, start_run
from ironbench.run.stopping import StopDecision

__all__ = [
    "PreviewItem",
    "RedactingReporter",
    "Reporter",
    "RunPaths",
    "SilentReporter",
    "StopDecision",
    "preview",
    "resume_run",
    "start_run",
]
