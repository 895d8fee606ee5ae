"""Statistics that decisions and comparisons carry as evidence: pure functions, exact where cheap."""

from ironbench.stats.exact import (
    ExactTest,
    exact_distribution_test,
    stratified_exact_test,
    stratified_p_regression_batch,
    stratified_permutation_test,
    stratified_permutation_tests,
)
from ironbench.stats.intervals import (
    Z95,
    Difference,
    chance_agreement,
    clopper_pearson_lower,
    clopper_pearson_upper,
    newcombe_difference,
    percentile,
    stratified_difference,
    wilson_interval,
)
from ironbench.stats.laws import binomial_pmf, hypergeometric_pmf, significant
from ironbench.stats.multiplicity import (
    NullLaw,
    fisher_null_law,
    holm_adjust,
    min_p_adjust,
    smallest_adjusted_p,
    smallest_adjusted_ps,
)
from ironbench.stats.power import (
    fisher_power,
    min_detectable_drop,
    normal_power,
    plan_runs,
    runs_needed,
    stratified_min_detectable_drop,
    stratified_power,
    stratified_power_method,
)
from ironbench.stats.sequential import confidence_thresholds

__all__ = [
    "Z95",
    "Difference",
    "ExactTest",
    "NullLaw",
    "binomial_pmf",
    "chance_agreement",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "confidence_thresholds",
    "exact_distribution_test",
    "fisher_null_law",
    "fisher_power",
    "holm_adjust",
    "hypergeometric_pmf",
    "min_detectable_drop",
    "min_p_adjust",
    "newcombe_difference",
    "normal_power",
    "percentile",
    "plan_runs",
    "runs_needed",
    "significant",
    "smallest_adjusted_p",
    "smallest_adjusted_ps",
    "stratified_difference",
    "stratified_exact_test",
    "stratified_min_detectable_drop",
    "stratified_p_regression_batch",
    "stratified_permutation_test",
    "stratified_permutation_tests",
    "stratified_power",
    "stratified_power_method",
    "wilson_interval",
]
