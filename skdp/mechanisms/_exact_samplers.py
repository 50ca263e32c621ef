"""Exact samplers of Canonne, Kamath & Steinke (2020), Algorithms 1-3.

Bernoulli(exp(-γ)) for rational γ, the geometric and discrete Laplace laws and the discrete
Gaussian, vectorised over the still-active indices of the rejection loops, with integer
arithmetic only (see :mod:`skdp.mechanisms._discrete`).
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from skdp.mechanisms._random_sources import (
    _LIMIT,
    _absmax,
    _add,
    _full,
    _ints,
    _mul,
    _put,
    _uniform_scalar,
    uniform_below,
)


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
        if top * top < _LIMIT and bt < _LIMIT and ay.dtype != object:
            num = (ay * bt - a) ** 2
        else:
            num = _ints((ay.astype(object) * bt - a) ** 2)
        c = bernoulli_exp(source, num, den)
        out = _put(out, todo[c], y[c])
        todo = todo[~c]
    return out
