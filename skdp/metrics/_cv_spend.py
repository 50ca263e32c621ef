"""``cv_privacy_spend``: the total privacy cost of a cross-validation or search scored
with DP scorers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np

from skdp.accounting._ledger import _check_relation, _replace_one_from_add_remove
from skdp.accounting._rdp import _check_real

__all__ = ["cv_privacy_spend"]


_NUMBER = (Real, np.floating, np.integer)


def _check_flag(value, name):
    """A real bool (``True``/``False``, or a numpy bool): no strings, no 0/1."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool (True or False), got {type(value).__name__}")
    return bool(value)


def _check_amount(value, name, *, positive, high, allow_inf):
    """One epsilon or delta: a real number (not a bool or a string) in its range. The
    messages never repeat the value (a budget may be derived from private data)."""
    value = _check_real(value, name, allow_inf=allow_inf)
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}")
    if high is not None and value >= high:
        raise ValueError(f"{name} must be < {high}")
    return value


def _as_budgets(value, name, **check):
    """A number, or a non-empty 1-D sequence / array of numbers, as a list of floats.

    A string is refused (it is a sequence of characters: ``"12"`` is not two budgets).
    """
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            value = value.item()
        elif value.ndim == 1:
            value = value.tolist()
        else:
            raise ValueError(f"{name} must be a number or a 1-D sequence of numbers")
    if isinstance(value, str | bytes) or not isinstance(value, _NUMBER + (Sequence,)):
        raise TypeError(
            f"{name} must be a number or a sequence of numbers, got {type(value).__name__}"
        )
    if not isinstance(value, Sequence):
        return [_check_amount(value, name, **check)]
    if len(value) == 0:
        raise ValueError(f"{name} must not be empty")
    return [_check_amount(v, f"{name}[{i}]", **check) for i, v in enumerate(value)]


def _check_count(value, name, minimum):
    """An integer >= ``minimum`` (not a bool, a float or a string)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, _NUMBER):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not isinstance(value, Integral | np.integer):
        raise ValueError(f"{name} must be an integer")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}")
    if value > _MAX_COUNT:  # the per-candidate lists below are built in memory
        raise ValueError(f"{name} must be at most {_MAX_COUNT}")
    return int(value)


_MAX_COUNT = 10**7


def _fsum(values):
    """``math.fsum``, but ``inf`` where the exact sum of finite budgets overflows float64
    (fsum raises OverflowError): ``inf`` is the sound "no guarantee" total."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


def _per_candidate(values, name, n_candidates):
    if len(values) == 1:
        return values * n_candidates
    if len(values) != n_candidates:
        raise ValueError(f"{name} must be a number or have one entry per candidate (n_candidates)")
    return values


def cv_privacy_spend(
    *,
    epsilon,
    n_splits,
    delta=0.0,
    n_candidates=1,
    disjoint_folds=True,
    n_repeats=1,
    return_train_score=False,
    fit_epsilon=0.0,
    fit_delta=0.0,
    fit_relation="add_remove",
    refit=True,
):
    """Total ``(epsilon, delta)`` of a ``cross_validate`` / ``GridSearchCV`` run with DP scorers.

    The total is stated under **replace one row** (the relation of skdp's DP scorers):
    the fits' add/remove budgets are converted by group privacy. A pure function of
    public quantities, so it gives the same answer whatever ``n_jobs`` is; charge it to
    your ledger before the run (``ledger.spend(*cv_privacy_spend(...))``).

    Parameters
    ----------
    epsilon : float or sequence of float
        ``epsilon`` of one call of each scorer (a sequence for a dict of scorers), as
        given to :func:`make_dp_scorer` (replace-one).
    n_splits : int
        Number of train/test splits of the CV (per repeat).
    delta : float or sequence of float, default=0.0
        ``delta`` of one call of each scorer (same length as ``epsilon`` if a sequence).
    n_candidates : int, default=1
        Number of hyper-parameter candidates (``len(ParameterGrid(param_grid))``;
        1 for ``cross_validate``).
    disjoint_folds : bool, default=True
        Whether the test sets of one repeat partition the rows: every row is in exactly
        one test set (``KFold``, ``GroupKFold`` with data-independent groups). ``False``
        for ``ShuffleSplit`` and other splitters whose test sets overlap or leave rows
        out: every split is then counted for every row.
    n_repeats : int, default=1
        Repeats of the CV (``RepeatedKFold(n_splits=k, n_repeats=r)``).
    return_train_score : bool, default=False
        Whether the scorers were also called on the training rows.
    fit_epsilon : float or sequence of float, default=0.0
        Budget of one ``fit`` of a DP estimator (its ``epsilon_spent_``), to include the
        models in the total; ``inf`` for a non-private estimator. A sequence gives one
        value per candidate (``n_candidates`` of them), for a grid over ``epsilon``.
        ``0`` leaves the fits out (see Notes).
    fit_delta : float or sequence of float, default=0.0
        ``delta`` of one fit (its ``delta_spent_``), a number or one per candidate.
    fit_relation : {"add_remove", "replace"}, default="add_remove"
        The neighbouring relation ``fit_epsilon``/``fit_delta`` are stated under.
        Every skdp estimator reports add/remove one row; its replace-one cost
        ``(2 epsilon, (1 + e^epsilon) delta)`` is charged. ``"replace"`` takes them as
        they are.
    refit : bool, default=True
        Whether a final fit on all rows follows (``GridSearchCV(refit=True)``, its
        default); counts one more fit, at the largest ``fit_epsilon``/``fit_delta`` over
        the candidates (the refit candidate is chosen from the data). ``False`` for
        ``cross_validate`` and ``GridSearchCV(refit=False)``.

    Returns
    -------
    epsilon, delta : float
        Total spend under replace one row, by basic composition (delta capped at 1;
        an epsilon total beyond float64, e.g. budgets of ``1e308``, is ``inf``).

    Notes
    -----
    Neighbouring relation: replace one row, with the number of rows and the split
    layout public (data-independent splits such as ``KFold(shuffle=True)``; not
    ``StratifiedKFold``, whose folds depend on the private labels). skdp's DP scorers
    are replace-one; skdp's estimators are add/remove (``n`` public), and a replacement
    is a removal and an addition, so an add/remove ``(e, d)``-DP fit is
    ``(2 e, (1 + exp(e)) d)``-DP under replace-one (group privacy). Adding the scorers'
    replace-one epsilon to the fits' add/remove epsilon would understate the total.

    Per candidate and repeat, a row is in the test set of a split (scored by every
    scorer: ``S = sum(epsilon)``) or in its training set (one fit, ``F`` after the
    conversion above, plus ``S`` with ``return_train_score``). With disjoint folds a row
    is tested once and trained on ``n_splits - 1`` times (parallel composition over the
    test folds); otherwise each split costs it at most the larger of the two. Candidates
    and repeats share rows and compose sequentially::

        train = F_c + (S if return_train_score else 0)
        per_c = S + (n_splits - 1) * train           if disjoint_folds
              = n_splits * max(S, train)              otherwise
        eps   = n_repeats * sum_c per_c + (max_c F_c if refit else 0)

    and the same for ``delta`` (with ``sum(delta)`` and the converted fit delta). With
    ``fit_epsilon=0`` the total covers the scorer calls only: the selection is then
    private with respect to the rows being scored, but the scores also depend on
    non-private models trained on the other rows, and the refit model releases its
    training data. A private grid search is only as private as its scorer and its
    estimator.

    References
    ----------
    .. [1] F. McSherry. "Privacy integrated queries". SIGMOD 2009 (parallel composition).
    .. [2] E. Lantz. PhD thesis, Thm 2.4 (sequential composition), 2016.
    .. [3] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential Privacy",
       2014, Thm 2.2 (group privacy).

    Examples
    --------
    >>> from skdp.metrics import cv_privacy_spend
    >>> cv_privacy_spend(epsilon=0.5, n_splits=5, n_candidates=4)
    (2.0, 0.0)
    >>> cv_privacy_spend(epsilon=0.5, delta=1e-6, n_splits=4, disjoint_folds=False)
    (2.0, 4e-06)

    A DP estimator with ``epsilon`` in the grid (one fit budget per candidate), refit on
    all rows: each add/remove fit epsilon counts twice under replace-one.

    >>> cv_privacy_spend(epsilon=0.1, n_splits=5, n_candidates=2, fit_epsilon=[0.5, 1.0])
    (14.2, 0.0)
    """
    eps = _as_budgets(epsilon, "epsilon", positive=True, high=None, allow_inf=True)
    dls = _as_budgets(delta, "delta", positive=False, high=1.0, allow_inf=False)
    if len(dls) == 1 and len(eps) > 1:
        dls = dls * len(eps)
    if len(dls) != len(eps):
        raise ValueError("epsilon and delta must have the same length")
    n_splits = _check_count(n_splits, "n_splits", 1)
    n_candidates = _check_count(n_candidates, "n_candidates", 1)
    n_repeats = _check_count(n_repeats, "n_repeats", 1)
    disjoint_folds = _check_flag(disjoint_folds, "disjoint_folds")
    return_train_score = _check_flag(return_train_score, "return_train_score")
    refit = _check_flag(refit, "refit")
    fit_relation = _check_relation(fit_relation, "fit_relation")
    fit_eps = _as_budgets(fit_epsilon, "fit_epsilon", positive=False, high=None, allow_inf=True)
    fit_dls = _as_budgets(fit_delta, "fit_delta", positive=False, high=1.0, allow_inf=False)
    fit_eps = _per_candidate(fit_eps, "fit_epsilon", n_candidates)
    fit_dls = _per_candidate(fit_dls, "fit_delta", n_candidates)
    fits = [
        _replace_one_from_add_remove(e, d) if fit_relation == "add_remove" else (e, d)
        for e, d in zip(fit_eps, fit_dls, strict=True)
    ]

    def total(score, fit_costs):
        """One coordinate (epsilon or delta) of the total."""
        parts = []  # per repeat
        for fit in fit_costs:
            train = fit + (score if return_train_score else 0.0)
            if not disjoint_folds:
                parts.append(n_splits * max(score, train))
            elif n_splits > 1:  # (no 0 * inf)
                parts += [score, (n_splits - 1) * train]
            else:
                parts.append(score)
        return n_repeats * _fsum(parts) + (max(fit_costs) if refit else 0.0)

    total_eps = total(_fsum(eps), [e for e, _ in fits])
    total_delta = total(_fsum(dls), [d for _, d in fits])
    return float(total_eps), float(min(1.0, total_delta))
