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

References
----------
C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential Privacy."
NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.

I. Mironov. "On Significance of the Least Significant Bits for Differential Privacy."
ACM CCS 2012.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

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
#: int64 fast path: every intermediate stays below this bound in magnitude
_LIMIT = 1 << 62
#: words per draw on the big-integer path, beyond what the bound itself needs
_EXTRA_WORDS = 1


# ------------------------------------------------------------------ randomness sources
class RandomSource:
    """Uniform random 64-bit words; every sampler here is built on :meth:`words`."""

    #: True when the words come from a cryptographically secure generator
    secure = False

    def words(self, n):
        """``n`` independent uniform ``uint64`` words."""
        raise NotImplementedError

    def bits(self, n):
        """``n`` independent fair bits (bool array), 64 per word."""
        if n == 0:
            return np.zeros(0, dtype=bool)
        w = self.words(-(-n // 64))
        return np.unpackbits(w.view(np.uint8))[:n].astype(bool)

    def binomial(self, n, p):
        """One ``Binomial(n, p)`` count, float-based (see :func:`uniform_subset` notes)."""
        raise NotImplementedError

    def exponential(self, scale, size):
        """Float ``Exp(scale)`` draws (only for the floating-point Laplace option)."""
        raise NotImplementedError


class GeneratorSource(RandomSource):
    """Words from a :class:`numpy.random.Generator` (reproducible; not secure)."""

    def __init__(self, rng):
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                "rng must be a numpy.random.Generator (or pass secure_mode=True), got "
                f"{type(rng).__name__}"
            )
        self.rng = rng

    def words(self, n):
        return self.rng.integers(0, 2**64, size=n, dtype=np.uint64)

    def binomial(self, n, p):
        return int(self.rng.binomial(n, p))

    def exponential(self, scale, size):
        return self.rng.exponential(scale, size=size)


class SecureSource(RandomSource):
    """Words from ``os.urandom`` (the OS CSPRNG that :mod:`secrets` uses).

    Not reproducible by design. The two float-based helpers (:meth:`binomial`,
    :meth:`exponential`) run a fresh PCG64 generator seeded with 256 bits from
    ``os.urandom`` and discarded after the call.
    """

    secure = True

    def words(self, n):
        if n == 0:
            return np.zeros(0, dtype=np.uint64)
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64).copy()

    def _fresh(self):
        return np.random.Generator(np.random.PCG64(int.from_bytes(os.urandom(32), "little")))

    def binomial(self, n, p):
        return int(self._fresh().binomial(n, p))

    def exponential(self, scale, size):
        return self._fresh().exponential(scale, size=size)


def random_source(rng=None, *, secure_mode=False):
    """The :class:`RandomSource` for ``rng`` / ``secure_mode``.

    ``secure_mode=True`` always gives a :class:`SecureSource` (``rng`` is ignored);
    otherwise ``rng`` must be a :class:`numpy.random.Generator` (or a
    :class:`RandomSource`, returned as is).
    """
    if secure_mode:
        return SecureSource()
    if isinstance(rng, RandomSource):
        return rng
    if rng is None:
        raise TypeError(
            "rng must be a numpy.random.Generator (build one with "
            "skdp.utils._random.make_rng), or pass secure_mode=True"
        )
    return GeneratorSource(rng)


# ------------------------------------------------------------- integer array helpers
def _ints(values):
    """int64 array when every value is below 2^62 in magnitude, else an object array."""
    arr = np.asarray(values)
    if arr.dtype == object:
        if arr.size == 0:
            return np.zeros(arr.shape, dtype=np.int64)
        hi = max(abs(int(v)) for v in arr.ravel())
        if hi < _LIMIT:
            return arr.astype(np.int64)
        return np.array([int(v) for v in arr.ravel()], dtype=object).reshape(arr.shape)
    if arr.dtype.kind not in "iub":
        raise TypeError("integer array expected")
    return arr.astype(np.int64)


def _full(n, value):
    value = int(value)
    if abs(value) < _LIMIT:
        return np.full(n, value, dtype=np.int64)
    out = np.empty(n, dtype=object)
    out[:] = [value] * n
    return out


def _absmax(arr):
    if arr.size == 0:
        return 0
    if arr.dtype == object:
        return max(abs(int(v)) for v in arr)
    return int(np.abs(arr).max())


def _mul(arr, k):
    """``arr * k`` (``k`` a Python int), on the object path when it could overflow."""
    k = int(k)
    if arr.dtype != object and abs(k) < _LIMIT and _absmax(arr) * abs(k) < _LIMIT:
        return arr * np.int64(k)
    return _ints(arr.astype(object) * k)


def _add(a, b):
    if a.dtype != object and b.dtype != object and _absmax(a) + _absmax(b) < _LIMIT:
        return a + b
    return _ints(a.astype(object) + b.astype(object))


def _put(out, idx, values):
    """``out[idx] = values``, switching ``out`` to an object array if needed."""
    if values.dtype == object and out.dtype != object:
        out = out.astype(object)
    out[idx] = values
    return out


# --------------------------------------------------------------------- uniform integers
def _uniform_below_small(source, high):
    """Uniform on ``[0, high_i)`` for an int64 array ``1 <= high < 2^62`` (rejection)."""
    n = high.size
    h = high.astype(np.uint64)
    thr = (np.zeros(n, dtype=np.uint64) - h) % h  # 2^64 mod h: words below it are rejected
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        w = source.words(todo.size)
        ok = w >= thr
        out[todo[ok]] = (w[ok] % h[ok]).astype(np.int64)
        todo, h, thr = todo[~ok], h[~ok], thr[~ok]
    return out


def _uniform_scalar(source, n, high):
    """``n`` uniform integers on ``[0, high)`` for one Python int ``1 <= high < 2^62``."""
    high = int(high)
    if high == 1:
        return np.zeros(n, dtype=np.int64)
    if high & (high - 1) == 0:  # a power of two: the low bits of a word, nothing rejected
        return (source.words(n) & np.uint64(high - 1)).astype(np.int64)
    h = np.uint64(high)
    thr = np.uint64((1 << 64) % high)
    w = source.words(n)
    out = (w % h).astype(np.int64)
    bad = np.flatnonzero(w < thr)
    while bad.size:
        w = source.words(bad.size)
        ok = w >= thr
        out[bad[ok]] = (w[ok] % h).astype(np.int64)
        bad = bad[~ok]
    return out


def _uniform_below_big(source, high):
    """Uniform below each Python int of ``high`` (any size): words joined, then rejection."""
    high = [int(m) for m in high]
    out = np.empty(len(high), dtype=object)
    todo = list(range(len(high)))
    n_words = -(-max(high).bit_length() // 64) + _EXTRA_WORDS
    span = 1 << (64 * n_words)
    thr = {m: span % m for m in set(high)}
    while todo:
        w = source.words(len(todo) * n_words).reshape(len(todo), n_words)
        left = []
        for i, row in zip(todo, w, strict=True):
            v = int.from_bytes(row.tobytes(), "little")
            m = high[i]
            if v >= thr[m]:
                out[i] = v % m
            else:
                left.append(i)
        todo = left
    return out


def uniform_below(source, high):
    """Exactly uniform integers on ``[0, high_i)``, element-wise.

    Parameters
    ----------
    source : RandomSource
    high : array-like of int
        Positive bounds (int64 or Python ints of any size).

    Returns
    -------
    ndarray of int64 (object when a bound is ``>= 2^62``)

    Notes
    -----
    A 64-bit word ``w`` is accepted when ``w >= 2^64 mod high``; the accepted words
    cover every residue equally often, so ``w mod high`` is exactly uniform. Larger
    bounds concatenate words and use the same rule.
    """
    high = _ints(high)
    if high.size and (_absmax(high) == 0 or np.any(high <= 0)):
        raise ValueError("uniform_below needs positive bounds")
    if high.dtype != object:
        return _uniform_below_small(source, high)
    small = np.array([int(v) < _LIMIT for v in high], dtype=bool)
    out = np.empty(high.size, dtype=object)
    if small.any():
        out[small] = _uniform_below_small(source, high[small].astype(np.int64)).astype(object)
    if (~small).any():
        out[~small] = _uniform_below_big(source, high[~small])
    return _ints(out)


def uniform_subset(source, n_items, k):
    """A uniformly random ``k``-subset of ``range(n_items)``, sorted (int64).

    The first ``k`` distinct values of an i.i.d. uniform sequence form a uniform
    ``k``-subset (the law is invariant under relabelling the items); for ``k >
    n_items / 2`` the complement is drawn. Integer arithmetic only.
    """
    n_items, k = int(n_items), int(k)
    if not 0 <= k <= n_items:
        raise ValueError("need 0 <= k <= n_items")
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    if 2 * k > n_items:
        drop = uniform_subset(source, n_items, n_items - k)
        return np.setdiff1d(np.arange(n_items, dtype=np.int64), drop, assume_unique=True)
    seq = np.zeros(0, dtype=np.int64)
    need = k
    while True:
        extra = need + need // 4 + 16
        seq = np.concatenate([seq, uniform_below(source, _full(extra, n_items))])
        uniq, first = np.unique(seq, return_index=True)
        if uniq.size >= k:
            chosen = uniq[np.argsort(first, kind="stable")[:k]]
            return np.sort(chosen).astype(np.int64)
        need = k - uniq.size


# ---------------------------------------------------------------- Bernoulli(exp(-γ))
def _bernoulli_exp_unit(source, num, den, *, start=1):
    """Bernoulli(exp(-num/den)) for ``0 <= num <= den`` (CKS Algorithm 1, γ <= 1).

    ``A_k ~ Bernoulli(γ / k)`` for ``k = 1, 2, ...`` until the first ``A_k = 0``; the
    result is 1 iff that ``k`` is odd (``P(K > k) = γ^k / k!``, so ``P(K odd) = e^-γ``).
    ``den`` is one Python int (fast path) or an array. ``start=2`` skips ``A_1`` when
    every ``γ`` is 1 (then ``A_1 = 1`` surely).
    """
    n = num.size
    out = np.zeros(n, dtype=bool)
    active = np.arange(n)
    scalar = not isinstance(den, np.ndarray)
    k = start
    while active.size:
        if scalar and int(den) * k < _LIMIT:
            u = _uniform_scalar(source, active.size, int(den) * k)
        elif scalar:
            u = uniform_below(source, _full(active.size, int(den) * k))
        else:
            u = uniform_below(source, _mul(den[active], k))
        a = u < num[active]
        out[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return out


def _bernoulli_exp_minus_one(source, n):
    """Bernoulli(exp(-1)): ``A_k ~ Bernoulli(1/k)`` from ``k = 2``, 1 iff the stop is odd."""
    return _bernoulli_exp_unit(source, np.ones(n, dtype=np.int64), 1, start=2)


def _bernoulli_exp_int(source, q):
    """Bernoulli(exp(-q)) for integers ``q >= 0``: ``q`` Bernoulli(exp(-1)) all succeed."""
    q = _ints(q)
    if q.dtype == object:  # reaching 2^62 successes would take 2^62 loop passes
        q = np.array([min(int(v), _LIMIT) for v in q], dtype=np.int64)
    out = np.ones(q.size, dtype=bool)
    active = np.flatnonzero(q > 0)
    left = q[active]
    while active.size:
        b = _bernoulli_exp_minus_one(source, active.size)
        out[active[~b]] = False
        active, left = active[b], left[b] - 1
        more = left > 0
        active, left = active[more], left[more]
    return out


def bernoulli_exp(source, num, den):
    """Exact Bernoulli(exp(-num/den)), element-wise, for integers ``num >= 0, den > 0``.

    Canonne, Kamath & Steinke (2020), Algorithm 1: ``exp(-γ) = exp(-1)^floor(γ) *
    exp(-(γ - floor(γ)))``, each factor by the ``Bernoulli(γ/k)`` loop. Integer
    arithmetic only (Python integers where int64 could overflow).

    Parameters
    ----------
    source : RandomSource
    num : array-like of int
    den : int or array-like of int
        One denominator (fast path) or one per element.

    Returns
    -------
    ndarray of bool
    """
    if isinstance(den, Integral | np.integer):
        num, den = _ints(np.ravel(num)), int(den)
        if den <= 0 or (num.size and np.any(num < 0)):
            raise ValueError("bernoulli_exp needs num >= 0 and den > 0")
        if num.dtype == object or den >= _LIMIT:
            q, r = _ints(num.astype(object) // den), _ints(num.astype(object) % den)
        else:
            q = num // den
            r = num - q * den
        den_idx = lambda idx: den  # noqa: E731
    else:
        num, den = np.broadcast_arrays(_ints(num), _ints(den))
        num, den = _ints(np.ravel(num)), _ints(np.ravel(den))
        if num.size and (np.any(den <= 0) or np.any(num < 0)):
            raise ValueError("bernoulli_exp needs num >= 0 and den > 0")
        q = _ints(num // den)
        r = _ints(num % den)
        den_idx = lambda idx: den[idx]  # noqa: E731
    out = _bernoulli_exp_int(source, q)
    idx = np.flatnonzero(out)
    if idx.size:
        out[idx] = _bernoulli_exp_unit(source, _ints(r[idx]), den_idx(idx))
    return out


# ---------------------------------------------------------------------- the samplers
def _count_exp_minus_one(source, n):
    """Successes of Bernoulli(exp(-1)) before the first failure: ``P(V >= v) = e^-v``."""
    v = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        active = active[_bernoulli_exp_minus_one(source, active.size)]
        v[active] += 1
    return v


def sample_geometric(source, n, s, t):
    """``n`` draws of ``Y`` with ``P(Y = y) = (1 - r) r^y``, ``y >= 0``, ``r = exp(-s/t)``.

    First half of Canonne, Kamath & Steinke (2020), Algorithm 2: ``X = U + t V`` with
    ``U`` uniform on ``{0..t-1}`` kept with probability ``exp(-U/t)`` and ``V`` the number
    of successes of Bernoulli(exp(-1)) before a failure, so ``P(X = x) ∝ exp(-x/t)``;
    then ``Y = floor(X / s)``. ``s, t`` are positive Python ints.

    Returns
    -------
    ndarray of int64 (object if a value reaches 2^62)
    """
    s, t = int(s), int(t)
    if s <= 0 or t <= 0:
        raise ValueError("s and t must be positive integers")
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        if t == 1:
            u, keep = np.zeros(m, dtype=np.int64), np.ones(m, dtype=bool)
        else:
            u = _uniform_scalar(source, m, t) if t < _LIMIT else uniform_below(source, _full(m, t))
            keep = _bernoulli_exp_unit(source, u, t)
        idx, u = todo[keep], u[keep]
        x = _add(u, _mul(_count_exp_minus_one(source, idx.size), t))
        y = _ints(x.astype(object) // s) if x.dtype == object or s >= _LIMIT else x // s
        out = _put(out, idx, _ints(y))
        todo = todo[~keep]
    return out


def sample_discrete_laplace(source, n, s, t):
    """``n`` draws with ``P(k) = ((1 - r)/(1 + r)) r^|k|`` on the integers, ``r = exp(-s/t)``.

    Canonne, Kamath & Steinke (2020), Algorithm 2 (scale ``t/s``): a geometric magnitude
    :func:`sample_geometric` and a fair sign, rejecting "negative zero".
    """
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        y = sample_geometric(source, todo.size, s, t)
        neg = source.bits(todo.size)
        ok = ~(neg & (y == 0))
        val = np.where(neg, -y, y)
        out = _put(out, todo[ok], _ints(val[ok]) if val.dtype == object else val[ok])
        todo = todo[~ok]
    return out


def sample_discrete_gaussian(source, n, a, b):
    """``n`` draws with ``P(k) ∝ exp(-k² / (2σ²))`` on the integers, ``σ² = a/b``.

    Canonne, Kamath & Steinke (2020), Algorithm 3: ``t = floor(σ) + 1``, ``Y`` discrete
    Laplace of scale ``t``, accepted with probability ``exp(-(|Y| - σ²/t)² / (2σ²))``
    = ``exp(-(|Y| b t - a)² / (2 a b t²))``, a rational exponent evaluated exactly
    (Python integers when it exceeds int64).
    """
    a, b = int(a), int(b)
    if a <= 0 or b <= 0:
        raise ValueError("sigma^2 = a/b needs positive a, b")
    t = math.isqrt(a // b) + 1
    bt = b * t
    den = 2 * a * b * t * t
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        y = sample_discrete_laplace(source, todo.size, 1, t)
        ay = np.abs(y) if y.dtype != object else _ints(np.array([abs(int(v)) for v in y]))
        top = _absmax(ay) * bt + a
        if top * top < _LIMIT and ay.dtype != object:
            num = (ay * bt - a) ** 2
        else:
            num = _ints((ay.astype(object) * bt - a) ** 2)
        c = bernoulli_exp(source, num, den)
        out = _put(out, todo[c], y[c])
        todo = todo[~c]
    return out


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
    C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
    Privacy." NeurIPS 2020.

    I. Mironov. "On Significance of the Least Significant Bits for Differential
    Privacy." CCS 2012.

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
    C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
    Privacy." NeurIPS 2020.

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
