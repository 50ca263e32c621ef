"""Differentially private clustering.

:class:`SubsampledExpMedian`: k-median with the subsampled exponential mechanism
(Lantz 2016 ch. 8). numpy/scipy only. Non-private and data-agnostic baselines used by
``benchmarks/kmedian.py`` live in the private module ``skdp.cluster._baselines``.
"""

from __future__ import annotations

from skdp.cluster._kmedian import SubsampledExpMedian, kmedian_costs

__all__ = ["SubsampledExpMedian", "kmedian_costs"]
