"""The console's line per decision says what that decision's runs support."""

import io

from rich.console import Console

from ironbench.console.progress import ProgressReporter, decision_line
from ironbench.core.outcome import Outcome
from ironbench.run.stopping import (
    Reference,
    baseline_decision,
    capability_boundary,
    reference_decision,
    stress_level_decision,
    variant_decision,
)

S, F = Outcome(True, None, 1, 0), Outcome(False, "generation", 0, 0)
V = Outcome(False, "validation", 4, 3)


def test_stable_states_the_bound_on_reproducing_its_outcome():
    line = decision_line("baseline/a", baseline_decision([S] * 3, 10))
    assert (
        line == "  baseline/a: stable after 3 runs, 3/3 succeeded; this outcome recurs with probability >= 0.37 "
        "(one-sided 95%)"
    )


def test_a_stress_level_states_its_success_bound_and_p_against_level_0():
    line = decision_line("stress/c/level_3", stress_level_decision([F] * 4, 5, 3, [S] * 5))
    assert (
        line == "  stress/c/level_3: systematic_failure after 4 runs, 0/4 succeeded; success rate <= 0.53 "
        "(one-sided 95%); p = 0.00794 against level 0"
    )
    level_0 = decision_line("stress/c/level_0", stress_level_decision([S] * 5, 5, 0))
    assert level_0.endswith("5/5 succeeded; success rate <= 1.00 (one-sided 95%)")


def test_a_variant_states_its_direction_and_p():
    structural = decision_line("adversarial/c/g/variant_0001", variant_decision([F, F, V, F], S.signature()))
    assert structural.endswith("structural after 4 runs, 0/4 succeeded; success lost against the baseline")
    unstable = Reference.of([S, S, F] * 3 + [S], stable=False)
    noise = variant_decision([F, S, F, S], unstable)
    assert decision_line("v", noise).endswith(f"; success lost against the baseline (p = {noise.p_value:.3g})")


def test_a_ladder_states_its_verdicts_reason():
    found = capability_boundary([(0, [S] * 5), (1, [S] * 3), (2, [F] * 3)]).decision
    line = decision_line("stress/c", found)
    assert line.startswith(
        "  stress/c: boundary: level 2 fails systematically and worse than level 0 "
        "(5/5 succeeded): p = 0.0179 <= 0.05/2"
    )
    assert line.endswith("; there, success rate <= 0.63 (one-sided 95%)")
    tentative = decision_line("stress/t", capability_boundary([(0, [S] * 3), (2, [F] * 3)]).decision)
    assert "tentative: level 2 fails systematically, but not significantly worse" in tentative
    assert "with 3 runs no outcome could be" in tentative


def test_other_decisions_keep_the_wilson_interval():
    assert decision_line("adversarial/c/baseline", reference_decision([S])).endswith("(Wilson 95% 0.21–1.00)")


def test_the_reporter_prints_one_line_per_decision_even_before_the_bar_starts():
    out = io.StringIO()
    reporter = ProgressReporter(Console(file=out, width=60, force_terminal=False))
    decision = stress_level_decision([F] * 4, 5, 3, [S] * 5)
    reporter.decision("stress/a_long_case_name/level_3", decision, 1)  # before started(): no bar yet
    lines = out.getvalue().splitlines()
    assert lines == [decision_line("stress/a_long_case_name/level_3", decision)]  # one line, never wrapped


def test_on_a_terminal_lines_fold_at_its_width_and_piped_they_stay_whole():
    decision = stress_level_decision([F] * 4, 5, 3, [S] * 5)
    note = "  c adversarial/c/ai_rewrite/variant_0001 attempt 2: rejected (length outside ±200% of the base)"
    terminal = io.StringIO()
    reporter = ProgressReporter(Console(file=terminal, width=60, force_terminal=True, color_system=None))
    reporter.decision("stress/a_long_case_name/level_3", decision, 1)
    reporter.note(note)
    lines = terminal.getvalue().splitlines()
    assert len(lines) > 2 and max(len(line) for line in lines) <= 60
    piped = io.StringIO()
    reporter = ProgressReporter(Console(file=piped, width=60, force_terminal=False))
    reporter.note(note)
    assert piped.getvalue().splitlines() == [note]
