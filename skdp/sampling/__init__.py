"""Differentially private sampling of model parameters (layer 4, torch).

* :class:`DPFlowVI`: DP variational inference with a normalizing flow (DP-NF-VI). Its
  likelihood models are in :mod:`skdp.datasets` (:class:`skdp.datasets.GaussianLocationLogLik`,
  :class:`skdp.datasets.NonlinearRepeatedMeasuresLogLik`).

The reverse-KL flow engine and the flow-sampled exponential mechanism (ExpM+NF) live in
:mod:`skdp.variational` (layer 3); their constrained transforms in :mod:`skdp.flows`.
"""

from skdp.sampling._flow_vi import DPFlowVI

__all__ = ["DPFlowVI"]
