"""The object every audit returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["AuditResult", "roc_summary", "confusion_counts", "DEFAULT_FPRS"]

#: False-positive rates at which :class:`AuditResult` reports the true-positive rate.
DEFAULT_FPRS = (1e-3, 1e-2, 1e-1)


def roc_summary(labels, scores, fprs=DEFAULT_FPRS):
    """ROC curve, AUC and TPR at fixed low FPRs of scores against membership labels.

    ``labels`` are 1 for members (IN), 0 for non-members; higher ``scores`` mean
    "more likely a member". Returns ``(fpr, tpr, auc, {fpr_level: tpr})``; the TPR at a
    level is the largest TPR of a threshold whose empirical FPR does not exceed it
    (0 when none does). Degenerate inputs (one class only) give AUC ``nan``.
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    labels = np.asarray(labels).astype(int).ravel()
    scores = np.asarray(scores, dtype=float).ravel()
    if labels.shape != scores.shape:
        raise ValueError("labels and scores must have the same length")
    if len(np.unique(labels)) < 2:
        return np.array([0.0, 1.0]), np.array([0.0, 1.0]), math.nan, dict.fromkeys(fprs, math.nan)
    fpr, tpr, _ = roc_curve(labels, scores)
    auc = float(roc_auc_score(labels, scores))
    at = {}
    for level in fprs:
        ok = fpr <= level
        at[level] = float(tpr[ok].max()) if ok.any() else 0.0
    return fpr, tpr, auc, at


def confusion_counts(guess_in, labels):
    """``{"tp", "fn", "fp", "tn"}`` of boolean membership guesses against 0/1 labels."""
    guess_in = np.asarray(guess_in, dtype=bool)
    member = np.asarray(labels) == 1
    return {
        "tp": int((guess_in & member).sum()),
        "fn": int((~guess_in & member).sum()),
        "fp": int((guess_in & ~member).sum()),
        "tn": int((~guess_in & ~member).sum()),
    }


@dataclass
class AuditResult:
    """Outcome of an empirical privacy audit.

    Attributes
    ----------
    epsilon_lb : float
        Empirical lower bound on epsilon. If the audited mechanism satisfies
        (epsilon, ``delta``)-DP, then ``epsilon_lb <= epsilon`` with probability at least
        ``confidence``. It is a *bound*, not an estimate: a weak attack gives a loose
        (small) bound, never an inflated one.
    confidence : float
        Confidence level of ``epsilon_lb``.
    delta : float
        The delta of the guarantee the bound was computed against.
    method : str
        ``"independent-trials"`` (Clopper--Pearson on TPR/FPR of one canary over many
        runs), ``"one-run"`` (Steinke et al. 2023) or ``"lira"`` (LiRA scores audited
        with the one-run test per target model, Bonferroni-corrected).
    auc : float
        Attack ROC AUC over all scored (model, example) pairs (descriptive).
    tpr_at_fpr : dict
        ``{fpr_level: tpr}`` at the levels of :data:`DEFAULT_FPRS` (descriptive).
    fpr, tpr : ndarray
        The ROC curve (descriptive).
    epsilon_claimed : float or None
        The epsilon the audited estimator claims, when known.
    details : dict
        Method-specific counts (trials, guesses, correct guesses, thresholds, ...);
        ``max_epsilon_lb`` is the largest bound the audit's sample size allows (a
        perfect attack), i.e. the audit cannot certify a violation of a claimed epsilon
        above it.
    """

    epsilon_lb: float
    confidence: float
    delta: float
    method: str
    auc: float
    tpr_at_fpr: dict
    fpr: np.ndarray = field(repr=False)
    tpr: np.ndarray = field(repr=False)
    epsilon_claimed: float | None = None
    details: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_scores(cls, method, epsilon_lb, labels, scores, **fields):
        """The result of ``method`` with its ROC summary of ``scores`` against ``labels``.

        ``fields`` are the remaining attributes (``confidence``, ``delta``,
        ``epsilon_claimed``, ``details``); ``auc``, ``tpr_at_fpr``, ``fpr`` and ``tpr``
        come from :func:`roc_summary`.
        """
        fpr, tpr, auc, at = roc_summary(labels, scores)
        roc = {"fpr": fpr, "tpr": tpr, "auc": auc, "tpr_at_fpr": at}
        return cls(epsilon_lb=epsilon_lb, method=method, **roc, **fields)

    @property
    def consistent(self):
        """``True`` unless the bound exceeds the claimed epsilon (``None`` if unknown)."""
        if self.epsilon_claimed is None:
            return None
        return bool(self.epsilon_lb <= self.epsilon_claimed)

    def summary(self):
        """One-line human-readable summary."""
        claimed = "?" if self.epsilon_claimed is None else f"{self.epsilon_claimed:g}"
        tprs = ", ".join(f"TPR@{k:g}={v:.3f}" for k, v in self.tpr_at_fpr.items())
        return (
            f"{self.method}: claimed eps={claimed}, eps_lb={self.epsilon_lb:.3f} "
            f"at {self.confidence:.0%} confidence (delta={self.delta:g}), "
            f"AUC={self.auc:.3f}, {tprs}"
        )
