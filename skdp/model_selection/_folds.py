"""Data-independent folds: a uniformly random balanced partition of the row positions.

:func:`check_cv` resolves the ``cv`` (and deprecated ``n_splits``) parameter of
:func:`~skdp.model_selection.dp_cross_validate` and
:class:`~skdp.model_selection.DPGridSearchCV` into a :class:`FoldSpec`: a fold count
(folds from :func:`assign_folds`) or a ``KFold(shuffle=True)`` (its own folds). Every
other splitter is refused with the reason.
"""

from __future__ import annotations

import hashlib
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd

from skdp.utils._random import _seed_from

__all__ = ["FoldSpec", "assign_folds", "assign_group_folds", "check_cv", "label_hashes"]

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


def assign_group_folds(groups, n_splits, random_state=None):
    """Fold index of every row when the folds hold whole patients (``groups``).

    A patient's fold is a keyed hash of their label, ``H(key, label) mod n_splits``:
    it depends on the label and the key only -- never on the other patients, their
    rows or their number -- so adding or removing one patient moves no one else to
    another fold (a rank or a balanced partition of the labels would). Fold sizes are
    then random, not balanced. The key comes from ``random_state`` as for
    :func:`assign_folds` (``None``: fresh OS entropy) and is not kept.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        The patient of each row (hashable labels).
    n_splits : int
        Number of folds, ``>= 2``.
    random_state : None, int, SeedSequence, Generator or RandomState, default=None

    Returns
    -------
    folds : ndarray of shape (n_samples,), dtype intp
    """
    n_splits = int(n_splits)
    if n_splits < 2:
        raise ValueError("n_splits must be at least 2")
    seq = _seed_from(random_state, _TAG + "/groups", {"n_splits": n_splits}, {}, False)
    codes, hashes = label_hashes(groups, np.random.default_rng(seq).bytes(32))
    fold_of_label = np.array([h % n_splits for h in hashes], dtype=np.intp)
    return fold_of_label[codes]


def label_hashes(groups, key):
    """``(codes, hashes)``: each row's label code and, per distinct label, the keyed
    BLAKE2b hash of the label as a 64-bit Python int (a function of the label and the
    ``key`` only, never of the other labels)."""
    codes, labels = pd.factorize(np.asarray(groups))
    hashes = [
        int.from_bytes(
            hashlib.blake2b(repr(label).encode(), key=key, digest_size=8).digest(), "little"
        )
        for label in np.asarray(labels).tolist()  # Python scalars: a stable repr
    ]
    return codes, hashes


# ------------------------------------------------------------------- the cv parameter
#: Splitters whose folds read the labels (refused: a split that reads y is a statistic
#: of the private labels) or the groups (refused: groups are data too).
_READS_Y = ("StratifiedKFold", "RepeatedStratifiedKFold", "StratifiedShuffleSplit")
_READS_GROUPS = ("GroupKFold", "GroupShuffleSplit", "LeaveOneGroupOut", "LeavePGroupsOut")
_ALTERNATIVE = (
    "Pass cv=<int> (a uniformly random balanced partition of the row positions) or "
    "cv=KFold(n_splits, shuffle=True, random_state=<int or None>)."
)


class FoldSpec:
    """The folds of one cross-validation, decided before any row is read.

    ``n_splits`` folds, made by :func:`assign_folds` from the run's ``random_state``
    (``splitter=None``, what ``cv=<int>`` gives) or by a ``KFold(shuffle=True)``
    splitter, whose own ``random_state`` keys them. Either way the partition is a
    function of the number of rows and a key only, never of the rows' values, labels
    or order, and every row is in exactly one test fold (what
    :func:`skdp.metrics.cv_privacy_spend` counts).
    """

    def __init__(self, n_splits, splitter=None):
        self.n_splits = int(n_splits)
        self.splitter = splitter

    def check_n_samples(self, n_samples):
        """Raise ``ValueError`` if there are fewer rows than folds."""
        _check_n_splits(self.n_splits, int(n_samples))

    def assign(self, n_samples, random_state=None):
        """Fold index of every row (``random_state`` keys the ``cv=<int>`` folds only)."""
        if self.splitter is None:
            return assign_folds(n_samples, self.n_splits, random_state)
        from sklearn.model_selection import KFold

        self.check_n_samples(n_samples)
        seed = self.splitter.random_state
        if seed is None:  # fresh OS entropy, as skdp's None; never numpy's global RNG
            seed = int(np.random.default_rng().integers(2**32))
        splitter = KFold(self.n_splits, shuffle=True, random_state=seed)
        folds = np.full(int(n_samples), -1, dtype=np.intp)
        # only the row count reaches the splitter: a placeholder with n rows, no values
        for j, (_, test) in enumerate(splitter.split(np.zeros((int(n_samples), 1)))):
            folds[test] = j
        if folds.min() < 0:  # pragma: no cover - KFold always partitions the rows
            raise RuntimeError("KFold left rows outside every test fold")
        return folds


def _refuse(cv, why, where):
    name = type(cv).__name__
    raise ValueError(f"{where}: cv={name}(...) is refused: {why} {_ALTERNATIVE}")


def check_cv(cv, n_splits="deprecated", *, where, default=5):
    """:class:`FoldSpec` of a ``cv`` parameter (and its deprecated alias ``n_splits``).

    ``cv``: ``None`` (``default`` folds), an int ``>= 2`` (that many folds from
    :func:`assign_folds`), or a ``sklearn.model_selection.KFold`` with ``shuffle=True``
    and an int or ``None`` ``random_state``. Refused with the reason
    (``ValueError``; ``TypeError`` for a non-integer count):

    * splitters that read ``y`` (``StratifiedKFold`` and its repeated, shuffled and
      grouped variants): the folds would be a statistic of the private labels, and on
      a neighbouring data set other rows would change folds;
    * splitters that read ``groups`` (``GroupKFold``, ``LeaveOneGroupOut``, ...): the
      groups are data, and the accounting is per row;
    * ``KFold(shuffle=False)``: its folds follow the row order, which may itself depend
      on the data (a table sorted by outcome);
    * ``PredefinedSplit`` and iterables of ``(train, test)`` index arrays: nothing shows
      that they were made without the data (they are usually the output of a splitter
      that read ``y``);
    * any other splitter (``ShuffleSplit``, ``RepeatedKFold``, ``LeaveOneOut``,
      ``TimeSeriesSplit``, subclasses of ``KFold``, ...): the accounting needs one
      partition of the rows into ``k`` test folds of a random permutation of the
      positions (each row tested once and trained on ``k - 1`` times), which skdp can
      check only for ``KFold(shuffle=True)``.

    ``n_splits`` (anything but the string ``"deprecated"``) is the old name of an int
    ``cv``: it warns (``FutureWarning``) and gives exactly what ``cv=n_splits`` gives;
    passing both raises ``ValueError``.
    """
    if not (isinstance(n_splits, str) and n_splits == "deprecated"):
        if cv is not None:
            raise ValueError(
                f"{where}: pass the number of folds as cv only; n_splits is its deprecated "
                "alias and cannot be combined with cv"
            )
        warnings.warn(
            f"{where}: n_splits was renamed cv in skdp 0.1 (as in scikit-learn) and "
            "will be removed in 0.2; pass cv=<number of folds> instead.",
            FutureWarning,
            stacklevel=3,
        )
        return FoldSpec(_check_count(n_splits, "n_splits"))
    if cv is None:
        return FoldSpec(default)
    if isinstance(cv, Real | np.number | np.bool_ | str | bytes):
        return FoldSpec(_check_count(cv, "cv"))
    from sklearn.model_selection import KFold, PredefinedSplit, StratifiedGroupKFold

    if isinstance(cv, StratifiedGroupKFold) or type(cv).__name__ in _READS_Y:
        _refuse(
            cv,
            "it reads y, and a split that reads y is a statistic of the private labels: "
            "which rows share a test fold would depend on the labels, and on a data set "
            "with one label changed other rows would move between folds, which the "
            "privacy accounting (each row in one test fold, folds fixed by the row "
            "count alone) does not cover.",
            where,
        )
    if type(cv).__name__ in _READS_GROUPS:
        _refuse(
            cv,
            "it reads groups, which are data: its folds depend on every patient's "
            "labels and number of rows (GroupKFold balances the fold sizes), so adding "
            "one patient can move other patients to other folds, which the accounting "
            "(each patient in one test fold, fixed without the data) does not cover. "
            "For folds of whole patients pass groups= to fit (or to dp_cross_validate) "
            "with cv=<int>: each patient's fold is then a keyed hash of their own label, "
            "whatever the other patients.",
            where,
        )
    if isinstance(cv, PredefinedSplit):
        _refuse(
            cv,
            "skdp cannot check that its test_fold array was made without the data "
            "(the privacy accounting needs folds fixed by the row count alone).",
            where,
        )
    if type(cv) is KFold:
        return _kfold_spec(cv, where)
    if hasattr(cv, "split") and hasattr(cv, "get_n_splits"):
        _refuse(
            cv,
            "skdp checks only KFold(shuffle=True) (and int cv): the privacy accounting "
            "needs one partition of the rows into test folds that depends on the row "
            "count alone, each row tested once (not a subclass of KFold, which may "
            "split otherwise, nor ShuffleSplit, RepeatedKFold, LeaveOneOut, "
            "TimeSeriesSplit, ...).",
            where,
        )
    if hasattr(cv, "__iter__"):
        raise ValueError(
            f"{where}: cv as an iterable of (train, test) index arrays is refused: skdp "
            "cannot check that precomputed folds were made without the data (they are "
            "usually a splitter's output on X and y, e.g. StratifiedKFold's, which reads "
            f"the private labels). {_ALTERNATIVE}"
        )
    raise TypeError(
        f"{where}: cv must be None, an int >= 2 or a KFold(shuffle=True); got {type(cv).__name__}"
    )


def _kfold_spec(cv, where):
    """:class:`FoldSpec` of a ``KFold``: refused unless ``shuffle=True`` with an int or
    ``None`` ``random_state``."""
    if not cv.shuffle:
        _refuse(
            cv,
            "with shuffle=False its folds are contiguous blocks of the row order, "
            "which may itself depend on the data (a table sorted by outcome); the "
            "privacy accounting needs folds that do not depend on the rows' order.",
            where,
        )
    rs = cv.random_state
    if rs is not None and (isinstance(rs, bool) or not isinstance(rs, Integral | np.integer)):
        _refuse(
            cv,
            f"its random_state must be an int or None (got {type(rs).__name__}): a "
            "seed object is changed by every split and would be kept in the "
            "search's parameters.",
            where,
        )
    return FoldSpec(_check_count(cv.n_splits, "cv.n_splits"), splitter=cv)


def _check_count(value, name):
    if isinstance(value, bool | np.bool_) or not isinstance(value, Integral | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 2:
        raise ValueError(f"{name} must be at least 2")
    return int(value)
