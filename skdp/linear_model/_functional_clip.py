"""Norm clipping of each patient's summed statistics in :class:`DPLinearRegression`
(``groups`` with ``contribution="clip"``, :doc:`/patients`).

The released vector. With ``x~`` a scaled feature row followed (with an intercept) by a
constant 1, ``d`` its length (``d' = p + 1``, or ``p`` without an intercept), ``u = y~ -
m`` the centred, clipped target (``|u| <= 1``, ``m`` the private mean of the centre
stage) and ``w`` the target weight, one row's term is

    ``t(z) = (upper(x~ x~^T), w u x~)``,

the upper triangle of ``x~ x~^T`` and the weighted ``X~^T u`` entries, the corner ``1 *
1`` (the row's count, with an intercept) released last. Its norm is at most the row
bound ``R``: ``d (d + 1) / 2 + w d`` in L1 (the Laplace release), ``sqrt(d (d + 1) / 2
+ w^2 d)`` in L2 (the Gaussian one), attained at a corner of the box. Patient ``p``
with rows ``i in p`` has the summed statistics ``S_p = sum_{i in p} t(z_i)`` (every
row, unweighted), and contributes

    ``c_p S_p`` with ``c_p = min(1, k R / ||S_p||, k d / tr_p)``,

``k = max_rows_per_group``, ``tr_p = sum_{i in p} ||x~_i||^2`` the trace of the
patient's Gram matrix. The released vector is ``s = sum_p c_p S_p`` (its last entry
the clipped count ``sum_p c_p n_p``, with the same noise), plus the noise of the plan.

Sensitivity. ``c_p`` is a function of patient ``p``'s own rows (and of public ``k``,
``R``, ``d`` and the released mean ``m``), so adding or removing one patient ``q``
leaves every other ``c_p S_p`` as it was and moves ``s`` by ``c_q S_q``, of norm ``c_q
||S_q|| <= k R``: the plan's sensitivity ``k R`` (``group_sensitivity`` of the row
bound, in the same norm). The bound is reached by a patient with at least ``k`` rows at
one corner of the box. The smallest eigenvalue of ``M = sum_p c_p sum_{i in p} x~_i
x~_i^T`` moves by at most the largest eigenvalue of the positive semi-definite ``c_q
sum_{i in q} x~_i x~_i^T``, at most its trace ``c_q tr_q <= k d`` (Weyl): the plan's
eigenvalue sensitivity. Conditioning on the released mean ``m`` (released first, with
its own budget) this is sequential composition, as for ``contribution="weight"``.

Floating point. ``S_p`` is summed in float64 (sorted by patient; the order of a
patient's rows in the input decides the last bits), so ``c_p`` is computed against an
upper bound of the exact norm: the computed norm plus ``4 (n_p + E + 2) 2^-53 A_p``
(Higham's bound of a sum of ``n_p`` rounded products, ``A_p`` the sum of the rows'
absolute terms, ``E`` the length of ``t``); then ``c_p ||S_p|| <= k R`` holds for the
exact sums. The guarantee is for that mechanism; the released sum ``sum_p c_p S_p`` is a
float64 sum (not the fixed-point sums of ``"weight"``).

The centre stage (the target's private mean and variance) keeps the weights ``min(1,
k / n_p)`` of ``"weight"`` and their public total ``n = sum_p min(n_p, k)``; every
later step that needs the statistics' count (the Gram's corner, the ridge's feature
variances, ``released_statistics_["n"]``) reads the released count, clamped to at least
1. Without an intercept nothing counts the rows and no count is released.
"""

from __future__ import annotations

import numpy as np

from skdp.linear_model._functional_release import _scaled_rows
from skdp.linear_model._inference import CLIP_INFERENCE_REFUSAL

__all__ = ["check_clip", "clipped_statistics"]

#: values of per-row terms per block of rows (8 MiB of float64)
_BLOCK_CELLS = 1 << 20
#: unit roundoff of float64
_U = 2.0**-53


def check_clip(est, codes, dask_input):
    """Refuse what ``contribution="clip"`` with ``groups`` does not support, naming
    ``contribution``: Dask input, and ``inference=True`` (the intervals assume the public
    count that clipping replaces by a released one)."""
    if codes is None or est.contribution != "clip":
        return
    if dask_input:
        raise ValueError(
            "contribution='clip' is not supported for Dask input: clipping needs each "
            "patient's summed statistics together; use contribution='weight' (the "
            "default) or fit in memory"
        )
    if est.inference:
        raise ValueError(CLIP_INFERENCE_REFUSAL)


def clipped_statistics(X, y, scaling, centre, plan, columns, clip, codes):
    """``(M, b)``: ``M = sum_p c_p X~_p^T X~_p`` (its corner the clipped count with an
    intercept) and ``b = sum_p c_p X~_p^T u_p`` (module docstring), to be released by
    :func:`skdp.linear_model._functional_release._release` with
    ``plan.count_released``."""
    lo, hi, ylo, yhi, ax, cx, ay, cy = scaling.args()
    d = plan.p + int(plan.fit_intercept)
    rows, cols = np.triu_indices(d)
    n_gram = rows.size
    order = np.argsort(codes, kind="stable")
    new = np.r_[True, codes[order][1:] != codes[order][:-1]]
    patient = np.cumsum(new) - 1  # 0 .. P-1 along the sorted rows
    n_p = np.bincount(patient).astype(np.float64)
    # per patient: the Gram entries, X~^T u, the trace and A_p (sum of absolute terms)
    sums = np.zeros((n_p.size, n_gram + d + 2))
    step = max(1, _BLOCK_CELLS // (n_gram + d + 2))
    for start in range(0, order.size, step):
        idx = order[start : start + step]
        Z = _scaled_rows(
            X[idx], y[idx], lo, hi, ylo, yhi, ax, cx, ay, cy - centre.mean, clip, columns
        )
        x = Z[:, : plan.p] if not plan.fit_intercept else np.delete(Z, plan.p, axis=1)
        u = Z[:, plan.p]
        gram = x[:, rows] * x[:, cols]
        target = x * u[:, None]
        absolute = np.abs(gram).sum(1) + plan.target_weight * np.abs(target).sum(1)
        terms = np.column_stack([gram, target, (x * x).sum(1), absolute])
        pid = patient[start : start + step]
        cuts = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
        sums[pid[cuts]] += np.add.reduceat(terms, cuts, axis=0)
    factors = _clip_factors(sums, n_p, n_gram, d, plan)
    M = np.zeros((d, d))
    M[rows, cols] = factors @ sums[:, :n_gram]
    M[cols, rows] = M[rows, cols]
    return M, factors @ sums[:, n_gram : n_gram + d]


def _clip_factors(sums, n_p, n_gram, d, plan):
    """``c_p = min(1, k R / ||S_p||, k d / tr_p)`` (``k R`` the plan's sensitivity, ``k
    d`` its eigenvalue sensitivity) against upper bounds of the exact
    norm and trace (module docstring, "Floating point")."""
    w = plan.target_weight
    gram, target = sums[:, :n_gram], sums[:, n_gram : n_gram + d]
    trace, absolute = sums[:, -2], sums[:, -1]
    n_terms = n_gram + d
    if plan.gaussian:
        norm = np.sqrt((gram * gram).sum(1) + w * w * (target * target).sum(1))
    else:
        norm = np.abs(gram).sum(1) + w * np.abs(target).sum(1)
    error = 4.0 * (n_p + n_terms + 2) * _U * absolute * (1.0 + 4.0 * n_terms * _U)
    norm = norm * (1.0 + 4.0 * n_terms * _U) + error
    trace = trace * (1.0 + 4.0 * n_terms * _U) + error
    out = np.ones(n_p.size)
    big = norm > plan.sensitivity
    out[big] = plan.sensitivity / norm[big]
    wide = trace > plan.eigenvalue_sensitivity  # k d
    out[wide] = np.minimum(out[wide], plan.eigenvalue_sensitivity / trace[wide])
    # one rounding of the division (and of the product c_p S_p): a relative margin
    return out * (1.0 - 8.0 * _U)
