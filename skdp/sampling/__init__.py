"""Reverse-KL flow samplers over model parameters (layer 4, torch).

* :func:`build_sampling_flow`, :func:`fit_reverse_kl`, :func:`importance_diagnostics`: fit a
  normalizing flow (:mod:`skdp.flows`) to an unnormalised log-density and measure the fit.
* :class:`ExpMLinearTarget`, :func:`fit_expm_flow`: the exponential mechanism over the
  parameters of a bounded-output (sigmoid) linear model, sampled by such a flow (ExpM+NF). The
  estimators built on it are :class:`skdp.linear_model.ExpMFlowClassifier` and
  :class:`skdp.linear_model.ExpMFlowRegressor`.
* :class:`DPFlowVI`: DP variational inference with a normalizing flow (DP-NF-VI), and
  :func:`gaussian_divergence` / :func:`gaussian_divergence_profile` (Su et al. 2023, §4.3).
"""

from skdp.sampling._expm import (
    MIN_ESS_FRACTION,
    ExpMLinearTarget,
    draw_from_flow,
    expm_diagnostics,
    fit_expm_flow,
    sample_expm_linear,
)
from skdp.sampling._flow_vi import (
    DPFlowVI,
    GaussianLocationLogLik,
    NonlinearRepeatedMeasuresLogLik,
    gaussian_divergence,
    gaussian_divergence_profile,
    paper_reg_dp_vi,
)
from skdp.sampling._reverse_kl import build_sampling_flow, fit_reverse_kl, importance_diagnostics
from skdp.sampling._transforms import BoxSigmoid, CholeskyAffine

__all__ = [
    "DPFlowVI",
    "GaussianLocationLogLik",
    "NonlinearRepeatedMeasuresLogLik",
    "gaussian_divergence",
    "gaussian_divergence_profile",
    "paper_reg_dp_vi",
    "MIN_ESS_FRACTION",
    "BoxSigmoid",
    "CholeskyAffine",
    "ExpMLinearTarget",
    "build_sampling_flow",
    "draw_from_flow",
    "expm_diagnostics",
    "fit_expm_flow",
    "fit_reverse_kl",
    "importance_diagnostics",
    "sample_expm_linear",
]
