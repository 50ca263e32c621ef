"""Re-identification of a row's label from a released AUC (Lantz 2016, §7.3.1).

The adversary knows every (score, label) pair but one, and the released AUC of the
full data, but not where the target sits in the ranking. For each insertion position
and each class it computes the AUC the full data would have, and guesses the class
whose AUC comes closest to the released value (ties: the more frequent known class).

:func:`auc_reidentification_audit` turns the attack into an epsilon lower bound for an
AUC release under the scorers' neighbouring relation (replace one row, N public): the
rest of the data and the target's score are fixed, the target's label is drawn at
random in each trial, and the attack's guesses give Clopper--Pearson bounds on its TPR
and FPR (:func:`~skdp.auditing.epsilon_lower_bound`).
"""

from __future__ import annotations

import numpy as np

from skdp.auditing._bounds import epsilon_lower_bound
from skdp.auditing._result import AuditResult, confusion_counts
from skdp.base import _shared_constraints
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import validate_params

__all__ = ["auc_reidentification_attack", "auc_reidentification_audit"]


def _auc_strict(pos_scores, neg_scores):
    """AUC with the thesis's tie rule: a tied (negative, positive) pair scores 0."""
    if len(pos_scores) == 0 or len(neg_scores) == 0:
        return 0.5
    neg_sorted = np.sort(neg_scores)
    below = np.searchsorted(neg_sorted, pos_scores, side="left")  # negatives strictly below
    return float(below.sum() / (len(pos_scores) * len(neg_scores)))


def _candidate_aucs(y_known, s_known):
    """AUCs of the completed data for every insertion position and both classes."""
    y_known = np.asarray(y_known).astype(bool)
    s_known = np.asarray(s_known, dtype=float)
    pos, neg = s_known[y_known], s_known[~y_known]
    n, m = len(pos), len(neg)
    u = _auc_strict(pos, neg) * n * m if n and m else 0.0
    levels = np.unique(s_known)
    # one representative score per distinct rank position: below all, at and between levels
    gaps = (levels[1:] + levels[:-1]) / 2 if len(levels) > 1 else np.array([])
    cands = np.concatenate([[levels[0] - 1.0], levels, gaps, [levels[-1] + 1.0]])
    neg_sorted, pos_sorted = np.sort(neg), np.sort(pos)
    neg_below = np.searchsorted(neg_sorted, cands, side="left")
    pos_above = len(pos) - np.searchsorted(pos_sorted, cands, side="right")
    # target positive: n+1 positives, m negatives; target negative: n, m+1
    auc_pos = (u + neg_below) / ((n + 1) * m) if m else np.full(len(cands), 0.5)
    auc_neg = (u + pos_above) / (n * (m + 1)) if n else np.full(len(cands), 0.5)
    return auc_pos, auc_neg


def auc_reidentification_attack(y_known, scores_known, released_auc):
    """Guess the missing row's class (1 = positive) from a released AUC.

    Parameters
    ----------
    y_known : array-like of {0, 1}
        Labels of every other row.
    scores_known : array-like
        Scores of every other row.
    released_auc : float
        The AUC released for the full data (exact, rounded or DP).

    Returns
    -------
    guess : int
        1 if some insertion of a positive explains the released AUC at least as well as
        any insertion of a negative (ties go to the more frequent known class), else 0.

    Examples
    --------
    >>> from skdp.auditing import auc_reidentification_attack
    >>> auc_reidentification_attack([0, 0, 1], [0.1, 0.2, 0.9], released_auc=0.5)
    1
    >>> auc_reidentification_attack([0, 0, 1], [0.1, 0.2, 0.9], released_auc=2 / 3)
    0
    """
    y_known = np.asarray(y_known).astype(int)
    auc_pos, auc_neg = _candidate_aucs(y_known, scores_known)
    d_pos = np.min(np.abs(auc_pos - released_auc))
    d_neg = np.min(np.abs(auc_neg - released_auc))
    if np.isclose(d_pos, d_neg, rtol=0, atol=1e-12):
        return int(y_known.mean() > 0.5)
    return int(d_pos < d_neg)


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def auc_reidentification_audit(
    y_true,
    y_score,
    *,
    release=None,
    target_index=0,
    n_trials=400,
    epsilon=None,
    delta=0.0,
    confidence=0.95,
    random_state=None,
):
    """Epsilon lower bound for an AUC release from the re-identification attack.

    In every trial the target row (``target_index``; its score is kept) gets a random
    label, ``release(y, scores, seed)`` is called on the completed data and the attack
    guesses the label from the release. Guessing "positive" for a positive target is a
    true positive. The trials are independent, so the confusion counts give a
    Clopper--Pearson epsilon lower bound valid for the replace-one relation.

    Parameters
    ----------
    y_true, y_score : array-like
        The data; the other rows stay fixed.
    release : callable(y, scores, seed) -> float, optional
        The AUC release under audit, e.g. ``lambda y, s, seed:
        dp_roc_auc_score(y, s, epsilon=0.1, random_state=seed)``. Default: the exact AUC
        (no privacy).
    target_index : int, default=0
    n_trials : int, default=400
    epsilon : float, optional
        The claimed epsilon, stored on the result.
    delta, confidence, random_state
        As in :func:`~skdp.auditing.epsilon_lower_bound`; ``random_state`` seeds the
        labels and the releases' seeds.

    Returns
    -------
    AuditResult
        ``method="auc-reidentification"``; the ROC is over the binary guesses.
    """
    y_true = np.asarray(y_true).astype(int).ravel()
    y_score = np.asarray(y_score, dtype=float).ravel()
    if len(y_true) != len(y_score) or len(y_true) < 2:
        raise ValueError("y_true and y_score need the same length, at least 2")
    if release is None:

        def release(y, s, seed):
            return _auc_strict(s[y == 1], s[y == 0])

    rng = make_rng(random_state)
    keep = np.arange(len(y_true)) != target_index
    y_known, s_known = y_true[keep], y_score[keep]
    labels = rng.integers(0, 2, size=n_trials)
    seeds = rng.choice(2**32 - 1, size=n_trials, replace=False)
    guesses = np.empty(n_trials, dtype=int)
    for t in range(n_trials):
        y = y_true.copy()
        y[target_index] = labels[t]
        released = float(release(y, y_score, int(seeds[t])))
        guesses[t] = auc_reidentification_attack(y_known, s_known, released)
    c = confusion_counts(guesses == 1, labels)
    return AuditResult.from_scores(
        "auc-reidentification",
        epsilon_lower_bound(c["tp"], c["fn"], c["fp"], c["tn"], delta=delta, confidence=confidence),
        labels,
        guesses,
        confidence=confidence,
        delta=delta,
        epsilon_claimed=None if epsilon is None else float(epsilon),
        details={
            "confusion": c,
            "success_rate": float(np.mean(guesses == labels)),
        },
    )
