"""Model selection with DP scorers, data-independent folds and one stated total.

:func:`dp_cross_validate` and :class:`DPGridSearchCV` cross-validate skdp DP estimators
(or pipelines of DP steps) with the DP scorers of :mod:`skdp.metrics`, on folds that do
not depend on the data, and report the total privacy spend of the whole run -- every
fit, every scorer call, the refit -- under one neighbouring relation (replace one row),
computed by :func:`skdp.metrics.cv_privacy_spend` and charged once to a
:class:`~skdp.accounting.PrivacyLedger`. Layer 5: imports estimator packages, is
imported by none.
"""

from __future__ import annotations

from skdp.model_selection._cross_validate import dp_cross_validate
from skdp.model_selection._private import PrivateSelection
from skdp.model_selection._search import DPGridSearchCV

__all__ = ["DPGridSearchCV", "PrivateSelection", "dp_cross_validate"]
