"""Differentially private linear models.

:class:`DPLinearRegression` (functional mechanism) needs only numpy. Estimators that
need torch (:class:`ExpMFlowRegressor`, :class:`ExpMFlowClassifier`, through
the layer-3 engine ``skdp.variational``) are imported lazily through ``__getattr__`` so that
``import skdp.linear_model`` never imports torch.
"""

from __future__ import annotations

import importlib

from skdp.linear_model._functional import DPLinearRegression
from skdp.linear_model._logistic import DPLogisticRegression

__all__ = [
    "DPLinearRegression",
    "DPLogisticRegression",
    "ExpMFlowClassifier",
    "ExpMFlowRegressor",
]

# Public name -> private module, imported on first access (torch-using estimators go here).
_LAZY: dict[str, str] = {
    "ExpMFlowClassifier": "skdp.linear_model._expm_flow",
    "ExpMFlowRegressor": "skdp.linear_model._expm_flow",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
