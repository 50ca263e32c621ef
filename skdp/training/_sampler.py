"""Poisson sampling of the records of one DP-SGD step."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["PoissonSampler"]


class PoissonSampler:
    """Poisson subsampling: each record joins a batch independently with probability ``q``.

    The privacy amplification analysed by Mironov, Talwar & Zhang (2019) and used by every
    accountant of :mod:`skdp.accounting` assumes this sampler (not a fixed-size shuffle). An
    empty batch is a legal draw. The realised batch size is private (it tells whether a
    record was sampled); only the expected size ``q n`` may be used as a divisor.

    Parameters
    ----------
    n_samples : int
        Public number of records ``n``.
    sample_rate : float
        ``q`` in (0, 1].
    rng : numpy.random.Generator
        The ``sampling`` stream; nothing else draws from it.

    Attributes
    ----------
    expected_batch_size : float
        ``q n`` (public).
    """

    def __init__(self, n_samples: int, sample_rate: float, rng: np.random.Generator):
        if isinstance(n_samples, bool) or not (
            isinstance(n_samples, numbers.Integral) and n_samples >= 1
        ):
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        if not (0.0 < float(sample_rate) <= 1.0):
            raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator")
        self.n_samples = int(n_samples)
        self.sample_rate = float(sample_rate)
        self.expected_batch_size = self.sample_rate * self.n_samples
        self._rng = rng

    def sample(self) -> np.ndarray:
        """Indices of one Poisson batch (sorted; possibly empty)."""
        mask = self._rng.random(self.n_samples) < self.sample_rate
        return np.flatnonzero(mask)
