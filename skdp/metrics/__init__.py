"""Differentially private model-evaluation metrics and scikit-learn scorers.

* :func:`dp_roc_auc_score`, :func:`dp_average_precision_score`: smooth-sensitivity
  mechanisms of Lantz (2016, ch. 7) / Boyd et al. (2015); pure DP with ``delta=0``.
* :func:`dp_accuracy_score`: Laplace mechanism on the number of correct predictions.
* :func:`dp_r2_score`, :func:`dp_mean_squared_error`, :func:`dp_mean_absolute_error`:
  Laplace mechanism on error sums over a declared target range ``bounds_y``.
* :func:`binormal_roc_curve`: a DP ROC curve from a DP AUC (post-processing).
* :func:`make_dp_scorer`: scorers for ``cross_val_score``, ``cross_validate`` and
  ``GridSearchCV``; :func:`cv_privacy_spend`: the total ``(epsilon, delta)`` of such a run.

Neighbouring relation of the scorers: replace one row, the number of rows public
(:ref:`neighbouring-relation`). numpy/scipy/scikit-learn only (no torch).

Synthetic-data utility metrics (Beaulieu-Jones et al. 2019; Torfi et al. 2022; non-private
evaluation helpers
that read real data, never part of a release): :func:`dimension_wise_statistics`,
:func:`dimension_wise_probability`, :func:`dimension_wise_prediction`,
:func:`correlation_distance`, :func:`correlation_similarity`,
:func:`maximum_mean_discrepancy`, :func:`marginal_total_variation`, :func:`tstr_score`.
"""

from skdp.metrics._accuracy import dp_accuracy_score
from skdp.metrics._cv_spend import cv_privacy_spend
from skdp.metrics._ranking import (
    binormal_roc_curve,
    dp_average_precision_score,
    dp_roc_auc_score,
)
from skdp.metrics._regression import (
    dp_mean_absolute_error,
    dp_mean_squared_error,
    dp_r2_score,
)
from skdp.metrics._scorer import DPScorer, make_dp_scorer
from skdp.metrics._utility import (
    correlation_distance,
    correlation_similarity,
    dimension_wise_prediction,
    dimension_wise_probability,
    dimension_wise_statistics,
    marginal_total_variation,
    maximum_mean_discrepancy,
    tstr_score,
)

__all__ = [
    "DPScorer",
    "binormal_roc_curve",
    "correlation_distance",
    "correlation_similarity",
    "cv_privacy_spend",
    "dimension_wise_prediction",
    "dimension_wise_probability",
    "dimension_wise_statistics",
    "dp_accuracy_score",
    "dp_average_precision_score",
    "dp_mean_absolute_error",
    "dp_mean_squared_error",
    "dp_r2_score",
    "dp_roc_auc_score",
    "make_dp_scorer",
    "marginal_total_variation",
    "maximum_mean_discrepancy",
    "tstr_score",
]
