"""Membership-inference attacks that bound an estimator's epsilon from one target run.

* :func:`loss_threshold_attack`: :func:`one_run_audit` with the loss (likelihood)
  scores, the threshold attack of Yeom et al. (2018).
* :func:`lira_attack`: the likelihood-ratio attack (Carlini et al. 2022) with shadow
  models trained by *the same* estimator (same hyperparameters and epsilon), online or
  offline; its epsilon bound applies the one-run test to each target model's LiRA
  scores (valid: shadows are independent of the target's inclusion bits), with a
  Bonferroni correction over target models.

Every fit gets its own explicit seed drawn from ``random_state``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from skdp.auditing._audits import one_run_audit
from skdp.auditing._bounds import one_run_epsilon_lower_bound
from skdp.auditing._fitting import _claimed, _default_k, _fit, _guesses, _n_rows, _seeds, _take
from skdp.auditing._result import AuditResult, roc_summary
from skdp.auditing._scoring import resolve_scorer
from skdp.base import _shared_constraints
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import validate_params


def loss_threshold_attack(estimator, X, y=None, **kwargs):
    """Loss (likelihood) threshold membership attack (Yeom et al. 2018).

    The score of an example is minus its loss under the trained model (the logit-scaled
    true-label confidence, the log-likelihood, minus the squared error, ...). Scored
    and bounded exactly as :func:`one_run_audit`, to which all keyword arguments go.
    """
    return one_run_audit(estimator, X, y, **kwargs)


def _norm_logpdf(x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - np.log(sigma) - 0.5 * math.log(2 * math.pi)


def _lira_scores(phi_s, phi_t, shadow_masks, variant, global_variance):
    """LiRA's score of every (target, point) pair from the shadows' Gaussian fits.

    ``phi_s`` (n_shadow, M) and ``phi_t`` (n_targets, M) are the shadow and target
    models' scores of the pool; per point, the IN and OUT shadow scores are fitted by
    Gaussians (variances pooled over the points with ``global_variance``). Returns
    ``log N(phi; mu_in, s_in) - log N(phi; mu_out, s_out)`` (online) or
    ``log Phi((phi - mu_out) / s_out)`` (offline), of shape (n_targets, M).
    """
    n_shadow, M = shadow_masks.shape
    n_in = shadow_masks.sum(0)
    n_out = n_shadow - n_in
    mu_in = np.where(n_in > 0, (phi_s * shadow_masks).sum(0) / np.maximum(n_in, 1), np.nan)
    mu_out = np.where(n_out > 0, (phi_s * ~shadow_masks).sum(0) / np.maximum(n_out, 1), np.nan)
    dev_in = np.where(shadow_masks, phi_s - mu_in, 0.0)
    dev_out = np.where(~shadow_masks, phi_s - mu_out, 0.0)
    floor = 1e-6 * (np.std(phi_s) + 1e-12)
    if global_variance:
        s_in = np.full(M, math.sqrt((dev_in**2).sum() / max(n_in.sum() - 1, 1)))
        s_out = np.full(M, math.sqrt((dev_out**2).sum() / max(n_out.sum() - 1, 1)))
    else:
        s_in = np.sqrt((dev_in**2).sum(0) / np.maximum(n_in - 1, 1))
        s_out = np.sqrt((dev_out**2).sum(0) / np.maximum(n_out - 1, 1))
    s_in, s_out = np.maximum(s_in, floor), np.maximum(s_out, floor)
    # a point never IN (or never OUT) in the shadows: borrow the average shift
    shift = np.nanmean(mu_in - mu_out) if np.any(np.isfinite(mu_in - mu_out)) else 0.0
    mu_in = np.where(np.isnan(mu_in), mu_out + shift, mu_in)
    mu_out = np.where(np.isnan(mu_out), mu_in - shift, mu_out)

    if variant == "online":
        return _norm_logpdf(phi_t, mu_in, s_in) - _norm_logpdf(phi_t, mu_out, s_out)
    return stats.norm.logcdf((phi_t - mu_out) / s_out)


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def lira_attack(
    estimator,
    X,
    y=None,
    *,
    n_shadow=16,
    n_targets=4,
    variant="online",
    global_variance=None,
    score="auto",
    k_pos=None,
    k_neg=None,
    delta=None,
    confidence=0.95,
    random_state=None,
    fit_params=None,
):
    """Likelihood-ratio membership attack (LiRA; Carlini et al. 2022, Alg. 1).

    ``n_shadow`` shadow models are fitted by clones of ``estimator`` (same
    hyperparameters and epsilon as the target) on random halves of the pool ``X``
    (exactly half, a distinct explicit seed and a distinct split each). Per pool point
    the shadow scores ``phi`` (logit-scaled confidence for classifiers,
    log-likelihood for densities; see :func:`~skdp.auditing.membership_scores`) of the
    models that saw it (IN) and did not (OUT) are fitted by Gaussians. ``n_targets``
    target models are fitted on iid Bernoulli(1/2) subsets; each (target, point) pair
    gets ``log N(phi; mu_in, s_in) - log N(phi; mu_out, s_out)`` (online) or
    ``(phi - mu_out) / s_out`` (offline).

    The ROC/AUC/TPR@FPR pool all pairs (descriptive; ``details["per_target_auc"]`` has
    each target's AUC, for medians and quantile bands across targets). The epsilon bound treats each
    target as a one-run audit of its LiRA scores (Steinke et al. 2023: guesses may use
    anything independent of the target's inclusion bits, such as the shadows) at level
    ``(1 - confidence) / n_targets`` and reports the largest (Bonferroni), so it holds
    at ``confidence``.

    Parameters
    ----------
    estimator : estimator
    X, y : array-like or DataFrame
        The pool.
    n_shadow : int, default=16
        Number of shadow models (>= 4). Per-example variances need >= 64.
    n_targets : int, default=4
    variant : {"online", "offline"}, default="online"
    global_variance : bool, optional
        Pool the IN/OUT variances across examples; default ``n_shadow < 64``.
    score, k_pos, k_neg, delta, confidence, random_state, fit_params
        As in :func:`one_run_audit`.

    Returns
    -------
    AuditResult
        ``method="lira"``; ``details`` holds per-target bounds and the shadow masks.
    """
    if variant not in ("online", "offline"):
        raise ValueError("variant must be 'online' or 'offline'")
    if n_shadow < 4 or n_targets < 1:
        raise ValueError("need n_shadow >= 4 and n_targets >= 1")
    fit_params = fit_params or {}
    eps_claimed, delta = _claimed(estimator, delta)
    if global_variance is None:
        global_variance = n_shadow < 64
    rng = make_rng(random_state)
    M = _n_rows(X)
    if M < 4:
        raise ValueError("the pool needs at least 4 rows")
    k_pos, k_neg = _default_k(M, k_pos, k_neg)
    scorer = resolve_scorer(estimator, y, score)
    seeds = _seeds(rng, n_shadow + n_targets)

    shadow_masks = np.zeros((n_shadow, M), dtype=bool)
    for k in range(n_shadow):
        shadow_masks[k, rng.permutation(M)[: M // 2]] = True
    target_masks = rng.integers(0, 2, size=(n_targets, M)).astype(bool)

    def phi_of(mask, seed):
        idx = np.flatnonzero(mask)
        est = _fit(estimator, _take(X, idx), _take(y, idx), seed, fit_params)
        return np.asarray(scorer(est, X, y), dtype=float).ravel()

    phi_s = np.array([phi_of(shadow_masks[k], seeds[k]) for k in range(n_shadow)])
    phi_t = np.array([phi_of(target_masks[t], seeds[n_shadow + t]) for t in range(n_targets)])
    phi_s = np.nan_to_num(phi_s, nan=-1e300, neginf=-1e300, posinf=1e300)
    phi_t = np.nan_to_num(phi_t, nan=-1e300, neginf=-1e300, posinf=1e300)

    lam = _lira_scores(phi_s, phi_t, shadow_masks, variant, global_variance)

    per_target = []
    conf_each = 1.0 - (1.0 - confidence) / n_targets
    for t in range(n_targets):
        T = _guesses(lam[t], k_pos, k_neg, rng)
        S = np.where(target_masks[t], 1, -1)
        r = int(np.count_nonzero(T))
        v = int(np.sum((T != 0) & (T == S)))
        per_target.append(
            (one_run_epsilon_lower_bound(M, r, v, delta=delta, confidence=conf_each), r, v)
        )
    per_target_auc = [roc_summary(target_masks[t], lam[t])[2] for t in range(n_targets)]
    return AuditResult.from_scores(
        "lira",
        max(b for b, _, _ in per_target),
        target_masks.ravel(),
        lam.ravel(),
        confidence=confidence,
        delta=delta,
        epsilon_claimed=eps_claimed,
        details={
            "variant": variant,
            "global_variance": global_variance,
            "per_target": per_target,
            "per_target_auc": per_target_auc,
            # the largest bound this audit could give (every guess of a target correct)
            "max_epsilon_lb": max(
                one_run_epsilon_lower_bound(M, r, r, delta=delta, confidence=conf_each)
                for _, r, _ in per_target
            ),
            "shadow_masks": shadow_masks,
            "target_masks": target_masks,
            "shadow_seeds": seeds[:n_shadow],
            "scores": lam,
        },
    )
