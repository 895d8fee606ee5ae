"""Statistics that decisions and comparisons carry as evidence: pure functions, exact where cheap."""

from ironbench.stats.clustered import Clustered, clustered_mean, clustered_mean_t, clustered_ratio
from ironbench.stats.exact import (
    ExactTest,
    exact_distribution_test,
    stratified_exact_test,
    stratified_p_regression_batch,
    stratified_permutation_test,
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
from ironbench.stats.multiplicity import NullLaw, fisher_null_law, holm_adjust, min_p_adjust, smallest_adjusted_p
from ironbench.stats.passk import (
    PassK,
    StoppingRule,
    anytime_interval,
    estimate_pass_k,
    pass_at_k,
    pass_hat_k,
    rao_blackwell,
)
from ironbench.stats.power import (
    fisher_power,
    min_detectable_drop,
    plan_runs,
    runs_needed,
    stratified_min_detectable_drop,
    stratified_power,
)
from ironbench.stats.robustness import CaseRobustness, GeneratorRobustness
from ironbench.stats.sequential import confidence_thresholds
from ironbench.stats.survival import (
    LogRank,
    SurvivalCurve,
    first_violation,
    flips,
    kaplan_meier,
    recovered,
    stratified_logrank,
)

__all__ = [
    "Z95",
    "CaseRobustness",
    "Clustered",
    "Difference",
    "ExactTest",
    "GeneratorRobustness",
    "LogRank",
    "NullLaw",
    "PassK",
    "StoppingRule",
    "SurvivalCurve",
    "anytime_interval",
    "binomial_pmf",
    "chance_agreement",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "clustered_mean",
    "clustered_mean_t",
    "clustered_ratio",
    "confidence_thresholds",
    "estimate_pass_k",
    "exact_distribution_test",
    "first_violation",
    "fisher_null_law",
    "fisher_power",
    "flips",
    "holm_adjust",
    "hypergeometric_pmf",
    "kaplan_meier",
    "min_detectable_drop",
    "min_p_adjust",
    "newcombe_difference",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "plan_runs",
    "rao_blackwell",
    "recovered",
    "runs_needed",
    "significant",
    "smallest_adjusted_p",
    "stratified_difference",
    "stratified_exact_test",
    "stratified_logrank",
    "stratified_min_detectable_drop",
    "stratified_p_regression_batch",
    "stratified_permutation_test",
    "stratified_power",
    "wilson_interval",
]
