"""Differentially private density estimators (layer L4): :class:`DPFlowDensity`."""

from skdp.density._flow_density import DPFlowDensity

__all__ = ["DPFlowDensity"]
