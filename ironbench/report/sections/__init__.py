"""The report's sections, one module each, in page order: imported, compare, outcomes,
baseline, adversarial, robustness, stress, gauntlet, survival. Each draws its part of the gathered data
(`ironbench.report.records`) as markup; `ironbench.report.page` places them."""
