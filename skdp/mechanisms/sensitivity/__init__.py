"""Sensitivity formulas, each written once.

Every function states the neighbouring relation it assumes and cites its source, and
has a brute-force test in ``tests/mechanisms/`` that enumerates neighbouring datasets
on a small domain and checks the bound (and its tightness where it is stated tight).

The formulas live in private modules by theme -- ``_scores`` (ROC AUC and average
precision: local and smooth sensitivities), ``_generic`` (counts, bounded sums and
means, quantile utilities, the group-level scaling), ``_regression`` (the sums behind
the DP regression metrics) and ``_estimators`` (the estimators' own queries) -- and are
public here only. Add a new formula to the module of its theme and list it below.
"""

from __future__ import annotations

from skdp.mechanisms.sensitivity._estimators import (
    clipped_histogram_sensitivity,
    expm_squared_loss_sensitivity,
    functional_mechanism_sensitivity,
    gram_min_eigenvalue_sensitivity,
    histogram_sensitivity,
    ilp_epsilon_lower_bound,
    ilp_query_alpha,
    kmedian_cost_sensitivity,
    sufficient_statistics_sensitivity,
    target_moments_sensitivity,
)
from skdp.mechanisms.sensitivity._generic import (
    bounded_mean_sensitivity,
    bounded_sum_sensitivity,
    count_sensitivity,
    group_sensitivity,
    quantile_utility_sensitivity,
)
from skdp.mechanisms.sensitivity._regression import regression_sum_sensitivities
from skdp.mechanisms.sensitivity._scores import (
    ap_group_local_sensitivity,
    ap_local_sensitivity,
    ap_smooth_sensitivity,
    auc_group_local_sensitivity,
    auc_local_sensitivity,
    auc_smooth_sensitivity,
    count_smooth_sensitivity,
    group_count_smooth_sensitivity,
)

__all__ = [
    "ap_group_local_sensitivity",
    "ap_local_sensitivity",
    "ap_smooth_sensitivity",
    "auc_group_local_sensitivity",
    "auc_local_sensitivity",
    "auc_smooth_sensitivity",
    "bounded_mean_sensitivity",
    "bounded_sum_sensitivity",
    "clipped_histogram_sensitivity",
    "count_sensitivity",
    "count_smooth_sensitivity",
    "expm_squared_loss_sensitivity",
    "functional_mechanism_sensitivity",
    "gram_min_eigenvalue_sensitivity",
    "group_count_smooth_sensitivity",
    "group_sensitivity",
    "histogram_sensitivity",
    "ilp_epsilon_lower_bound",
    "ilp_query_alpha",
    "kmedian_cost_sensitivity",
    "quantile_utility_sensitivity",
    "regression_sum_sensitivities",
    "sufficient_statistics_sensitivity",
    "target_moments_sensitivity",
]

# Documented (and pickled) under their public path, as if defined here.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
