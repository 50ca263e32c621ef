"""Variational samplers: fit a normalizing flow to an unnormalised log-density (layer 3, torch).

The engine beside :mod:`skdp.training`: generic reverse-KL fitting of a :mod:`skdp.flows` flow,
and the exponential-mechanism target sampled that way (ExpM+NF; Bridges, Tombs & Stanley 2023).

* :func:`build_sampling_flow`, :func:`fit_reverse_kl`, :func:`importance_diagnostics`: fit a
  flow to ``p ∝ exp(log_density)`` by reverse KL and measure the fit by importance weights.
* :class:`ExpMLinearTarget`, :func:`fit_expm_flow`, :func:`sample_expm_linear`,
  :func:`expm_diagnostics`, :func:`draw_from_flow`: the exponential mechanism over the
  parameters of a bounded-output (sigmoid) linear model, sampled by such a flow. The
  estimators built on it are :class:`skdp.linear_model.ExpMFlowClassifier` and
  :class:`skdp.linear_model.ExpMFlowRegressor`.

Not an estimator package: it takes arrays and tensors, and has no scikit-learn API.
"""

from skdp.variational._expm import (
    MIN_ESS_FRACTION,
    SANDWICH_SLACK,
    ExpMLinearTarget,
    draw_from_flow,
    expm_diagnostics,
    fit_expm_flow,
    sample_expm_linear,
)
from skdp.variational._reverse_kl import (
    build_sampling_flow,
    fit_reverse_kl,
    importance_diagnostics,
)

__all__ = [
    "MIN_ESS_FRACTION",
    "SANDWICH_SLACK",
    "ExpMLinearTarget",
    "build_sampling_flow",
    "draw_from_flow",
    "expm_diagnostics",
    "fit_expm_flow",
    "fit_reverse_kl",
    "importance_diagnostics",
    "sample_expm_linear",
]
