"""Differentially private model-evaluation metrics and scikit-learn scorers.

* :func:`dp_roc_auc_score`, :func:`dp_average_precision_score`: smooth-sensitivity
  mechanisms of Lantz (2016, ch. 7) / Boyd et al. (2015); pure DP with ``delta=0``.
* :func:`dp_accuracy_score`: Laplace mechanism on the number of correct predictions.
* :func:`binormal_roc_curve`: a DP ROC curve from a DP AUC (post-processing).
* :func:`make_dp_scorer`: scorers for ``cross_val_score``, ``cross_validate`` and
  ``GridSearchCV``; :func:`cv_privacy_spend`: the total ``(epsilon, delta)`` of such a run.

Neighbouring relation of the scorers: replace one row, the number of rows public (spec
README §2 row 6). numpy/scipy/scikit-learn only (no torch).
"""

from skdp.metrics._ranking import (
    binormal_roc_curve,
    dp_accuracy_score,
    dp_average_precision_score,
    dp_roc_auc_score,
)
from skdp.metrics._scorer import DPScorer, cv_privacy_spend, make_dp_scorer

__all__ = [
    "DPScorer",
    "binormal_roc_curve",
    "cv_privacy_spend",
    "dp_accuracy_score",
    "dp_average_precision_score",
    "dp_roc_auc_score",
    "make_dp_scorer",
]
