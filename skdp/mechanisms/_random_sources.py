"""Random sources and exact uniform integers for the samplers of :mod:`skdp.mechanisms._discrete`.

:class:`GeneratorSource` wraps a :class:`numpy.random.Generator` (reproducible with a seed);
:class:`SecureSource` reads ``os.urandom`` (what ``secure_mode=True`` selects). Uniform
integers below a bound are drawn from 64-bit random words by rejection, with integer
arithmetic only (int64 where every intermediate fits, Python integers otherwise).
"""

from __future__ import annotations

import os

import numpy as np

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
