"""Differentially private linear models.

:class:`DPLinearRegression` (functional mechanism) needs only numpy. Estimators that
need torch (:class:`ExpMFlowRegressor`, :class:`ExpMFlowClassifier`, through
the layer-3 engine ``skdp.variational``) are imported lazily through ``__getattr__`` so that
``import skdp.linear_model`` never imports torch.
"""

from __future__ import annotations

from skdp.linear_model._functional import DPLinearRegression
from skdp.linear_model._logistic import DPLogisticRegression
from skdp.utils._lazy import lazy_attributes

# Public name -> private module, imported on first access (torch-using estimators go here).
_LAZY: dict[str, str] = {
    "ExpMFlowClassifier": "skdp.linear_model._expm_flow",
    "ExpMFlowRegressor": "skdp.linear_model._expm_flow",
}

__all__ = ["DPLinearRegression", "DPLogisticRegression", *_LAZY]

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)
