"""Black-box audits of an estimator's privacy claim.

* :func:`distinguishing_audit`: many independent fits on a fixed neighbouring pair
  (``D`` and ``D`` plus one canary), a threshold attack on the canary's membership
  score chosen on a calibration half of the runs, Clopper--Pearson bounds on the other
  half. The most sensitive audit of plumbing bugs (a missing noise term).
* :func:`one_run_audit`: one fit, many canaries included independently with
  probability 1/2 (Steinke, Nasr and Jagielski 2023). Cheap; loose for DP mechanisms.
  With the default scores this is the loss (likelihood) threshold attack of Yeom et al.
* :func:`lira_attack` (in ``_attacks``): shadow-model likelihood-ratio attack.

All randomness comes from ``random_state``: every fit gets its own explicit seed.
Bugs of the companion code of Bridges, Tombs & Stanley (2023) are avoided on purpose:
scores are computed on the *trained* model, the top scores are guessed IN, and every
reported bound is a per-run bound at a stated confidence, never a percentile of
bounds (their "3rd-highest of 50").
"""

from __future__ import annotations

import numpy as np

from skdp.auditing._bounds import (
    clopper_pearson,
    epsilon_lower_bound,
    one_run_epsilon_lower_bound,
)
from skdp.auditing._fitting import (
    _claimed,
    _concat,
    _default_canary,
    _default_k,
    _fit,
    _guesses,
    _n_rows,
    _seeds,
    _take,
)
from skdp.auditing._result import AuditResult, confusion_counts
from skdp.auditing._scoring import resolve_scorer
from skdp.base import _shared_constraints
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import validate_params

__all__ = [
    "distinguishing_audit",
    "one_run_audit",
    "threshold_audit",
]


def _vector_eps_lb(tp, fn, fp, tn, delta, confidence):
    """Vectorised :func:`epsilon_lower_bound` (for the threshold search)."""
    per_side = 1.0 - (1.0 - confidence) / 2.0
    tpr_lo = clopper_pearson(tp, tp + fn, confidence=per_side, side="lower")
    fpr_hi = clopper_pearson(fp, fp + tn, confidence=per_side, side="upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(tpr_lo - delta > 0, np.log(np.maximum(tpr_lo - delta, 1e-300) / fpr_hi), 0)
        b = np.where(
            1 - fpr_hi - delta > 0,
            np.log(np.maximum(1 - fpr_hi - delta, 1e-300) / (1 - tpr_lo)),
            0,
        )
    return np.maximum(0.0, np.maximum(np.nan_to_num(a, posinf=1e300), b))


def _best_threshold(scores, labels, delta, confidence):
    """Threshold and direction maximising the calibration-set bound."""
    cand = np.unique(scores)
    cuts = np.concatenate(
        [[-np.inf], (cand[1:] + cand[:-1]) / 2 if len(cand) > 1 else [], [np.inf]]
    )
    pos, neg = labels == 1, labels == 0
    above = scores[None, :] > cuts[:, None]
    best = (-1.0, 0.0, 1)
    for direction in (1, -1):
        guess_in = above if direction == 1 else ~above
        tp = (guess_in & pos).sum(1)
        fp = (guess_in & neg).sum(1)
        eps = _vector_eps_lb(tp, pos.sum() - tp, fp, neg.sum() - fp, delta, confidence)
        i = int(np.argmax(eps))
        if eps[i] > best[0]:
            best = (float(eps[i]), float(cuts[i]), direction)
    return best[1], best[2]


# ----------------------------------------------------------------------------- audits
@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def distinguishing_audit(
    estimator,
    X,
    y=None,
    *,
    canary_X=None,
    canary_y=None,
    n_trials=200,
    score="auto",
    delta=None,
    confidence=0.95,
    calibration_fraction=0.5,
    random_state=None,
    fit_params=None,
):
    """Audit with independent fits on a fixed neighbouring pair (one canary per run).

    Every trial draws a fresh seed and fits a clone of ``estimator`` either on ``D0``
    (canary OUT) or on ``D1 = D0`` plus the canary (IN), half of the trials each, in
    random order. The attack scores the canary with the fitted model's public methods.
    On the first ``calibration_fraction`` of the trials it picks the threshold and
    direction that maximise the bound; the remaining trials are the independent test
    whose confusion counts give the Clopper--Pearson bound
    (:func:`~skdp.auditing.epsilon_lower_bound`).

    Parameters
    ----------
    estimator : estimator
        Unfitted; cloned for every trial, ``random_state`` overridden per trial.
    X, y : array-like or DataFrame
        ``D0`` when ``canary_X`` is given; otherwise the canary is the row of ``X``
        farthest from the column medians, ``D1 = X`` and ``D0`` is ``X`` without it.
    canary_X, canary_y : array-like of one row, optional
        The canary (a worst-case record makes the audit tighter).
    n_trials : int, default=200
        Number of fits (at least 20).
    score : "auto", str or callable, default="auto"
        Membership score (see :func:`skdp.auditing.membership_scores`).
    delta : float, optional
        The delta of the guarantee under test (default: the estimator's ``delta``, or 0).
    confidence : float, default=0.95
    calibration_fraction : float, default=0.5
    random_state : None, int or Generator
    fit_params : dict, optional

    Returns
    -------
    AuditResult
        ``method="independent-trials"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import LaplaceCountRelease, distinguishing_audit
    >>> X = np.arange(20).reshape(-1, 1)
    >>> res = distinguishing_audit(LaplaceCountRelease(epsilon=1.0, n_ids=25), X,
    ...                            canary_X=[[21]], n_trials=400, random_state=0)
    >>> 0 < res.epsilon_lb <= 1.0
    True
    """
    if n_trials < 20:
        raise ValueError("n_trials must be at least 20")
    if not 0 < calibration_fraction < 1:
        raise ValueError("calibration_fraction must be in (0, 1)")
    fit_params = fit_params or {}
    eps_claimed, delta = _claimed(estimator, delta)
    rng = make_rng(random_state)
    if canary_X is None:
        c = _default_canary(X)
        keep = np.setdiff1d(np.arange(_n_rows(X)), [c])
        canary_X, canary_y = _take(X, [c]), (None if y is None else _take(y, [c]))
        X0, y0 = _take(X, keep), (None if y is None else _take(y, keep))
    else:
        X0, y0 = X, y
        if not hasattr(canary_X, "iloc"):
            canary_X = np.asarray(canary_X)
            canary_X = canary_X.reshape((1,) + np.asarray(X).shape[1:])
        if y is not None:
            if canary_y is None:
                raise ValueError("canary_y is required for a supervised estimator")
            canary_y = np.asarray(canary_y).reshape((1,) + np.asarray(y).shape[1:])
    X1, y1 = _concat(X0, canary_X), (None if y0 is None else _concat(y0, canary_y))
    scorer = resolve_scorer(estimator, canary_y, score)
    return _independent_trials(
        estimator,
        ((X0, y0, fit_params), (X1, y1, fit_params)),
        (canary_X, canary_y),
        lambda s: s[0],
        rng,
        n_trials=n_trials,
        scorer=scorer,
        delta=delta,
        confidence=confidence,
        calibration_fraction=calibration_fraction,
        epsilon=eps_claimed,
    )


def _independent_trials(estimator, worlds, canary, reduce, rng, *, n_trials, scorer, **audit):
    """Fit on ``worlds[label]`` per trial, score the canary and pass the scores to the audit.

    ``worlds`` is ``((X0, y0, fit_params0), (X1, y1, fit_params1))``; the labels are half
    0 and half 1 in random order, each trial a fit of a clone seeded from ``rng``;
    ``reduce`` makes the canary's scores one number. ``audit`` goes to
    :func:`threshold_audit` (``delta``, ``confidence``, ``calibration_fraction``, ``epsilon``).
    """
    canary_X, canary_y = canary
    labels = rng.permutation(np.arange(n_trials) % 2)
    seeds = _seeds(rng, n_trials)
    scores = np.empty(n_trials)
    for t in range(n_trials):
        Xt, yt, params = worlds[labels[t]]
        est = _fit(estimator, Xt, yt, seeds[t], params)
        scores[t] = float(reduce(np.ravel(scorer(est, canary_X, canary_y))))
    res = threshold_audit(scores, labels, **audit)
    res.details["n_trials"] = n_trials
    return res


def threshold_audit(
    scores,
    labels,
    *,
    delta=0.0,
    confidence=0.95,
    calibration_fraction=0.5,
    epsilon=None,
):
    """Epsilon lower bound from the scores of independent trials of a membership game.

    ``scores[t]`` is the attack's score of trial ``t`` (e.g. a statistic of one output
    of the mechanism run on the neighbouring dataset ``labels[t]``: 1 = with the canary,
    0 = without; trials independent, labels not chosen by looking at the scores). The
    first ``calibration_fraction`` of the trials choose a threshold and a direction
    (maximising the bound on them); the rest are the test whose confusion counts give
    the Clopper--Pearson bound (:func:`~skdp.auditing.epsilon_lower_bound`). Use it for
    white-box audits (e.g. of one DP-SGD step) where you produce the scores yourself.

    Parameters
    ----------
    scores : array-like of shape (n_trials,)
    labels : array-like of {0, 1}, shape (n_trials,)
        In random order (the split is positional).
    delta, confidence, calibration_fraction
    epsilon : float, optional
        The claimed epsilon, stored on the result.

    Returns
    -------
    AuditResult
        ``method="independent-trials"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import threshold_audit
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 2, 4000)
    >>> scores = labels + rng.laplace(scale=1.0, size=4000)  # a 1-DP Laplace count
    >>> 0.5 < threshold_audit(scores, labels).epsilon_lb <= 1.0
    True
    """
    scores = np.asarray(scores, dtype=float).ravel()
    labels = np.asarray(labels).astype(int).ravel()
    if scores.shape != labels.shape or len(scores) < 4:
        raise ValueError("scores and labels need the same length, at least 4")
    if not np.isin(labels, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    if not 0 < calibration_fraction < 1:
        raise ValueError("calibration_fraction must be in (0, 1)")
    finite = scores[np.isfinite(scores)]
    lo, hi = (finite.min(), finite.max()) if len(finite) else (0.0, 0.0)
    span = hi - lo + 1.0
    scores = np.nan_to_num(scores, nan=lo - span, neginf=lo - span, posinf=hi + span)
    n_cal = int(round(calibration_fraction * len(scores)))
    cal, ev = slice(0, n_cal), slice(n_cal, None)
    threshold, direction = _best_threshold(scores[cal], labels[cal], delta, confidence)
    guess_in = scores[ev] > threshold if direction == 1 else scores[ev] <= threshold
    c = confusion_counts(guess_in, labels[ev])
    tp, fn, fp, tn = c["tp"], c["fn"], c["fp"], c["tn"]
    return AuditResult.from_scores(
        "independent-trials",
        epsilon_lower_bound(tp, fn, fp, tn, delta=delta, confidence=confidence),
        labels,
        direction * scores,
        confidence=confidence,
        delta=delta,
        epsilon_claimed=None if epsilon is None else float(epsilon),
        details={
            "n_trials": len(scores),
            "n_calibration": n_cal,
            "threshold": threshold,
            "direction": direction,
            "confusion": c,
            # the largest bound these evaluation trials could give (a perfect attack)
            "max_epsilon_lb": epsilon_lower_bound(
                tp + fn, 0, 0, fp + tn, delta=delta, confidence=confidence
            ),
            "scores": scores,
            "labels": labels,
        },
    )


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def one_run_audit(
    estimator,
    X,
    y=None,
    *,
    n_canaries=None,
    k_pos=None,
    k_neg=None,
    score="auto",
    delta=None,
    confidence=0.95,
    random_state=None,
    fit_params=None,
    reference=None,
):
    """One-run audit of Steinke, Nasr and Jagielski (2023), Algorithm 1.

    ``n_canaries`` rows of ``X`` (all rows by default; otherwise a random subset, the
    other rows always included) are canaries, each included independently with
    probability 1/2 (iid, as the theorem assumes; not "exactly half"). One fit. Every
    canary is scored with the trained model's public methods; the ``k_pos`` highest
    scores are guessed IN and the ``k_neg`` lowest OUT (fixed before looking at the
    inclusion bits), the rest abstain. The bound is
    :func:`~skdp.auditing.one_run_epsilon_lower_bound` of the number of correct guesses.

    Parameters
    ----------
    estimator : estimator
        Unfitted; cloned, ``random_state`` set from ``random_state``.
    X, y : array-like or DataFrame
    n_canaries : int, optional
    k_pos, k_neg : int, optional
        Default ``min(m // 10, 500)`` each (abstain on the other canaries).
    score : "auto", str or callable, default="auto"
    delta : float, optional
        Default: the estimator's ``delta`` (0 if it has none). Note the ``2 m delta``
        term: with large ``m`` a positive delta makes positive bounds hard.
    confidence : float, default=0.95
    random_state : None, int or Generator
    fit_params : dict, optional
    reference : None or "fixed", default=None
        ``"fixed"``: score the *loss drop* ``score(trained) - score(reference)``, where
        the reference is fitted on the always-included rows only, with its own seed
        (Steinke, Nasr & Jagielski 2023: a reference independent of the inclusion bits *and*
        of the target's randomness keeps the test valid; the same seed would replay and
        cancel the target's noise). Needs ``n_canaries < len(X)``.

    Returns
    -------
    AuditResult
        ``method="one-run"``; ``details`` has ``m``, ``r`` (guesses), ``v`` (correct).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import RandomizedResponseRelease, one_run_audit
    >>> X = np.arange(2000).reshape(-1, 1)
    >>> res = one_run_audit(RandomizedResponseRelease(epsilon=2.0, n_ids=2000), X,
    ...                     random_state=0)
    >>> 0 < res.epsilon_lb <= 2.0
    True
    """
    fit_params = fit_params or {}
    eps_claimed, delta = _claimed(estimator, delta)
    rng = make_rng(random_state)
    n = _n_rows(X)
    m = n if n_canaries is None else int(n_canaries)
    if not 1 <= m <= n:
        raise ValueError(f"n_canaries must be in [1, {n}]")
    if reference not in (None, "fixed"):
        raise ValueError("reference must be None or 'fixed'")
    if reference == "fixed" and m == n:
        raise ValueError("reference='fixed' needs n_canaries < len(X) (rows always included)")
    k_pos, k_neg = _default_k(m, k_pos, k_neg)
    canaries = np.sort(rng.choice(n, size=m, replace=False)) if m < n else np.arange(n)
    fixed = np.setdiff1d(np.arange(n), canaries)
    S = rng.integers(0, 2, size=m) * 2 - 1
    train_idx = np.sort(np.concatenate([fixed, canaries[S == 1]]))
    seed = _seeds(rng, 1)[0]
    est = _fit(estimator, _take(X, train_idx), _take(y, train_idx), seed, fit_params)
    Xc, yc = _take(X, canaries), _take(y, canaries)
    scorer = resolve_scorer(estimator, yc, score)
    scores = np.asarray(scorer(est, Xc, yc), dtype=float).ravel()
    if reference == "fixed":
        # loss drop against a model that saw no canary. Its seed must be independent
        # too: reusing the target's seed would replay the target's noise and subtract
        # it (the audit would then "break" any mechanism, e.g. a Laplace count)
        ref_seed = _seeds(rng, 1)[0]
        ref = _fit(estimator, _take(X, fixed), _take(y, fixed), ref_seed, fit_params)
        scores = scores - np.asarray(scorer(ref, Xc, yc), dtype=float).ravel()
    scores = np.nan_to_num(scores, nan=-np.inf)
    T = _guesses(scores, k_pos, k_neg, rng)
    r = int(np.count_nonzero(T))
    v = int(np.sum((T != 0) & (T == S)))
    return AuditResult.from_scores(
        "one-run",
        one_run_epsilon_lower_bound(m, r, v, delta=delta, confidence=confidence),
        S == 1,
        scores,
        confidence=confidence,
        delta=delta,
        epsilon_claimed=eps_claimed,
        details={
            "m": m,
            "r": r,
            "v": v,
            "k_pos": k_pos,
            "k_neg": k_neg,
            # the largest bound this audit could give (every guess correct)
            "max_epsilon_lb": one_run_epsilon_lower_bound(
                m, r, r, delta=delta, confidence=confidence
            ),
            "scores": scores,
        },
    )
