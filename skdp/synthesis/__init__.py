"""Differentially private synthetic data.

:class:`DPHistogramSynthesizer` and :class:`DPMarginalSynthesizer` need only
numpy/pandas. :class:`DPGANSynthesizer` (torch) and its :class:`CheckpointSelection`
are imported lazily through ``__getattr__``, so that ``import skdp.synthesis`` never
imports torch.
"""

from __future__ import annotations

from skdp.synthesis._histogram import DPHistogramSynthesizer, lei_n_bins
from skdp.synthesis._marginal import DPMarginalSynthesizer, marginal_n_bins
from skdp.utils._lazy import lazy_attributes

# Public name -> private module, imported on first access (torch-using estimators go here).
_LAZY: dict[str, str] = {
    "CheckpointSelection": "skdp.synthesis._gan",
    "DPGANSynthesizer": "skdp.synthesis._gan",
}

__all__ = [
    *_LAZY,
    "DPHistogramSynthesizer",
    "DPMarginalSynthesizer",
    "lei_n_bins",
    "marginal_n_bins",
]

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)
