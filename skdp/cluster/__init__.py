"""Differentially private clustering.

:class:`SubsampledExpMedian`: k-median with the subsampled exponential mechanism
(Lantz 2016 ch. 8). numpy/scipy only. The non-private and data-agnostic baselines it is
compared with are benchmark code (``benchmarks/_kmedian_baselines.py``), not part of skdp.
"""

from __future__ import annotations

from skdp.cluster._kmedian import SubsampledExpMedian, kmedian_costs

__all__ = ["SubsampledExpMedian", "kmedian_costs"]
