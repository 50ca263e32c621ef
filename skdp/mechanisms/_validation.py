"""Small argument checks shared by the mechanisms (private module)."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

__all__ = ["check_epsilon", "check_rng", "check_positive", "check_nonneg"]


# the smallest positive normal float: below it 1 / value is inf
_TINY = float(np.finfo(np.float64).tiny)


def _as_float(value, name):
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_epsilon(epsilon, name="epsilon"):
    """``epsilon > 0`` (``inf`` allowed: no privacy); return it as a float."""
    epsilon = _as_float(epsilon, name)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"{name} must be > 0 (math.inf for no privacy), got {epsilon}")
    if epsilon < _TINY:  # 1 / epsilon overflows: every noise scale would be inf
        raise ValueError(f"{name} must be at least {_TINY:g} (its reciprocal overflows)")
    return epsilon


def check_positive(value, name, *, allow_inf=False):
    """``0 < value < inf`` (or ``<= inf`` with ``allow_inf``); return it as a float."""
    value = _as_float(value, name)
    if math.isnan(value) or value <= 0 or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    if value < _TINY:  # a subnormal: its reciprocal (a noise scale) overflows
        raise ValueError(f"{name} must be at least {_TINY:g} (its reciprocal overflows)")
    return value


def check_nonneg(value, name):
    """``0 <= value < inf``; return it as a float."""
    value = _as_float(value, name)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def check_rng(rng):
    """``rng`` must be a :class:`numpy.random.Generator` (never a global random state)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (build one with "
            f"skdp.utils._random.make_rng), got {type(rng).__name__}"
        )
    return rng
