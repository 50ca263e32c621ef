"""The public check :func:`skdp.auditing.check_privacy` and its default audit data."""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.auditing._attacks import lira_attack
from skdp.auditing._audits import distinguishing_audit, one_run_audit
from skdp.base import _shared_constraints
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import validate_params

__all__ = ["check_privacy", "default_audit_data"]

_AUDITS = ("distinguishing", "one-run", "lira")


def _as_pairs(bounds, n_features):
    """``(lo, hi)`` arrays from a bounds parameter, or ``None`` if not usable."""
    if bounds is None or isinstance(bounds, str):
        return None
    if isinstance(bounds, dict):
        try:
            lo = np.array([float(v[0]) for v in bounds.values()])
            hi = np.array([float(v[1]) for v in bounds.values()])
        except (TypeError, ValueError, IndexError):
            return None
        return lo, hi
    try:
        lo, hi = bounds
        lo = np.asarray(lo, dtype=float)
        hi = np.asarray(hi, dtype=float)
    except (TypeError, ValueError):
        return None
    if lo.ndim == 0:
        lo, hi = np.full(n_features, float(lo)), np.full(n_features, float(hi))
    return lo, hi


def default_audit_data(estimator, *, n_samples=60, n_features=2, random_state=0):
    """Data and a canary built from an estimator's *public* metadata only.

    Features are uniform inside ``bounds`` / ``bounds_X``; the canary sits at the upper
    corner of the box (an extreme record, where leaks are easiest to see). A regressor
    with ``bounds_y`` gets a linear target plus noise inside those bounds and the canary
    the lower end of ``bounds_y``; a classifier gets labels ``{0, 1}`` from a linear rule
    and the canary the label that rule does *not* predict.

    Returns
    -------
    X, y, canary_X, canary_y : ndarray (``y``/``canary_y`` are ``None`` if unsupervised)

    Raises
    ------
    ValueError
        If the estimator declares no numeric bounds (pass ``X`` to
        :func:`check_privacy` instead).
    """
    from sklearn.base import is_classifier, is_regressor

    params = estimator.get_params()
    supervised = is_classifier(estimator) or is_regressor(estimator)
    box = None
    for key in ("bounds_X", "bounds"):
        if key in params:
            box = _as_pairs(params[key], n_features)
            if box is not None:
                break
    if box is None:
        raise ValueError(
            f"{type(estimator).__name__} declares no numeric bounds; pass X (and y) to "
            "check_privacy"
        )
    lo, hi = box
    rng = make_rng(random_state)
    X = lo + (hi - lo) * rng.random((n_samples, len(lo)))
    canary_X = hi.reshape(1, -1).copy()
    y = canary_y = None
    if supervised:
        w = np.linspace(1.0, -0.5, len(lo))
        centre = (lo + hi) / 2
        t = (X - centre) @ w / (np.abs(w) @ ((hi - lo) / 2) + 1e-12)  # in [-1, 1]
        if is_classifier(estimator):
            y = (t + 0.3 * rng.standard_normal(n_samples) > 0).astype(int)
            canary_y = np.array([0 if (canary_X - centre) @ w > 0 else 1])
        else:
            ylo, yhi = _as_pairs(params.get("bounds_y", (-1.0, 1.0)), 1) or (
                np.array([-1.0]),
                np.array([1.0]),
            )
            ylo, yhi = float(np.ravel(ylo)[0]), float(np.ravel(yhi)[0])
            mid, half = (ylo + yhi) / 2, (yhi - ylo) / 2
            y = np.clip(mid + half * (0.8 * t + 0.1 * rng.standard_normal(n_samples)), ylo, yhi)
            canary_y = np.array([ylo])
    return X, y, canary_X, canary_y


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def check_privacy(
    estimator,
    X=None,
    y=None,
    *,
    audit="distinguishing",
    canary_X=None,
    canary_y=None,
    n_trials=200,
    confidence=0.95,
    score="auto",
    random_state=0,
    raise_on_failure=True,
    **audit_kwargs,
):
    """Audit an estimator configuration and fail if the evidence contradicts its epsilon.

    Runs an empirical privacy audit (:mod:`skdp.auditing`) on clones of ``estimator``
    and compares the epsilon lower bound with the claimed ``estimator.epsilon``. A
    correct implementation passes with probability at least ``confidence`` (the bound
    is a valid lower bound at that level); a missing or mis-scaled noise term shows up
    as a bound above the claim. Passing is evidence, not a proof of privacy: a weak
    attack gives a weak bound.

    Parameters
    ----------
    estimator : estimator
        Unfitted skdp estimator (any estimator with ``epsilon``, ``random_state``,
        ``fit`` and one of ``predict_proba``, ``score_samples``, ``predict``,
        ``transform`` or ``sample``).
    X, y : array-like, optional
        Audit data. If omitted, built from the estimator's public bounds
        (:func:`skdp.auditing._checks.default_audit_data`).
    audit : {"distinguishing", "one-run", "lira"}, default="distinguishing"
        :func:`~skdp.auditing.distinguishing_audit` (``n_trials`` fits on a neighbouring
        pair; the most sensitive), :func:`~skdp.auditing.one_run_audit` (one fit) or
        :func:`~skdp.auditing.lira_attack`.
    canary_X, canary_y : array-like, optional
        The record whose presence is audited (distinguishing audit only).
    n_trials : int, default=200
        Fits of the distinguishing audit.
    confidence : float, default=0.95
    score : "auto", str or callable, default="auto"
        How a fitted model scores a record (see :func:`skdp.auditing.membership_scores`).
    random_state : int, default=0
        Seeds the audit (the data split, the fits' seeds).
    raise_on_failure : bool, default=True
        Raise ``AssertionError`` if the bound exceeds the claimed epsilon.
    **audit_kwargs
        Passed to the audit function.

    Returns
    -------
    result : AuditResult

    Raises
    ------
    AssertionError
        If ``raise_on_failure`` and ``result.epsilon_lb > estimator.epsilon``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import LaplaceCountRelease, check_privacy
    >>> X = np.arange(20).reshape(-1, 1)
    >>> result = check_privacy(LaplaceCountRelease(epsilon=1.0, n_ids=30), X,
    ...                        canary_X=[[25]], n_trials=100)
    >>> result.epsilon_lb <= 1.0
    True
    """
    if audit not in _AUDITS:
        raise ValueError(f"audit must be one of {_AUDITS}, got {audit!r}")
    if X is None:
        X, y, dX, dy = default_audit_data(estimator, random_state=random_state)
        if canary_X is None:
            canary_X, canary_y = dX, dy
    with warnings.catch_warnings():
        # audits fit many times on small data: advisory warnings (delta >= 1/n, an
        # approximate guarantee) would repeat on every fit and are not under test here;
        # a PrivacyLeakWarning is never silenced
        from skdp.exceptions import ApproximateGuaranteeWarning, DeltaTooLargeWarning

        warnings.simplefilter("ignore", DeltaTooLargeWarning)
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
        common = dict(confidence=confidence, score=score, random_state=random_state)
        if audit == "distinguishing":
            common.update(canary_X=canary_X, canary_y=canary_y, n_trials=n_trials)
        run = {
            "distinguishing": distinguishing_audit,
            "one-run": one_run_audit,
        }.get(audit, lira_attack)
        result = run(estimator, X, y, **common, **audit_kwargs)
    claimed = result.epsilon_claimed
    if (
        raise_on_failure
        and claimed is not None
        and math.isfinite(claimed)
        and result.epsilon_lb > claimed
    ):
        raise AssertionError(
            f"{type(estimator).__name__}: empirical epsilon lower bound "
            f"{result.epsilon_lb:.3f} exceeds the claimed epsilon={claimed:g} at "
            f"{confidence:.0%} confidence ({result.summary()})"
        )
    return result
