"""Held-out rows for an unbiased score of a search's winner (``DPGridSearchCV(holdout=)``).

``best_score_`` is the largest of the candidates' noisy mean scores, so it is biased
upward (selection bias: the maximum of noisy estimates exceeds, on average, the score of
the candidate it picks). With ``holdout`` the search sets aside ``h`` rows before
anything runs -- a uniformly random subset of the row positions, drawn from a key, never
from the data -- runs the selection and the refit on the other ``n - h`` rows, and
releases one DP score of the refitted winner on the ``h`` held-out rows
(``best_score_unbiased_``). Those rows played no part in choosing or fitting the model,
so the score is an unbiased estimate of its score on new rows from the same population
(up to the scorer's clamping to the metric's range).

**Privacy.** The held-out rows are disjoint from the rows of the selection and the refit
and the split is data-independent (replace-one: the replaced row keeps its position, so
it is either held out or not). A held-out row is read by the final scorer call only; a
selection row by the selection and the refit, and by the final call only through the
released refit model (post-processing). The two parts compose in parallel (McSherry
2009): the total is the larger of the two, so the final call is released at the
selection's own total at no extra cost.

**Patients** (``fit(..., groups=)``): whole patients are held out. Each patient is held
out when the keyed hash of their label, read as a number in [0, 1), is below
``holdout`` (a fraction): a function of the label and the key only, so adding or
removing one patient moves no other patient across the split (a fixed count of
patients would). The held-out patients are disjoint from the selection's, so the two
parts compose in parallel per patient. The number of held-out rows is then random and
depends on the patients' row counts: it is not stored.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from skdp.model_selection._folds import label_hashes
from skdp.model_selection._plan import _num_samples, _take
from skdp.utils._random import _seed_from

__all__ = [
    "check_holdout",
    "check_holdout_groups",
    "holdout_group_mask",
    "holdout_mask",
    "holdout_size",
    "split_holdout",
]

_TAG = "skdp.model_selection.holdout"


def check_holdout(holdout):
    """The type and range of ``holdout`` (no row count needed)."""
    if isinstance(holdout, bool | np.bool_) or not isinstance(holdout, Real | np.integer):
        raise TypeError(f"holdout must be None, a float in (0, 1) or an int, got {holdout!r}")
    if isinstance(holdout, Integral | np.integer):
        if holdout < 1:
            raise ValueError(f"holdout as a row count must be >= 1, got {holdout!r}")
        return int(holdout)
    frac = float(holdout)
    if not (0.0 < frac < 1.0):
        raise ValueError(f"holdout as a fraction must be in (0, 1), got {holdout!r}")
    return frac


def holdout_size(holdout, n_samples, n_splits):
    """Number of held-out rows: a function of ``holdout``, ``n`` and ``k`` only."""
    holdout = check_holdout(holdout)
    h = holdout if isinstance(holdout, int) else math.floor(holdout * n_samples)
    if h < 1 or n_samples - h < n_splits:
        raise ValueError(
            f"holdout={holdout!r} holds out {h} of {n_samples} rows: it must hold out at "
            f"least one row and leave at least n_splits={n_splits} rows for the search"
        )
    return h


def holdout_mask(n_samples, n_holdout, random_state=None):
    """``True`` at the held-out positions: ``n_holdout`` of ``n_samples``, uniformly.

    Keyed like :func:`~skdp.model_selection._folds.assign_folds` (``None``: fresh OS
    entropy; otherwise ``random_state`` hashed with a tag, ``n`` and ``h``, never with
    the data).
    """
    seq = _seed_from(
        random_state,
        _TAG,
        {"n_samples": int(n_samples), "n_holdout": int(n_holdout)},
        {},
        False,
    )
    order = np.random.default_rng(seq).permutation(int(n_samples))
    mask = np.zeros(int(n_samples), dtype=bool)
    mask[order[: int(n_holdout)]] = True
    return mask


def check_holdout_groups(holdout):
    """``holdout`` with ``groups``: a fraction (``ValueError`` for a count)."""
    holdout = check_holdout(holdout)
    if isinstance(holdout, int):
        raise ValueError(
            f"holdout={holdout!r} with groups=: give holdout as a fraction in (0, 1); each "
            "patient is then held out with that probability by a keyed hash of their "
            "label (a fixed number of rows or patients would depend on the other patients)"
        )
    return holdout


def holdout_group_mask(groups, holdout, random_state=None):
    """``True`` at the rows of the held-out patients (whole patients, module docstring).

    ``holdout`` must be a fraction: patient ``g`` is held out when
    ``H(key, g) / 2^64 < holdout``, the key from ``random_state`` (``None``: fresh OS
    entropy) with a tag of its own, never from the data. Either side may be empty: an
    empty held-out side is scored with noise only, and a search side without patients
    is the one refusal of the patient folds (:func:`~skdp.model_selection._plan.group_folds`),
    so whether the split succeeds depends on no patient.
    """
    holdout = check_holdout_groups(holdout)
    seq = _seed_from(random_state, _TAG + "/groups", {"holdout": holdout}, {}, False)
    codes, hashes = label_hashes(groups, np.random.default_rng(seq).bytes(32))
    held_label = np.array([h < holdout * 2.0**64 for h in hashes], dtype=bool)
    return held_label[codes]


def split_holdout(X, y, groups, holdout, n_splits, random_state):
    """``(X, y, groups, (X_hold, y_hold, groups_hold), n_holdout)`` of a search with
    ``holdout``: row positions (``groups=None``, :func:`holdout_mask`) or whole patients
    (:func:`holdout_group_mask`; ``n_holdout`` is then ``None``: a row count of private
    patients is not released)."""
    n = _num_samples(X)
    if groups is None:
        n_holdout = holdout_size(holdout, n, n_splits)
        held = holdout_mask(n, n_holdout, random_state)
        hold = (_take(X, held), _take(y, held), None)
        return _take(X, ~held), _take(y, ~held), None, hold, n_holdout
    held = holdout_group_mask(groups, holdout, random_state)
    hold = (_take(X, held), _take(y, held), groups[held])
    return _take(X, ~held), _take(y, ~held), groups[~held], hold, None
