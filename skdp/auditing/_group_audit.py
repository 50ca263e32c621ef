"""The audit of a patient-level guarantee: one patient with all their rows in or out."""

from __future__ import annotations

import numpy as np

from skdp.auditing._audits import _independent_trials
from skdp.auditing._fitting import _claimed, _concat
from skdp.auditing._scoring import resolve_scorer
from skdp.utils._groups import check_groups
from skdp.utils._random import make_rng

__all__ = ["group_audit"]


def group_audit(
    estimator,
    X,
    y=None,
    *,
    groups,
    canary_X,
    canary_y=None,
    n_trials=200,
    score="auto",
    delta=None,
    confidence=0.95,
    calibration_fraction=0.5,
    random_state=None,
):
    """Audit a patient-level guarantee with independent fits: one patient in or out.

    The neighbouring pair of ``fit(..., groups=)``: ``D0 = (X, y, groups)`` and ``D1``,
    ``D0`` plus one **patient with all their rows** (``canary_X``, ``canary_y``; a new
    group label). Every trial fits a clone of ``estimator`` (seeded per trial) on ``D0``
    or ``D1`` with ``groups``, half of the trials each in random order, and scores the
    canary patient by the mean of the attack score over their rows
    (:func:`skdp.auditing.membership_scores`); the first ``calibration_fraction`` of the
    trials choose the threshold, the rest give the Clopper--Pearson bound
    (:func:`~skdp.auditing.threshold_audit`). A patient-level ``epsilon`` must stay at or
    above the bound; a per-row release of a patient with ``k`` rows typically does not
    (group privacy: about ``k epsilon``).

    Parameters
    ----------
    estimator : estimator
        Unfitted, supporting ``fit(..., groups=)`` (and with ``max_rows_per_group``
        set); cloned for every trial.
    X, y : array-like
        ``D0`` without the canary patient (``y`` ``None`` for an unsupervised
        estimator).
    groups : array-like of shape (n_samples,)
        The patient of each row of ``D0``.
    canary_X, canary_y : array-like of k rows
        The canary patient's rows (a worst case, e.g. ``k`` equal extreme rows, makes
        the audit tighter).
    n_trials : int, default=200
        Number of fits (at least 20).
    score : "auto", str or callable, default="auto"
        Membership score of one row (see :func:`skdp.auditing.membership_scores`).
    delta : float, optional
        The delta of the guarantee under test (default: the estimator's ``delta``).
    confidence : float, default=0.95
    calibration_fraction : float, default=0.5
    random_state : None, int or Generator

    Returns
    -------
    AuditResult
        ``method="independent-trials"``; ``details["canary_rows"]`` is ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import group_audit
    >>> from skdp.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).uniform(-0.2, 0.2, (100, 1))
    >>> est = DPStandardScaler(epsilon=1.0, bounds=(-1, 1), with_std=False,
    ...                        max_rows_per_group=3)
    >>> res = group_audit(est, X, groups=np.arange(100), canary_X=np.ones((3, 1)),
    ...                   score=lambda e, Xc, yc: e.mean_ * np.ones(len(Xc)),
    ...                   n_trials=100, random_state=0)
    >>> res.epsilon_lb <= 1.0
    True
    """
    if n_trials < 20:
        raise ValueError("n_trials must be at least 20")
    codes = check_groups(groups, np.shape(X)[0])
    if not hasattr(canary_X, "iloc"):  # a DataFrame canary stays one (its dtypes)
        canary_X = np.asarray(canary_X)
    k = canary_X.shape[0]
    if k < 1 or canary_X.ndim != np.ndim(X):
        raise ValueError("canary_X must hold the canary patient's rows, shaped like X")
    if y is not None and canary_y is None:
        raise ValueError("canary_y is required for a supervised estimator")
    worlds = (
        (X, y, codes),
        (
            _concat(X, canary_X),
            None if y is None else _concat(y, np.asarray(canary_y)),
            np.r_[codes, np.full(k, codes.max() + 1 if codes.size else 0)],
        ),
    )
    eps_claimed, delta = _claimed(estimator, delta)
    res = _independent_trials(
        estimator,
        tuple((Xw, yw, {"groups": gw}) for Xw, yw, gw in worlds),
        (canary_X, canary_y),
        np.mean,
        make_rng(random_state),
        n_trials=n_trials,
        scorer=resolve_scorer(estimator, canary_y, score),
        delta=delta,
        confidence=confidence,
        calibration_fraction=calibration_fraction,
        epsilon=eps_claimed,
    )
    res.details["canary_rows"] = k
    return res
