"""Data-independent folds: a uniformly random balanced partition of the row positions."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skdp.utils._random import _seed_from

__all__ = ["assign_folds"]

_TAG = "skdp.model_selection.folds"


def _check_n_splits(n_splits, n_samples):
    if isinstance(n_splits, bool) or not isinstance(n_splits, Integral | np.integer):
        raise TypeError(f"n_splits must be an int, got {type(n_splits).__name__}")
    if n_splits < 2:
        raise ValueError("n_splits must be at least 2")
    if n_samples < n_splits:
        raise ValueError(
            f"Cannot have number of splits n_splits={int(n_splits)} greater than the "
            f"number of samples: n_samples={n_samples}."
        )
    return int(n_splits)


def assign_folds(n_samples, n_splits, random_state=None):
    """Fold index of every row: a uniformly random balanced partition of the positions.

    The partition is a function of ``n_samples``, ``n_splits`` and a random key only --
    never of the rows' values, labels or order -- so it is the same for two data sets
    that differ in one row's content (the replaced row keeps its position and its fold).
    Fold sizes differ by at most one and depend on ``n_samples`` alone.

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    n_splits : int
        Number of folds, ``2 <= n_splits <= n_samples``.
    random_state : None, int, SeedSequence, Generator or RandomState, default=None
        ``None``: a fresh key from OS entropy on every call (what a release uses).
        Otherwise the key is derived from ``random_state`` with the same BLAKE2b seed
        hashing as :func:`skdp.utils._random.fit_streams`, bound to a tag,
        ``n_samples`` and ``n_splits`` -- and deliberately **not** to the data: binding
        it to the rows would give neighbouring data sets unrelated partitions.

    Returns
    -------
    folds : ndarray of shape (n_samples,), dtype intp
        ``folds[i]`` in ``range(n_splits)``. The key is not returned or kept.

    Examples
    --------
    >>> from skdp.model_selection._folds import assign_folds
    >>> folds = assign_folds(10, 3, random_state=0)
    >>> sorted(folds.tolist().count(j) for j in range(3))
    [3, 3, 4]
    """
    n_splits = _check_n_splits(n_splits, int(n_samples))
    seq = _seed_from(
        random_state,
        _TAG,
        {"n_samples": int(n_samples), "n_splits": n_splits},
        {},
        False,
    )
    order = np.random.default_rng(seq).permutation(int(n_samples))
    folds = np.empty(int(n_samples), dtype=np.intp)
    folds[order] = np.arange(int(n_samples)) % n_splits
    return folds
