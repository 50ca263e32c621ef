"""Additive noise: Laplace, Gaussian, two-sided geometric, smooth-sensitivity noise.

All samplers are vectorised numpy and take an explicit :class:`numpy.random.Generator`
(keyword ``rng``). Integer noise (:func:`two_sided_geometric`, :func:`add_geometric`)
is exact: it comes from the integer-arithmetic samplers of
:mod:`skdp.mechanisms._discrete` (Canonne, Kamath & Steinke 2020). The continuous
samplers (:func:`laplace_noise`, :func:`add_laplace`, :func:`add_gaussian`) use
floating point and are exposed to the attack of Mironov (2012) -- the set of doubles
``x + noise`` can produce depends on ``x`` -- except :func:`add_laplace` with
``secure_mode=True``, which releases exact multiples of a power-of-two grid with exact
integer noise (:func:`skdp.mechanisms._discrete.grid_laplace`) drawn from the OS's
cryptographically secure generator.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import log_ndtr, ndtr

from skdp.accounting._calibration import geometric_bisection
from skdp.mechanisms._discrete import (
    _n_draws,
    grid_laplace,
    quantize_floor,
    random_source,
    rational_floor,
    sample_discrete_laplace,
)
from skdp.mechanisms._validation import (
    check_epsilon,
    check_nonneg,
    check_positive,
    check_rng,
)
from skdp.utils._docstrings import insert_docs
from skdp.utils.validation import as_float_array, check_no_datetime

#: The largest Laplace scale whose draws stay finite: numpy's sampler returns at most
#: ``scale * log(2**52)`` (about 36.04 scales) in absolute value.
MAX_LAPLACE_SCALE = float(np.finfo(np.float64).max) / 37.0

_INT64 = np.iinfo(np.int64)

__all__ = [
    "add_gaussian",
    "add_geometric",
    "add_laplace",
    "gaussian_delta",
    "gaussian_sigma",
    "laplace_noise",
    "smooth_sensitivity_beta",
    "smooth_sensitivity_logpdf",
    "smooth_sensitivity_noise",
    "smooth_sensitivity_scale",
    "two_sided_geometric",
]


def _as_value(value):
    arr = as_float_array(value, name="value")  # no cell in the message
    if not np.all(np.isfinite(arr)):
        raise ValueError("value contains NaN or infinity")
    return arr


def _check_gamma(gamma):
    """The tail exponent of the smooth-sensitivity noise: a float ``> 1``."""
    gamma = check_positive(gamma, "gamma")
    if gamma <= 1.0:
        raise ValueError(f"gamma must be > 1, got {gamma}")
    return gamma


def _shaped(arr, like):
    """Return a Python float for scalar input, else an array."""
    return float(arr) if np.ndim(like) == 0 else arr


# --------------------------------------------------------------------------- Laplace
def laplace_noise(size, *, scale, rng):
    """Draw i.i.d. Laplace(0, ``scale``) noise.

    Parameters
    ----------
    size : int, tuple of int or None
        Output shape (``None``: one float).
    scale : float
        Scale ``b >= 0`` (density ``exp(-|z|/b) / (2b)``); ``0`` gives zeros. At most
        :data:`MAX_LAPLACE_SCALE` (about ``4.9e306``), beyond which a draw could
        overflow to ``inf``; a larger scale raises ``ValueError``.
    rng : numpy.random.Generator

    Returns
    -------
    float or ndarray of float
        The draws, of shape ``size`` (one float when ``size`` is ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import laplace_noise
    >>> laplace_noise(3, scale=1.0, rng=np.random.default_rng(0)).shape
    (3,)
    """
    check_rng(rng)
    scale = check_nonneg(scale, "scale")
    _n_draws(size)  # a bad or too large size: ValueError/TypeError naming size
    if scale > MAX_LAPLACE_SCALE:
        raise ValueError(
            f"scale must be at most {MAX_LAPLACE_SCALE:.3g}: a Laplace draw of a larger "
            "scale can overflow float64 to inf"
        )
    if scale == 0.0:
        return 0.0 if size is None else np.zeros(size)
    return rng.laplace(0.0, scale, size=size)


@insert_docs
def add_laplace(value, *, sensitivity, epsilon, rng=None, secure_mode=False):
    """Laplace mechanism: ``value + Laplace(sensitivity / epsilon)`` element-wise.

    ε-DP when ``sensitivity`` bounds the L1 change of ``value`` between neighbouring
    datasets (Dwork et al. 2006; Lantz 2016 Thm 2.5). The neighbouring relation is the
    one under which the caller computed ``sensitivity``. ``epsilon=inf`` returns the
    value unchanged (no privacy).

    Parameters
    ----------
    value : float or array-like
    sensitivity : float
        L1 sensitivity, ``>= 0``.
    epsilon : float
        ``> 0``.
    rng : numpy.random.Generator, optional
        Required unless ``secure_mode=True``.
    secure_mode : bool, default=False
        ``False``: floating-point Laplace noise (``rng.laplace``), reproducible with a
        seed but **not** safe against floating-point attacks (Mironov 2012): which
        doubles can be released depends on ``value``. ``True``: the floating-point-safe
        grid mechanism :func:`skdp.mechanisms._discrete.grid_laplace` -- ``value`` is
        rounded to a power-of-two grid ``Λ <= 2^-10 sensitivity / value.size``, exact
        integer discrete Laplace noise of scale ``(sensitivity / Λ + value.size) /
        epsilon`` grid steps is added, and the result (an exact multiple of ``Λ``) is
        released. Exactly ε-DP whatever the rounding; the noise scale is at most
        ``(1 + 2^-10) sensitivity / epsilon``. Randomness comes from ``os.urandom``.

    Returns
    -------
    float or ndarray of float, same shape as ``value``

    Notes
    -----
    With ``secure_mode=True`` ``epsilon`` is first rounded down to a 20-bit rational
    (relative change below ``2^-19``), which only adds noise.

    References
    ----------
    {refs_floating_point}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import add_laplace
    >>> out = add_laplace([1.0, 2.0], sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(0))
    >>> out.shape
    (2,)
    >>> safe = add_laplace(1.0, sensitivity=1.0, epsilon=1.0, secure_mode=True)
    >>> safe * 2**10 == round(safe * 2**10)  # an exact multiple of the grid
    True
    """
    if not secure_mode:
        check_rng(rng)
    sensitivity = check_nonneg(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    arr = _as_value(value)
    if math.isinf(epsilon) or sensitivity == 0.0:
        return _shaped(arr.copy(), value)
    if secure_mode:
        source = random_source(secure_mode=True)
        out, _ = grid_laplace(arr, sensitivity=sensitivity, epsilon=epsilon, source=source)
        return _shaped(out, value)
    scale = sensitivity / epsilon
    if not math.isfinite(scale):
        raise ValueError("sensitivity / epsilon overflows float64; use a larger epsilon")
    out = _representable(arr + rng.laplace(0.0, scale, size=arr.shape))
    return _shaped(out, value)


def _representable(out):
    """Clamp a noisy release to the finite float64 range: a value near the float limit
    plus noise would overflow to inf (post-processing of the release, data-independent)."""
    fmax = np.finfo(np.float64).max
    return np.clip(out, -fmax, fmax)


# -------------------------------------------------------------------------- Gaussian
def gaussian_delta(sigma, *, sensitivity, epsilon):
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``Δ`` is (ε, δ)-DP exactly for
    ``δ >= Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``; this function returns that value
    (computed in log space for the second term).

    Examples
    --------
    >>> from skdp.mechanisms import gaussian_delta
    >>> round(gaussian_delta(1.0, sensitivity=1.0, epsilon=1.0), 4)
    0.1269
    """
    sigma = check_positive(sigma, "sigma")
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_nonneg(epsilon, "epsilon")
    a = sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    val = ndtr(a) - math.exp(epsilon + log_ndtr(b))
    return max(float(val), 0.0)


def gaussian_sigma(*, sensitivity, epsilon, delta, analytic=True):
    """Noise standard deviation for the (ε, δ) Gaussian mechanism.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity ``Δ > 0``.
    epsilon : float
        ``> 0``; ``inf`` gives ``0.0``.
    delta : float
        In ``(0, 1)``.
    analytic : bool, default=True
        ``True``: the analytic calibration of Balle & Wang (2018): the smallest σ with
        :func:`gaussian_delta` ``<= delta``, found by bisection on ``log σ`` to relative
        precision 1e-12 and rounded up (the returned σ always satisfies the exact
        condition). Valid for every ε. ``False``: the classic
        ``sqrt(2 ln(1.25/δ)) Δ / ε`` (Dwork & Roth 2014, Thm A.1), which is only proven
        for ``ε < 1``; a ``ValueError`` is raised otherwise.

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.mechanisms import gaussian_sigma
    >>> s = gaussian_sigma(sensitivity=1.0, epsilon=1.0, delta=1e-5)
    >>> 3.7 < s < 3.8
    True
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"the Gaussian mechanism needs delta in (0, 1), got {delta}")
    if math.isinf(epsilon):
        return 0.0
    if not analytic:
        if epsilon >= 1.0:
            raise ValueError(
                "the classic Gaussian calibration is only valid for epsilon < 1; use analytic=True"
            )
        return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon

    def too_small(s):
        return gaussian_delta(s, sensitivity=sensitivity, epsilon=epsilon) > delta

    hi = sensitivity
    while too_small(hi):
        hi *= 2.0
    lo = hi / 2.0
    while not too_small(lo):
        hi = lo
        lo /= 2.0
        if lo < 1e-300:  # pragma: no cover - delta(σ) -> 1 as σ -> 0
            return hi
    return geometric_bisection(lambda s: not too_small(s), lo, hi, 1.0 + 1e-12)


def add_gaussian(value, *, sensitivity, epsilon, delta, rng, analytic=True):
    """Gaussian mechanism: ``value + N(0, σ²)`` element-wise, σ from :func:`gaussian_sigma`.

    (ε, δ)-DP when ``sensitivity`` bounds the L2 change of ``value`` between
    neighbouring datasets (the relation the caller used). Exact guarantee with the
    analytic calibration. ``epsilon=inf`` returns the value unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import add_gaussian
    >>> rng = np.random.default_rng(0)
    >>> add_gaussian(0.0, sensitivity=1.0, epsilon=1.0, delta=1e-5, rng=rng) != 0.0
    True
    """
    check_rng(rng)
    arr = _as_value(value)
    sigma = gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon, delta=delta, analytic=analytic)
    if sigma == 0.0:
        return _shaped(arr.copy(), value)
    if not math.isfinite(sigma):
        raise ValueError("the noise scale overflows float64; use a larger epsilon or delta")
    return _shaped(_representable(arr + rng.normal(0.0, sigma, size=arr.shape)), value)


# ------------------------------------------------------------------------- geometric
def two_sided_geometric(size, *, alpha, rng=None, secure_mode=False):
    """Two-sided geometric noise ``G(alpha)`` (Ghosh et al. 2009; Lantz 2016 eq. 2.4).

    Integer noise with pmf ``P(k) = ((1 - r) / (1 + r)) r^{|k|}``, ``r = exp(-alpha)``
    (the discrete Laplace law of scale ``1 / alpha``). ``alpha`` is the *inverse* scale:
    larger ``alpha`` means less noise; ``alpha = epsilon /
    sensitivity`` gives an ε-DP integer mechanism (Lantz 2016, Thm 6.1).
    ``alpha=inf`` gives zeros.

    Parameters
    ----------
    size : int, tuple of int or None
        ``None`` returns one Python ``int``.
    alpha : float or fractions.Fraction
        ``> 0``. A float is rounded **down** to a rational ``s/t`` with 20 significant
        bits (relative change below ``2^-19``; more noise, so still ε-DP); a
        ``Fraction`` is used exactly.
    rng : numpy.random.Generator, optional
        Required unless ``secure_mode=True``.
    secure_mode : bool, default=False
        Draw from ``os.urandom`` (cryptographically secure) instead of ``rng``.

    Returns
    -------
    int or ndarray of int64

    Notes
    -----
    Sampled **exactly**, in integer arithmetic only (Canonne, Kamath & Steinke 2020,
    Algorithms 1-2, via :func:`skdp.mechanisms.discrete_laplace_noise`'s sampler):
    ``integer + G`` takes every integer with exactly the stated probability, so the
    floating-point attack of Mironov (2012) has nothing to exploit. (Earlier versions
    differenced two ``rng.geometric`` draws, which uses floating point.)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import two_sided_geometric
    >>> two_sided_geometric(4, alpha=1.0, rng=np.random.default_rng(0)).dtype
    dtype('int64')
    """
    source = random_source(check_rng(rng) if not secure_mode else None, secure_mode=secure_mode)
    if isinstance(alpha, Fraction):
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {float(alpha)}")
    else:
        alpha = check_positive(alpha, "alpha", allow_inf=True)
        if math.isinf(alpha):
            return 0 if size is None else np.zeros(size, dtype=np.int64)
    a = rational_floor(alpha, "alpha")  # = s / t
    n = _n_draws(size)
    out = sample_discrete_laplace(source, n, a.numerator, a.denominator)
    if out.dtype == object:  # pragma: no cover - needs alpha below ~1e-17
        if max(abs(int(v)) for v in out) >= 2**63:
            raise ValueError("alpha is so small that the noise does not fit in int64")
        out = out.astype(np.int64)
    return int(out[0]) if size is None else out.reshape(size)


def add_geometric(value, *, sensitivity, epsilon, rng=None, secure_mode=False):
    """Geometric mechanism: integer ``value + G(epsilon / sensitivity)``.

    ε-DP for integer-valued queries whose L1 change between neighbours is at most
    ``sensitivity`` (Ghosh et al. 2009; Lantz 2016 Thm 6.1), under the relation the
    caller used to compute it. ``value`` must hold integers (floats with integral
    values are accepted) inside the int64 range; a value outside it raises
    ``ValueError`` (it was wrapped around to ``-2**63``). ``epsilon=inf`` returns the
    value unchanged. The noise is exact (:func:`two_sided_geometric`);
    ``epsilon / sensitivity`` is computed as an exact rational and rounded down to 20
    significant bits. ``secure_mode=True`` draws it from ``os.urandom`` (``rng`` is
    then not needed).

    Returns
    -------
    int or ndarray of int64, same shape as ``value``
        ``value + noise``, clamped to ``[-2**63, 2**63 - 1]`` where the exact sum leaves
        the int64 range (post-processing of the release: it reads nothing else).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import add_geometric
    >>> out = add_geometric([3, 5], sensitivity=1, epsilon=1.0, rng=np.random.default_rng(0))
    >>> out.dtype
    dtype('int64')
    """
    if not secure_mode:
        check_rng(rng)
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    check_no_datetime(value, name="value")
    arr = np.asarray(value)
    int64_range = "add_geometric needs integer values inside the int64 range [-2**63, 2**63)"
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError("add_geometric needs integer values")
        if np.any(np.abs(arr) >= 2.0**63):  # astype(int64) would wrap to -2**63
            raise ValueError(int64_range)
    elif arr.dtype.kind == "u":
        if arr.size and int(arr.max()) > _INT64.max:
            raise ValueError(int64_range)
    elif arr.dtype.kind not in "ib":
        raise ValueError(
            int64_range if arr.dtype == object else "add_geometric needs integer values"
        )
    arr = arr.astype(np.int64)
    if math.isinf(epsilon):
        return int(arr) if np.ndim(value) == 0 else arr
    alpha = quantize_floor(Fraction(epsilon) / Fraction(sensitivity))
    noise = np.asarray(
        two_sided_geometric(arr.shape, alpha=alpha, rng=rng, secure_mode=secure_mode),
        dtype=np.int64,
    )
    out = _saturating_add(arr, noise)
    return int(out) if np.ndim(value) == 0 else out


def _saturating_add(a, b):
    """``a + b`` for int64 arrays, clamped to the int64 range instead of wrapping around."""
    with np.errstate(over="ignore"):
        out = np.add(a, b, dtype=np.int64)
    over = (a > 0) & (b > 0) & (out < 0)
    under = (a < 0) & (b < 0) & (out >= 0)
    return np.where(over, _INT64.max, np.where(under, _INT64.min, out))


# ---------------------------------------------------------------- smooth sensitivity
def smooth_sensitivity_logpdf(z, *, gamma=2.0):
    """Log density of ``h(z) = c_γ / (1 + |z|^γ)``, ``c_γ = γ sin(π/γ) / (2π)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import smooth_sensitivity_logpdf
    >>> bool(np.isclose(smooth_sensitivity_logpdf(0.0), -np.log(np.pi)))
    True
    """
    gamma = _check_gamma(gamma)
    z = np.asarray(z, dtype=float)
    log_c = math.log(gamma * math.sin(math.pi / gamma) / (2.0 * math.pi))
    with np.errstate(divide="ignore"):
        out = log_c - np.logaddexp(0.0, gamma * np.log(np.abs(z)))
    return float(out) if out.ndim == 0 else out


def smooth_sensitivity_noise(size, *, gamma=2.0, rng):
    """Draw from the density ``h(z) ∝ 1 / (1 + |z|^γ)``, ``γ > 1`` (Nissim et al. 2007).

    Used with :func:`smooth_sensitivity_scale` for the smooth-sensitivity framework
    (Lantz 2016 Thm 7.4 part 1). ``γ = 2`` is the standard Cauchy law. For general
    ``γ`` the sampler is exact: ``|Z|^γ`` follows a beta-prime law
    ``B'(1/γ, 1 − 1/γ)``, i.e. ``|Z| = (X / Y)^{1/γ}`` with independent
    ``X ~ Gamma(1/γ)``, ``Y ~ Gamma(1 − 1/γ)``; the gamma variates are taken in log
    space (``log Gamma(a) = log Gamma(a + 1) + log(U) / a``) so that nothing
    underflows, and the sign is a fair coin.

    Parameters
    ----------
    size : int, tuple of int or None
    gamma : float, default=2.0
        Tail exponent, ``> 1``.
    rng : numpy.random.Generator

    Returns
    -------
    float or ndarray of float
        Symmetric draws with tails ``|z|^-gamma`` (one float when ``size`` is ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import smooth_sensitivity_noise
    >>> z = smooth_sensitivity_noise(5, gamma=3.0, rng=np.random.default_rng(0))
    >>> z.shape, bool(np.all(np.isfinite(z)))
    ((5,), True)
    """
    check_rng(rng)
    gamma = _check_gamma(gamma)
    _n_draws(size)  # a bad or too large size: ValueError/TypeError naming size
    if gamma == 2.0:
        return rng.standard_cauchy(size=size)
    a, b = 1.0 / gamma, 1.0 - 1.0 / gamma
    log_x = np.log(rng.standard_gamma(a + 1.0, size=size)) + np.log(rng.random(size=size)) / a
    log_y = np.log(rng.standard_gamma(b + 1.0, size=size)) + np.log(rng.random(size=size)) / b
    mag = np.exp((log_x - log_y) / gamma)
    sign = np.where(rng.random(size=size) < 0.5, -1.0, 1.0)
    out = sign * mag
    return float(out) if size is None else out


def smooth_sensitivity_scale(smooth_sensitivity, *, epsilon, gamma=2.0):
    """Noise scale ``2 (γ + 1) S / ε`` for :func:`smooth_sensitivity_noise`.

    ``f(D) + scale · η`` with η from :func:`smooth_sensitivity_noise` is ε-DP when
    ``S`` is a β-smooth upper bound on the local sensitivity with
    ``β <= smooth_sensitivity_beta(epsilon, gamma=gamma)`` (Nissim et al. 2007;
    Lantz 2016 Thm 7.4 part 1). With γ = 2: ``6 S / ε``.

    Examples
    --------
    >>> from skdp.mechanisms import smooth_sensitivity_scale
    >>> smooth_sensitivity_scale(1.0, epsilon=1.0)
    6.0
    """
    s = check_nonneg(smooth_sensitivity, "smooth_sensitivity")
    epsilon = check_epsilon(epsilon)
    gamma = _check_gamma(gamma)
    return 2.0 * (gamma + 1.0) * s / epsilon


def smooth_sensitivity_beta(epsilon, *, gamma=2.0):
    """Largest smoothing parameter ``β = ε / (2 (γ + 1))`` allowed by Thm 7.4 part 1.

    Examples
    --------
    >>> from skdp.mechanisms import smooth_sensitivity_beta
    >>> smooth_sensitivity_beta(6.0)
    1.0
    """
    epsilon = check_epsilon(epsilon)
    gamma = _check_gamma(gamma)
    return epsilon / (2.0 * (gamma + 1.0))
