"""Exact ROC AUC / average precision and their smooth-sensitivity release.

The exact metrics from ranks, the smooth sensitivity of Nissim, Raskhodnikova and Smith
(2007) over the private class counts, and the release shared by
:func:`dp_roc_auc_score` and :func:`dp_average_precision_score` (Boyd, Lantz and Page
2015; Lantz 2016, ch. 7).
"""

from __future__ import annotations

import math

import numpy as np

from skdp.mechanisms import (
    smooth_sensitivity_beta,
    smooth_sensitivity_scale,
)
from skdp.mechanisms.sensitivity import (
    ap_group_local_sensitivity,
    ap_local_sensitivity,
    auc_group_local_sensitivity,
    auc_local_sensitivity,
    count_smooth_sensitivity,
    group_count_smooth_sensitivity,
)
from skdp.metrics._accuracy import _check_bound
from skdp.metrics._auc_interval import (
    _noisy_release,
    release_group_interval,
    release_with_interval,
)
from skdp.metrics._checks import (
    _check_gamma,
    _check_ledger,
    _check_scores,
    _check_ties,
    _positive_mask,
)
from skdp.metrics._rank_counts import dask_auc_ap, dask_rank_inputs, exact_auc_ap
from skdp.utils._groups import bound_contributions, check_dask_groups, check_groups
from skdp.utils._groups_dask import bound_dask_rows
from skdp.utils._random import release_rng
from skdp.utils._rowsum import any_dask
from skdp.utils.validation import check_privacy_params


def _exact_auc_ap(pos_mask, scores, ties="sklearn"):
    """Exact AUC and AP under the tie convention ``ties``; O(N log N) (one sort).

    ``"sklearn"``: a tied (positive, negative) pair counts 1/2 in the AUC and all rows
    with one score form one threshold of the AP, as in :func:`~sklearn.metrics.roc_auc_score`
    and :func:`~sklearn.metrics.average_precision_score`: ``AP = (1/n) sum_j T_j / (T_j +
    F_j)`` with ``T_j``, ``F_j`` the positives and negatives scored ``>= y_j``.
    ``"pessimistic"``: negatives rank above tied positives (Lantz 2016, eqs. 7.1-7.2):
    a tied pair counts 0 and the ``j``-th positive in decreasing order has precision
    ``j / (j + F_j)``.

    Returns ``(auc, ap, n_positive)``; ``auc = 0.5`` if a class is empty, ``ap = 0``
    without positives and ``1`` without negatives.
    """
    # the one-block case of the distributed formulation: bit-identical to Dask input
    return exact_auc_ap(pos_mask, scores, ties)


def _smooth_sensitivity(local_sensitivities, n, N, beta):
    """``S*_beta = max_{0<=i<=N} LS(i) exp(-beta |i - n|)`` over a window around ``n``.

    ``local_sensitivities(counts)`` returns LS for an array of counts, all values in
    (0, 1]. Terms with ``exp(-beta |i - n|) < LS(n)`` cannot beat the ``i = n`` term, so
    only ``|i - n| <= ln(1 / LS(n)) / beta`` is scanned; this equals
    :func:`~skdp.mechanisms.sensitivity.count_smooth_sensitivity` on the full range and
    keeps a call at N = 10**6 well under a second.
    """
    ls_n = float(local_sensitivities(np.array([n]))[0])
    if beta > 0 and ls_n > 0:
        half = math.ceil(math.log(1.0 / ls_n) / beta) + 1
    else:
        half = N
    lo, hi = max(0, n - half), min(N, n + half)
    counts = np.arange(lo, hi + 1)
    return count_smooth_sensitivity(local_sensitivities(counts), n - lo, beta)


def _noise_parameters(local_sensitivities, n, N, *, epsilon, delta, gamma, smooth=None):
    """Noise scale and kind of Thm 7.4 (Lantz 2016; Nissim et al. 2007), one-dimensional.

    ``local_sensitivities(counts)`` gives the local sensitivity for an array of counts in
    0..N and ``n`` is the private count. Returns ``(scale, "smooth")`` (pure DP, density
    ``1/(1+|z|^gamma)``, ``beta = epsilon / (2 (gamma + 1))``, scale
    ``2 (gamma + 1) S / epsilon``) when ``delta == 0``, else ``(scale, "laplace")``
    (``beta = epsilon / (2 ln(2/delta))``, scale ``2 S / epsilon``). The largest
    admissible ``beta`` is used. The scale depends on the private count: callers must not
    release or store it. ``smooth(beta)``, when given, is the beta-smooth bound to use
    instead (the patient-level one; ``local_sensitivities``, ``n`` and ``N`` unused).
    """
    if smooth is None:

        def smooth(beta):
            return _smooth_sensitivity(local_sensitivities, n, N, beta)

    if delta == 0.0:
        beta = smooth_sensitivity_beta(epsilon, gamma=gamma)  # epsilon / (2 (gamma + 1))
        s_star = smooth(beta)
        return smooth_sensitivity_scale(s_star, epsilon=epsilon, gamma=gamma), "smooth"
    beta = epsilon / (2.0 * math.log(2.0 / delta))
    s_star = smooth(beta)
    return 2.0 * s_star / epsilon, "laplace"


def _dp_ranking_metric(
    which,
    y_true,
    y_score,
    *,
    epsilon,
    delta,
    random_state,
    ledger,
    pos_label,
    gamma,
    form,
    ties,
    groups=None,
    max_rows_per_group=None,
    interval_alpha=None,
):
    ties = _check_ties(ties)
    k = _check_bound(groups, max_rows_per_group, y_true, y_score)
    dask_input = any_dask(y_true, y_score)
    if dask_input:  # checked and counted per partition; the rows stay on the workers
        pos_mask, scores, N = dask_rank_inputs(y_true, y_score, pos_label)
    else:
        pos_mask = _positive_mask(y_true, pos_label, allow_empty=groups is not None)
        N = pos_mask.shape[0]
        scores = _check_scores(y_score, N)
    if groups is None:
        codes = None
    else:  # on Dask: bounded on the workers after Dask's shuffle by patient
        codes = check_dask_groups(groups, N) if dask_input else check_groups(groups, N)
    # delta's warning threshold counts rows (public); the number of patients is private
    units = N if codes is None else None
    epsilon, delta = check_privacy_params(epsilon, delta, n_samples=units)
    gamma = _check_gamma(gamma)
    # the metric, its budget, its options and its inputs are bound into the seed
    # material: two metrics (or two budgets) on one input never share noise under one seed
    params = {"epsilon": epsilon, "delta": delta, "gamma": gamma, "form": form, "ties": ties}
    if interval_alpha is not None:  # another split of epsilon: another release
        params["interval_alpha"] = interval_alpha
    if codes is None:
        seed = {"params": params, "data": (pos_mask, scores), "order_invariant": True}
    else:  # the grouping and k too; order-dependent in memory (the kept rows depend on
        # the order; on Dask they do not, and Dask input is digested as a multiset)
        seed = {
            "params": {**params, "max_rows_per_group": k},
            "data": (pos_mask, scores, codes),
            "order_invariant": dask_input,
        }
    rng = release_rng(random_state, tag=f"dp_{which}_score", **seed)
    if ledger is not None:
        _check_ledger(ledger)
        if codes is None:
            ledger.spend(epsilon, delta, label=f"dp_{which}_score")
        else:
            ledger.spend(epsilon, delta, label=f"dp_{which}_score", unit="group")
    if codes is not None and dask_input:  # at most k rows a patient, on the workers
        (pos_mask, scores), N = bound_dask_rows([pos_mask, scores], codes, k, rng)
    elif codes is not None:  # at most k rows a patient, chosen uniformly at random
        keep = bound_contributions(codes, k, rng)
        pos_mask, scores = pos_mask[keep], scores[keep]
        N = int(pos_mask.shape[0])
    if dask_input:
        auc, ap, n = dask_auc_ap(pos_mask, scores, ties, N)
    else:
        auc, ap, n = _exact_auc_ap(pos_mask, scores, ties)
    value = auc if which == "roc_auc" else ap
    if interval_alpha is not None:  # the AUC; per patient when k is not None
        return _release_with_interval(
            value, n, N, k, form, rng, epsilon, delta, gamma, interval_alpha
        )
    if math.isinf(epsilon):
        return float(np.clip(value, 0.0, 1.0))
    if codes is None:
        scale, kind = _noise_parameters(
            _row_local_sensitivities(which, N, ties, form),
            n,
            N,
            epsilon=epsilon,
            delta=delta,
            gamma=gamma,
        )
    else:
        smooth = _group_smooth(which, n, N - n, k, form)
        scale, kind = _noise_parameters(
            None, None, None, epsilon=epsilon, delta=delta, gamma=gamma, smooth=smooth
        )
    return _noisy_release(value, scale, kind, gamma, rng)


def _release_with_interval(value, n, N, k, form, rng, epsilon, delta, gamma, alpha):
    """The AUC and its noise-aware interval (:mod:`skdp.metrics._auc_interval`): per
    row (``k=None``, :func:`~skdp.metrics._auc_interval.release_with_interval`) or per
    patient (:func:`~skdp.metrics._auc_interval.release_group_interval`)."""
    budget = {"epsilon": epsilon, "delta": delta, "gamma": gamma, "alpha": alpha}
    if k is None:
        local = _row_local_sensitivities("roc_auc", N, None, None)

        def scale_at(count, eps):
            return _noise_parameters(local, count, N, epsilon=eps, delta=delta, gamma=gamma)

        return release_with_interval(value, n, N, rng, scale_at=scale_at, **budget)

    def group_scale_at(count, eps):  # the patient-level smooth bound at min(n, m) = count
        smooth = _group_smooth("roc_auc", count, count, k, form)
        return _noise_parameters(
            None, None, None, epsilon=eps, delta=delta, gamma=gamma, smooth=smooth
        )

    return release_group_interval(value, n, N - n, k, rng, scale_at=group_scale_at, **budget)


def _row_local_sensitivities(which, N, ties, form):
    """Replace one row, ``N`` public: ``LS(counts)`` for an array of positive counts."""

    def local_sensitivities(counts):
        if which == "roc_auc":  # the same bound for both tie conventions
            return auc_local_sensitivity(counts, N - counts)
        return ap_local_sensitivity(counts, ties=ties, form=form, cap=True)

    return local_sensitivities


def _group_smooth(which, n, m, k, form):
    """``beta -> S*_beta`` per patient (add/remove one patient of at most ``k`` rows):
    :func:`~skdp.mechanisms.sensitivity.group_count_smooth_sensitivity` over
    ``min(n, m)`` (AUC) or ``n`` (AP), either tie convention."""
    if which == "roc_auc":
        count = min(n, m)

        def local(s):
            return auc_group_local_sensitivity(s, s, k)

    else:
        count = n

        def local(c):
            return ap_group_local_sensitivity(c, k, form=form)

    def smooth(beta):
        return group_count_smooth_sensitivity(local, count, k, beta)

    return smooth
