"""Helpers shared by the audits and attacks: row access, seeded fits, guesses, canaries.

Every fit gets its own explicit seed; nothing here reads a global random state.
"""

from __future__ import annotations

import numpy as np


# ----------------------------------------------------------------------------- helpers
def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _take(X, idx):
    if X is None:
        return None
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    return np.asarray(X)[idx]


def _concat(A, B):
    if A is None:
        return None
    if hasattr(A, "iloc"):
        import pandas as pd

        return pd.concat([A, B], ignore_index=True)
    A = np.asarray(A)
    return np.concatenate([A, np.asarray(B).reshape((-1,) + A.shape[1:])], axis=0)


def _fit(estimator, X, y, seed, fit_params):
    from sklearn.base import clone

    est = clone(estimator)
    if "random_state" in est.get_params():
        est.set_params(random_state=int(seed))
    if y is None:
        est.fit(X, **fit_params)
    else:
        est.fit(X, y, **fit_params)
    return est


def _seeds(rng, n):
    # distinct seeds, < 2**32 so that sklearn's "random_state" constraint accepts them
    seeds = rng.choice(2**32 - 1, size=n, replace=False)
    return [int(s) for s in seeds]


def _claimed(estimator, delta):
    params = estimator.get_params() if hasattr(estimator, "get_params") else {}
    eps = params.get("epsilon")
    if delta is None:
        delta = float(params.get("delta", 0.0) or 0.0)
    return (None if eps is None else float(eps)), float(delta)


def _guesses(scores, k_pos, k_neg, rng):
    """+1 for the k_pos highest scores, -1 for the k_neg lowest, 0 otherwise.

    Ties are broken by a random permutation drawn independently of the membership bits.
    """
    m = len(scores)
    if k_pos < 0 or k_neg < 0 or k_pos + k_neg > m:
        raise ValueError(f"need k_pos, k_neg >= 0 and k_pos + k_neg <= {m}")
    perm = rng.permutation(m)
    order = perm[np.argsort(scores[perm], kind="stable")]
    guesses = np.zeros(m, dtype=int)
    if k_neg:
        guesses[order[:k_neg]] = -1
    if k_pos:
        guesses[order[m - k_pos :]] = 1
    return guesses


def _default_k(m, k_pos, k_neg):
    default = max(1, min(m // 10, 500))
    return (default if k_pos is None else int(k_pos)), (default if k_neg is None else int(k_neg))


def _default_canary(X):
    """Index of the row farthest (standardised) from the column medians."""
    Xa = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    try:
        Xa = Xa.astype(float).reshape(len(Xa), -1)
    except (TypeError, ValueError):
        return 0
    scale = Xa.std(axis=0)
    scale[scale == 0] = 1.0
    z = (Xa - np.median(Xa, axis=0)) / scale
    return int(np.argmax((z**2).sum(1)))
