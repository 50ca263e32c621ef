"""Differentially private sampling of model parameters (layer 4, torch).

* :class:`DPFlowVI`: DP variational inference with a normalizing flow (DP-NF-VI), and
  :func:`gaussian_divergence` / :func:`gaussian_divergence_profile` (Su et al. 2023, §4.3).

The reverse-KL flow engine and the flow-sampled exponential mechanism (ExpM+NF) live in
:mod:`skdp.variational` (layer 3); their constrained transforms in :mod:`skdp.flows`.
"""

from skdp.sampling._flow_vi import (
    DPFlowVI,
    GaussianLocationLogLik,
    NonlinearRepeatedMeasuresLogLik,
    gaussian_divergence,
    gaussian_divergence_profile,
    paper_reg_dp_vi,
)

__all__ = [
    "DPFlowVI",
    "GaussianLocationLogLik",
    "NonlinearRepeatedMeasuresLogLik",
    "gaussian_divergence",
    "gaussian_divergence_profile",
    "paper_reg_dp_vi",
]
