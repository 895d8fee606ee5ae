"""Statistics that decisions and comparisons carry as evidence: pure functions, exact where cheap."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.stats.clustered import Clustered, clustered_mean, clustered_mean_t, clustered_ratio
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
    normal_power,
    plan_runs,
    runs_needed,
    stratified_min_detectable_drop,
    stratified_power,
    stratified_power_method,
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
    "normal_power",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "plan_runs",
    "rao_blackwell",
    "recovered",
    "runs_needed",
    "significant",
    "smallest_adjusted_p",
    "smallest_adjusted_ps",
    "stratified_difference",
    "stratified_exact_test",
    "stratified_logrank",
    "stratified_min_detectable_drop",
    "stratified_p_regression_batch",
    "stratified_permutation_test",
    "stratified_permutation_tests",
    "stratified_power",
    "stratified_power_method",
    "wilson_interval",
]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.stats.bootstrap import RatioDifference as RatioDifference
    from ironbench.stats.bootstrap import ratio_difference as ratio_difference
    from ironbench.stats.bootstrap import ratio_interval as ratio_interval
    from ironbench.stats.power import MAX_RUNS as MAX_RUNS
    from ironbench.stats.power import RunsPlan as RunsPlan
    from ironbench.stats.regression_gate import GateDesign as GateDesign
    from ironbench.stats.regression_gate import design_gate as design_gate
    from ironbench.stats.regression_gate import look as look
    from ironbench.stats.survival import Stratum as Stratum

_EXPORTS = {
    "GateDesign": "regression_gate",
    "RatioDifference": "bootstrap",
    "ratio_difference": "bootstrap",
    "ratio_interval": "bootstrap",
    "MAX_RUNS": "power",
    "RunsPlan": "power",
    "Stratum": "survival",
    "design_gate": "regression_gate",
    "look": "regression_gate",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
