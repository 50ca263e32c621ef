"""Exact integer noise: Bernoulli(exp(-γ)), discrete Laplace, discrete Gaussian.

Floating-point Laplace noise leaks (Mironov 2012): the set of doubles ``x + Lap(b)`` can
produce depends on ``x``, so some outputs from a true count of 10 cannot come from 11.
The samplers here follow Canonne, Kamath & Steinke (2020), Algorithms 1-3, and use
**integer arithmetic only**: uniform integers (from 64-bit random words, by rejection),
integer products, floor divisions and comparisons. No ``exp``, ``log`` or float
uniform enters a sampling path, so every output has exactly the stated law (given
uniform random words).

* :func:`bernoulli_exp` -- Bernoulli(exp(-γ)) for rational ``γ >= 0`` (Algorithm 1);
* :func:`sample_geometric` -- ``P(k) = (1 - r) r^k`` on ``{0, 1, ...}``,
  ``r = exp(-s/t)`` (first half of Algorithm 2);
* :func:`sample_discrete_laplace` -- ``P(k) ∝ exp(-|k| s/t)`` on the integers
  (Algorithm 2);
* :func:`sample_discrete_gaussian` -- ``P(k) ∝ exp(-k² / (2σ²))``, ``σ² = a/b``
  (Algorithm 3, rejection from a discrete Laplace of scale ``floor(σ) + 1``).

Everything is vectorised with masks over the still-active indices of the rejection
loops. Values that could overflow int64 (the discrete Gaussian's exponent
``(|y| b t - a)²``, products ``den * k`` in Algorithm 1, huge scales) are computed with
Python integers (numpy object arrays) instead; nothing wraps around.

Parameters arrive as floats: :func:`rational_floor` / :func:`rational_ceil` turn a
float into a dyadic rational with 20 significant bits, rounding in the direction that
**adds** noise (``epsilon`` and the inverse scale ``alpha`` down, a scale or ``σ²`` up):
the mechanism is then ``ε'``-DP with ``ε' <= ε`` (relative loss below ``2^-19``), which
implies ``ε``-DP. Exact :class:`fractions.Fraction` or int parameters are used as given.

Randomness comes from a :class:`RandomSource`: :class:`GeneratorSource` wraps a
:class:`numpy.random.Generator` (reproducible with a seed); :class:`SecureSource` reads
``os.urandom`` (the operating system's cryptographically secure generator, what
:mod:`secrets` uses) and is what ``secure_mode=True`` selects.

This module holds the parameter rounding, the grid mechanism and the noise front ends;
the random sources (``_random_sources``) and the samplers (``_exact_samplers``) are
re-exported from it.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential Privacy."
NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.

I. Mironov. "On Significance of the Least Significant Bits for Differential Privacy."
ACM CCS 2012.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from skdp.mechanisms._exact_samplers import (
    bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    sample_geometric,
)
from skdp.mechanisms._random_sources import (
    GeneratorSource,
    RandomSource,
    SecureSource,
    _absmax,
    _add,
    _ints,
    random_source,
    uniform_below,
    uniform_subset,
)
from skdp.utils._docstrings import insert_docs

__all__ = [
    "GeneratorSource",
    "RandomSource",
    "SecureSource",
    "bernoulli_exp",
    "discrete_gaussian_noise",
    "discrete_laplace_noise",
    "grid_laplace",
    "quantize_floor",
    "random_source",
    "rational_ceil",
    "rational_floor",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "sample_geometric",
    "uniform_below",
    "uniform_subset",
]

#: significant bits kept when a float parameter is turned into a rational
PRECISION_BITS = 20


# ----------------------------------------------------------------- rational parameters
def _as_fraction(x, name):
    if isinstance(x, bool):
        raise TypeError(f"{name} must be a real number")
    if isinstance(x, Fraction):
        f = x
    elif isinstance(x, Integral | np.integer):
        f = Fraction(int(x))
    elif isinstance(x, Real | np.floating):
        x = float(x)
        if not math.isfinite(x):
            raise ValueError(f"{name} must be finite, got {x}")
        f = Fraction(x)
    else:
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    if f <= 0:
        raise ValueError(f"{name} must be > 0, got {float(f)}")
    return f


def _quantize(f, up):
    """``f`` rounded to ``PRECISION_BITS`` significant bits, down or up (exact)."""
    e = f.numerator.bit_length() - f.denominator.bit_length()  # 2^e <= f < 2^(e+2)
    if f < Fraction(2) ** e:
        e -= 1
    while f >= Fraction(2) ** (e + 1):
        e += 1
    k = PRECISION_BITS - 1 - e  # f * 2^k in [2^(P-1), 2^P)
    scaled = f * Fraction(2) ** k
    p = math.ceil(scaled) if up else math.floor(scaled)
    return Fraction(p) / Fraction(2) ** k


def rational_floor(x, name="value"):
    """A rational ``<= x`` with ``PRECISION_BITS`` significant bits (floats), or ``x``.

    A ``Fraction`` or int is returned exactly. A float is rounded **down** to a dyadic
    rational ``p / 2^k`` with ``2^19 <= p < 2^20`` (relative error below ``2^-19``);
    floats that already have at most 20 significant bits (1.0, 0.5, 0.75, ...) are
    unchanged. Used for ``epsilon`` and inverse scales: rounding down adds noise.
    """
    f = _as_fraction(x, name)
    return f if not isinstance(x, float | np.floating) else _quantize(f, up=False)


def quantize_floor(f):
    """An exact positive ``Fraction`` rounded **down** to 20 significant bits."""
    return _quantize(_as_fraction(f, "value"), up=False)


def rational_ceil(x, name="value"):
    """As :func:`rational_floor`, rounding **up** (scales and variances)."""
    f = _as_fraction(x, name)
    return f if not isinstance(x, float | np.floating) else _quantize(f, up=True)


# ------------------------------------------------------- floating-point-safe Laplace
#: a continuous value is rounded to a power-of-two grid at most 2^-GRID_BITS * Δ / d
GRID_BITS = 10


def grid_laplace(value, *, sensitivity, epsilon, source):
    """Laplace-like mechanism that is safe in floating point (discrete Laplace on a grid).

    ``Λ`` is the largest power of two with ``d Λ <= 2^-10 Δ`` (``d`` = number of
    elements). Each element is rounded to the grid, ``n_i = rint(x_i / Λ)`` (exact:
    dividing by a power of two and rounding are exact in IEEE arithmetic), integer
    noise ``Z_i`` of the discrete Laplace law with ``P(z) ∝ exp(-ε' |z| / D)`` is added,
    ``D = floor(Δ / Λ) + d``, and ``Λ (n_i + Z_i)`` is released.

    Returns
    -------
    ndarray of float
        Exact multiples of ``Λ``, same shape as ``value``.
    tuple
        ``(Λ, D, ε')``.

    Notes
    -----
    If ``Δ`` bounds the L1 change of ``x`` between neighbours, rounding changes each
    coordinate by at most 1/2 on each side, so the integer vector ``n`` changes by at
    most ``Δ/Λ + d`` in L1, hence by at most ``D``. The discrete Laplace mechanism with
    ``P(z) ∝ exp(-ε'|z|/D)`` is then exactly ``ε'``-DP for ``n`` (``ε' <= ε``, the
    20-bit rational rounding of ``ε``), and the release is a deterministic function of
    ``n + Z``: post-processing, whatever the floating-point rounding of that final
    product. The noise scale is ``D Λ / ε' <= Δ (1 + 2^-10) / ε'``. This is the
    "discrete Laplace on a grid" variant of Mironov's (2012) snapping mechanism; unlike
    snapping it needs no clamping and no float ``log``.
    """
    arr = np.asarray(value, dtype=float)
    d = max(arr.size, 1)
    delta = _as_fraction(sensitivity, "sensitivity")
    eps = rational_floor(epsilon, "epsilon")
    exponent = math.frexp(float(delta) / d)[1] - 1 - GRID_BITS  # 2^exponent <= Δ/d * 2^-10
    if exponent < -1000:
        raise ValueError("sensitivity too small for the floating-point-safe grid")
    lam = Fraction(2) ** exponent
    grid = math.ldexp(1.0, exponent)
    scaled = arr / grid
    if not np.all(np.isfinite(scaled)):
        raise ValueError("value too large for the floating-point-safe grid")
    n_float = np.rint(scaled).ravel()
    if n_float.size and np.abs(n_float).max() < 2.0**62:
        n_int = n_float.astype(np.int64)
    else:
        n_int = _ints(np.array([int(v) for v in n_float], dtype=object))
    big_d = math.floor(delta / lam) + d
    alpha = eps / big_d  # inverse scale in grid units: s/t
    z = sample_discrete_laplace(source, n_float.size, alpha.numerator, alpha.denominator)
    total = _add(n_int, z)
    out = np.asarray(total, dtype=float) * grid
    return out.reshape(arr.shape), (grid, big_d, eps)


# --------------------------------------------------------------------- public samplers
def _n_draws(size):
    """The number of draws of an output of shape ``size``; a bad ``size`` (not an int or
    tuple of non-negative ints, or an output too large to allocate) is a ``ValueError``
    naming ``size``, not a numpy error or a ``MemoryError``."""
    if size is None:
        return 1
    from skdp.utils.validation import check_n_samples

    dims = (size,) if isinstance(size, int | np.integer) else size
    try:
        dims = tuple(dims)
    except TypeError:
        raise TypeError(
            f"size must be an int or a tuple of ints, got {type(size).__name__}"
        ) from None
    n = 1
    for d in dims:
        n *= check_n_samples(d, name="size")
    return check_n_samples(n, name="size")


def _shaped_ints(values, size):
    """A Python int for ``size=None``, else an int64 array of shape ``size``."""
    if values.dtype == object:
        if _absmax(values) >= 2**63:
            raise ValueError("scale is so large that the noise does not fit in int64")
        values = values.astype(np.int64)
    if size is None:
        return int(values[0])
    return values.reshape(size)


def _check_scale(value, name):
    if isinstance(value, Fraction):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {float(value)}")
        return value
    if isinstance(value, bool) or not isinstance(value, Real | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not math.isfinite(float(value)) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {float(value)}")
    return value


@insert_docs
def discrete_laplace_noise(size, *, scale, rng=None, secure_mode=False):
    """Exact discrete Laplace noise: ``P(k) ∝ exp(-|k| / scale)`` on the integers.

    Sampled with integer arithmetic only (Canonne, Kamath & Steinke 2020, Algorithm 2):
    no floating-point value enters the sampling path, so ``x + noise`` for an integer
    ``x`` takes every integer value with exactly the stated probability (immune to the
    floating-point attack of Mironov 2012). This is the two-sided geometric law
    :func:`two_sided_geometric` with ``alpha = 1 / scale``.

    Parameters
    ----------
    size : int, tuple of int or None
        Output shape (``None``: one Python ``int``).
    scale : float or fractions.Fraction
        ``>= 0``; ``0`` gives zeros. A float is rounded **up** to a rational with 20
        significant bits (more noise); a ``Fraction`` is used exactly.
    rng : numpy.random.Generator, optional
        Source of randomness (reproducible with a seed). Required unless
        ``secure_mode=True``.
    secure_mode : bool, default=False
        Draw from the operating system's cryptographically secure generator
        (``os.urandom``) instead of ``rng``.

    Returns
    -------
    int or ndarray of int64

    Notes
    -----
    **Privacy.** For an integer query of L1 sensitivity ``Δ``, adding independent
    noise with ``scale >= Δ / ε`` to each coordinate is exactly ε-DP (Ghosh et al.
    2009; Canonne, Kamath & Steinke 2020): the pmf ratio of neighbouring outputs is
    ``exp(|k - k'| / scale) <= e^ε``. The rejection loops are vectorised with masks
    over the still-active draws; products that could overflow int64 use Python
    integers. Running time is random (it depends on the noise drawn, not on the data).

    References
    ----------
    {ref_canonne2020}

    {ref_mironov2012}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import discrete_laplace_noise
    >>> z = discrete_laplace_noise(5, scale=2.0, rng=np.random.default_rng(0))
    >>> z.dtype, z.shape
    (dtype('int64'), (5,))
    >>> isinstance(discrete_laplace_noise(None, scale=1.0, secure_mode=True), int)
    True
    """
    source = random_source(rng, secure_mode=secure_mode)
    scale = _check_scale(scale, "scale")
    n = _n_draws(size)
    if scale == 0:
        return 0 if size is None else np.zeros(size, dtype=np.int64)
    sc = rational_ceil(scale, "scale")  # = t / s
    values = sample_discrete_laplace(source, n, sc.denominator, sc.numerator)
    return _shaped_ints(values, size)


@insert_docs
def discrete_gaussian_noise(size, *, sigma, rng=None, secure_mode=False):
    """Exact discrete Gaussian noise: ``P(k) ∝ exp(-k² / (2 σ²))`` on the integers.

    Canonne, Kamath & Steinke (2020), Algorithm 3: rejection sampling from a discrete
    Laplace of scale ``floor(σ) + 1``, with an acceptance probability
    ``exp(-(|y| - σ²/t)² / (2σ²))`` evaluated exactly as a Bernoulli of a rational
    exponent (integer arithmetic; Python integers where int64 would overflow).

    Parameters
    ----------
    size : int, tuple of int or None
        Output shape (``None``: one Python ``int``).
    sigma : float or fractions.Fraction
        ``>= 0``; ``0`` gives zeros. ``σ²`` is rounded **up** to a rational with 20
        significant bits (a ``Fraction`` σ gives an exact ``σ²``).
    rng : numpy.random.Generator, optional
        Required unless ``secure_mode=True``.
    secure_mode : bool, default=False
        Draw from ``os.urandom`` instead of ``rng``.

    Returns
    -------
    int or ndarray of int64

    Notes
    -----
    **Privacy.** Adding discrete Gaussian noise to an integer vector query of L2
    sensitivity ``Δ`` satisfies ``Δ² / (2σ²)``-zCDP (Canonne, Kamath & Steinke 2020,
    Thm 4), hence ``(ε, δ)``-DP for the values given there; the sampler is exact, so
    these guarantees hold in floating point too. The law's variance is slightly below
    ``σ²``.

    References
    ----------
    {ref_canonne2020}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import discrete_gaussian_noise
    >>> z = discrete_gaussian_noise(1000, sigma=3.0, rng=np.random.default_rng(0))
    >>> z.dtype, bool(2.5 < z.std() < 3.5)
    (dtype('int64'), True)
    """
    source = random_source(rng, secure_mode=secure_mode)
    sigma = _check_scale(sigma, "sigma")
    n = _n_draws(size)
    if sigma == 0:
        return 0 if size is None else np.zeros(size, dtype=np.int64)
    if isinstance(sigma, Fraction):
        var = sigma * sigma
    else:
        var = _quantize(_as_fraction(sigma, "sigma") ** 2, up=True)
    values = sample_discrete_gaussian(source, n, var.numerator, var.denominator)
    return _shaped_ints(values, size)
