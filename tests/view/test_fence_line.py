"""The viewer's runs table says first when a run's targets ran below the full fence."""

from ironbench.view.pages import verdict_line
from ironbench.view.reader import Decided


def test_a_run_below_full_says_so_before_its_decisions():
    tallies = {"baseline": {"stable": 3}}
    assert verdict_line(Decided(tallies)) == "baseline: 3 stable"
    assert verdict_line(Decided(tallies, (), "partial")) == "fence below full: partial · baseline: 3 stable"
    assert verdict_line(Decided({}, (), "unfenced")) == "fence below full: unfenced"
