"""Release kernels of :class:`DPLinearRegression` (Zhang et al. 2012; Wang 2018).

The scaled objective's coefficients, their noisy release (Laplace, exact grid Laplace or
Gaussian, with the private smallest eigenvalue of AdaSSP) and the trimmed minimiser.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from skdp.linear_model._functional_weights import weighted_gram
from skdp.mechanisms import gaussian_sigma, laplace_noise, resolve_bounds
from skdp.mechanisms._discrete import grid_laplace, random_source
from skdp.mechanisms.sensitivity import (
    sufficient_statistics_sensitivity,
    target_moments_sensitivity,
)
from skdp.utils._data_free import nonfinite_error
from skdp.utils._rowsum import (
    FRACTION_BITS,
    any_dask,
    check_dask_input,
    fixed_point_gram,
    fixed_point_to_float,
    row_sum,
)
from skdp.utils.validation import (
    check_bounds,
    check_clip_bounds_declared,
    check_no_fit_params,
    data_bounds,
    validate_data,
)

#: eigenvalues of the noisy, regularised quadratic form below this are dropped (Matlab code)
EIGENVALUE_THRESHOLD = 1e-8
#: share of the budget after the bounds that the private smallest eigenvalue gets
#: (``regularization="adaptive"``; a share of epsilon, or of mu^2 for the Gaussian)
EIGENVALUE_SHARE = 0.05
#: the eigenvalue estimate is shifted down by its noise's upper (1 - EIGENVALUE_TAIL)
#: quantile, so it overestimates the true value with probability at most this
EIGENVALUE_TAIL = 0.05
#: nominal squared norm of the scaled coefficients that sets the weight of X~^T y~
NOMINAL_COEF_SQ = 0.25
#: the adaptive ridge is RIDGE_SCALE d' sd^2 / max(lambda~, sd): the noise variance over the
#: signal of one direction (Notes of DPLinearRegression)
RIDGE_SCALE = 0.5
#: the regularised noisy Gram matrix keeps smallest eigenvalue >= RIDGE_GUARD sd
RIDGE_GUARD = 3.0
#: share of the budget after the bounds spent on the private mean and variance of the
#: target (with an intercept): CENTRE_SCALE / (n epsilon), at least CENTRE_SHARE_MIN; at
#: n epsilon <= CENTRE_SCALE the whole budget goes to the mean (the model is the private
#: mean). Introduced so that the default works on small tables: the error of the mean
#: must stay small against the target's spread even for a skewed count declared far wider
#: than it spreads (Notes of DPLinearRegression)
CENTRE_SCALE = 50.0
CENTRE_SHARE_MIN = 0.05
#: a patient-level fit (``groups``, at most ``k`` rows a patient) releases the private
#: mean only when ``(n / k) epsilon <= PATIENT_SLOPE_SCALE d'`` (half of CENTRE_SCALE per
#: coefficient; :func:`skdp.linear_model._functional_plan._patient_mean_only`)
PATIENT_SLOPE_SCALE = 25.0
#: the ridge's nominal squared norm of the scaled coefficients is VARIANCE_RATIO times the
#: private variance of the centred target over the mean private variance of the features
VARIANCE_RATIO = 0.5


def _check_inside(X, lo, hi, columns):
    out = np.any((X < lo) | (X > hi), axis=0)
    if out.any():
        labels = ", ".join(repr(columns[j]) for j in np.nonzero(out)[0])
        raise ValueError(
            f"values outside the declared bounds in column(s) {labels}; pass clip=True to clip them"
        )


def _scaled_gram_block(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip, columns):
    """Exact partial of ``Z^T Z`` for one block of rows, ``Z = [x~, y~, 1]``
    (:func:`_scaled_rows`), accumulated in fixed point
    (:func:`skdp.utils._rowsum.fixed_point_gram`): the total is bit-identical for every
    split of the rows into blocks, in memory or on Dask workers."""
    return fixed_point_gram(_scaled_rows(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip, columns))


def _scaled_rows(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip, columns):
    """``Z = [x~, y~, 1]`` of one block of rows: validated (finite values; inside the
    bounds when ``clip=False``), clipped to the declared bounds and scaled into ``[-1,
    1]``."""
    try:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
    except (ValueError, TypeError):  # numpy's message quotes the value
        raise ValueError(
            "X and y must be numeric: a block could not be converted to float64 (the value "
            "is not shown)"
        ) from None
    if not np.isfinite(X).all():
        raise nonfinite_error(X, "X")  # NaN: skdp's advice (impute privately, or drop)
    if not np.isfinite(y).all():
        raise nonfinite_error(y, "y")
    if not clip:
        _check_inside(X, lo, hi, columns)
        _check_inside(y[:, None], np.array([ylo]), np.array([yhi]), ["y"])
    Z = np.empty((X.shape[0], X.shape[1] + 2))
    Z[:, :-2] = np.clip(X, lo, hi) * ax + cx
    Z[:, -2] = np.clip(y, ylo, yhi) * ay + cy
    Z[:, -1] = 1.0
    np.clip(Z, -1.0, 1.0, out=Z)  # rounding of the affine map never leaves [-1, 1]
    return Z


def _objective_coefficients(
    X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, fit_intercept, *, clip=True, columns=None, weights=None
):
    """``M = X~^T X~`` and ``alpha = -2 X~^T y~`` on clipped, scaled data.

    One exact pass over the rows (:func:`skdp.utils._rowsum.row_sum`): in blocks on the
    client for numpy input (extra memory O(block * d + d^2), independent of ``n``), one
    task per partition for Dask input (only the ``(d + 1) x (d + 1)`` total comes back).
    Every product is accumulated in fixed point with ``2^-39`` resolution, so the result
    is the same bit for bit whatever the chunking and differs from a float64
    accumulation by at most ``n 2^-38`` per entry.
    """
    p = X.shape[1]
    d = p + int(fit_intercept)
    S = _scaled_gram(
        X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip=clip, columns=columns, weights=weights
    )
    M = np.empty((d, d))
    M[:p, :p] = S[:p, :p]
    alpha = np.empty(d)
    alpha[:p] = -2.0 * S[:p, p]
    if fit_intercept:
        M[p, :p] = S[:p, p + 1]
        M[:p, p] = S[:p, p + 1]
        M[p, p] = S[p + 1, p + 1]  # n, exactly
        alpha[p] = -2.0 * S[p, p + 1]
    return M, alpha


def _target_weight(n_features, *, fit_intercept=True, gaussian=False):
    """Weight ``w`` of ``X~^T y~`` in the released statistics: ``(4 T / d')^(1/3)``
    for Laplace noise, ``(4 T / d')^(1/4)`` for Gaussian noise, ``T`` the number of
    released entries of ``X~^T X~``.

    With ``sigma_G`` the noise of one Gram entry and ``sigma_b = sigma_G / w`` that of
    one entry of ``X~^T y~``, the normal equations ``(G + E) b = X~^T y~ + e`` carry
    noise of variance ``sigma_b^2 + sigma_G^2 ||b||^2`` per coordinate. For the
    Laplace release ``sigma_G`` is proportional to ``T + w d'`` (the L1 sensitivity),
    so ``(T + w d')^2 (1 / w^2 + ||b||^2)`` is minimal at ``w^3 = T / (d' ||b||^2)``;
    for the Gaussian one to ``sqrt(T + w^2 d')``, minimal at ``w^4 = T / (d'
    ||b||^2)``. ``||b||^2 = NOMINAL_COEF_SQ = 1/4`` (scaled coefficients: targets and
    features in ``[-1, 1]``) was the best nominal value on the benchmark grid.
    """
    p = int(n_features)
    d = p + int(bool(fit_intercept))
    n_gram = _gram_index(d, fit_intercept)[0].size
    ratio = n_gram / (NOMINAL_COEF_SQ * d)
    return ratio ** (0.25 if gaussian else 1.0 / 3.0)


def _gram_index(d, fit_intercept):
    """Row and column indices of the released entries of the ``d x d`` Gram matrix: the
    upper triangle, diagonal included, without the corner ``n`` when there is an
    intercept."""
    rows, cols = np.triu_indices(d)
    if fit_intercept:
        keep = ~((rows == d - 1) & (cols == d - 1))
        rows, cols = rows[keep], cols[keep]
    return rows, cols


def _release(M, b, plan, streams):
    """The private releases of ``plan``: the smallest eigenvalue of ``M`` (``adaptive``)
    and the statistics ``s = (upper(M) without the corner, w b)`` (followed by the
    corner, the clipped count, where ``plan.count_released``: ``contribution="clip"``).

    Returns a dict with the noisy Gram matrix and ``X~^T y~``, the shifted and floored
    eigenvalue (``None`` when not released) and the noise scales that were used (the
    plan's, or the grid releases' own with ``secure_mode``) with the standard deviation
    of one Gram entry's noise, and ``n``: the public ``plan.n``, or the released count
    clamped to at least 1 (``plan.count_released``), which every later step reads.
    """
    d = M.shape[0]
    rows, cols = _gram_index(d, plan.fit_intercept)
    w = plan.target_weight
    stats = np.concatenate([M[rows, cols], w * b])
    if plan.count_released:  # the corner last: the other entries keep their noise draws
        stats = np.append(stats, M[d - 1, d - 1])
    scale, scale_eig, sd = plan.noise_scale, plan.eigenvalue_scale, plan.entry_sd
    lam_noisy = None
    if math.isinf(plan.eps_objective):
        noisy = stats
    elif plan.gaussian:
        noisy = stats + streams["noise"].normal(0.0, scale, size=stats.size)
        if plan.adaptive:
            lam = float(np.linalg.eigvalsh(M)[0])
            lam_noisy = lam + float(streams["eigenvalue"].normal(0.0, scale_eig))
            lam_noisy -= scale_eig * float(ndtri(1.0 - EIGENVALUE_TAIL))
    else:
        if plan.secure_mode:
            noisy, scale = _grid_laplace_release(stats, plan.sensitivity, plan.eps_objective)
            sd = math.sqrt(2.0) * scale
        else:
            noisy = stats + laplace_noise(stats.size, scale=scale, rng=streams["noise"])
        if plan.adaptive:
            lam = float(np.linalg.eigvalsh(M)[0])
            if plan.secure_mode:
                released, scale_eig = _grid_laplace_release(
                    np.array([lam]), plan.eigenvalue_sensitivity, plan.eps_eigenvalue
                )
                lam_noisy = float(released[0])
            else:
                lam_noisy = lam + float(
                    laplace_noise(None, scale=scale_eig, rng=streams["eigenvalue"])
                )
            lam_noisy -= scale_eig * math.log(1.0 / (2.0 * EIGENVALUE_TAIL))
    gram = np.zeros((d, d))
    gram[rows, cols] = noisy[: rows.size]
    gram[cols, rows] = noisy[: rows.size]
    if plan.count_released:  # the noisy count, at least 1 (post-processing)
        gram[d - 1, d - 1] = max(float(noisy[-1]), 1.0)
    elif plan.fit_intercept:
        gram[d - 1, d - 1] = plan.n
    return {
        "n": float(gram[d - 1, d - 1]) if plan.count_released else plan.n,
        "gram": gram,
        "target": noisy[rows.size : rows.size + d] / w,
        "scale": scale,
        "entry_sd": sd,
        "eigenvalue_scale": scale_eig,
        "min_eigenvalue": None if lam_noisy is None else max(lam_noisy, 0.0),
    }


def _adaptive_ridge(M_noisy, min_eigenvalue, entry_sd, factor=1.0):
    """``max(0, f c d' sd^2 / max(lambda~, sd), g sd - lambda_min(M_noisy))`` with ``c =
    RIDGE_SCALE``, ``g = RIDGE_GUARD`` and ``f = factor`` (:func:`_ridge_factor`): the
    ridge that balances the noise of one direction against its signal, and at least
    enough to give the noisy matrix smallest eigenvalue ``g sd`` (post-processing of
    private values and public numbers only)."""
    d = M_noisy.shape[0]
    if entry_sd == 0.0:
        return 0.0
    lam_noisy_matrix = float(np.linalg.eigvalsh(M_noisy)[0])
    signal = max(float(min_eigenvalue), entry_sd)
    # sd * (sd / signal) <= sd: no overflow where sd**2 would (a tiny epsilon)
    balance = (
        RIDGE_SCALE * d * entry_sd**2 / signal
        if entry_sd < 1e150
        else RIDGE_SCALE * d * entry_sd * (entry_sd / signal)
    )
    return max(0.0, factor * balance, RIDGE_GUARD * entry_sd - lam_noisy_matrix)


def _centre_share(n, epsilon):
    """Share of ``epsilon`` (after the bounds) for the target's private mean and
    variance: ``min(1, max(CENTRE_SHARE_MIN, CENTRE_SCALE / (n epsilon)))`` (public)."""
    if math.isinf(epsilon):
        return 0.0
    return min(1.0, max(CENTRE_SHARE_MIN, CENTRE_SCALE / (n * epsilon)))


def _scaled_gram(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, *, clip, columns, weights=None):
    """Exact Gram of ``[x~, y~, 1]`` on the clipped, scaled rows (one fixed-point pass),
    rounded once to float64: the one data pass of every sufficient-statistic release.
    ``weights = (sizes, k)``: each row weighted by ``min(1, k / n_p)``
    (:mod:`skdp.linear_model._functional_weights`)."""
    columns = list(range(X.shape[1])) if columns is None else columns
    block = functools.partial(
        _scaled_gram_block,
        lo=lo,
        hi=hi,
        ylo=ylo,
        yhi=yhi,
        ax=ax,
        cx=cx,
        ay=ay,
        cy=cy,
        clip=clip,
        columns=columns,
    )
    if weights is not None:
        return weighted_gram(block, X, y, weights, 2 * FRACTION_BITS)
    total = row_sum(block, X, y)
    if total is None:
        raise ValueError("X has 0 samples")
    return fixed_point_to_float(total)


def _target_moments(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, *, clip, columns, weights=None):
    """Exact ``(sum y~, sum y~^2)`` of the clipped, scaled target (the pass of
    :func:`_scaled_gram`, as in :func:`_objective_coefficients`; weighted with
    ``weights``)."""
    S = _scaled_gram(
        X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip=clip, columns=columns, weights=weights
    )
    p = X.shape[1]
    return float(S[p, p + 1]), float(S[p, p])


def _release_target_moments(sum_y, sum_sq, n, epsilon, *, secure_mode, rng, sensitivity=None):
    """Release ``(sum y~, sum (y~^2 - 1/2))`` with Laplace noise (L1 sensitivity 3/2,
    :func:`skdp.mechanisms.sensitivity.target_moments_sensitivity`); return the private
    mean (clipped to ``[-1, 1]``), the private variance (floored at ``max(1 / (n
    epsilon), 1e-4)``) and the noise scale. Post-processing after the release only."""
    sens = target_moments_sensitivity(norm="l1") if sensitivity is None else sensitivity
    stats = np.array([sum_y, sum_sq - 0.5 * n])
    if secure_mode:
        noisy, scale = _grid_laplace_release(stats, sens, epsilon)
    else:
        scale = sens / epsilon
        noisy = stats + laplace_noise(2, scale=scale, rng=rng)
    mean = float(np.clip(noisy[0] / n, -1.0, 1.0))
    second = float(noisy[1] / n + 0.5)
    var = max(second - mean * mean, 1.0 / (n * epsilon), 1e-4)
    return mean, min(var, 1.0), float(scale)


def _ridge_factor(gram_noisy, n, p, target_weight, target_variance):
    """Scale of the ridge's balance term for a target of private variance ``v`` (scaled
    units): ``((1/w^2 + B) / B) / ((1/w^2 + 1/4) / (1/4))`` with the nominal squared
    coefficient norm ``B = VARIANCE_RATIO v / v_x`` (``v_x`` the mean private variance of
    the scaled features, read off the noisy statistics) in place of the fixed ``1/4``
    that sets the target weight. Post-processing of private values only."""
    d = gram_noisy.shape[0]
    if p == 0:
        return 1.0
    sums = gram_noisy[:p, d - 1] / n
    vx = float(np.mean(np.diag(gram_noisy)[:p] / n - sums**2))
    vx = max(vx, 1e-3)
    B = min(max(VARIANCE_RATIO * target_variance / vx, 1e-4), 1e4)
    inv_w2 = 1.0 / target_weight**2
    return ((inv_w2 + B) / B) / ((inv_w2 + NOMINAL_COEF_SQ) / NOMINAL_COEF_SQ)


def _choose_mechanism(p, *, fit_intercept, epsilon, delta, adaptive):
    """``mechanism="auto"``: the release whose noise on one Gram entry is smaller, a
    public rule of ``p``, ``epsilon`` and ``delta`` (Laplace when ``delta == 0``)."""
    if delta <= 0 or math.isinf(epsilon):
        return "functional"
    share = EIGENVALUE_SHARE if adaptive else 0.0
    w_l = _target_weight(p, fit_intercept=fit_intercept, gaussian=False)
    sd_l = (
        math.sqrt(2.0)
        * sufficient_statistics_sensitivity(p, fit_intercept=fit_intercept, target_weight=w_l)
        / ((1.0 - share) * epsilon)
    )
    w_g = _target_weight(p, fit_intercept=fit_intercept, gaussian=True)
    sens_g = sufficient_statistics_sensitivity(
        p, fit_intercept=fit_intercept, target_weight=w_g, norm="l2"
    )
    sd_g = (
        sens_g
        * gaussian_sigma(sensitivity=1.0, epsilon=epsilon, delta=delta)
        / math.sqrt(1.0 - share)
    )
    return "gaussian" if sd_g < sd_l else "functional"


def _grid_laplace_release(values, sensitivity, epsilon):
    """Release ``values`` with the floating-point-safe grid Laplace mechanism.

    One call on the whole vector (its L1 sensitivity is ``sensitivity``), noise from
    ``os.urandom``; returns the released values and the noise scale ``D Λ / ε'``.
    """
    source = random_source(secure_mode=True)
    out, (grid, big_d, eps_q) = grid_laplace(
        values, sensitivity=sensitivity, epsilon=epsilon, source=source
    )
    return out, float(big_d * grid / float(eps_q))


def _trimmed_minimiser(M, alpha):
    """Minimise ``w^T M w + alpha^T w`` over the eigen-directions of ``M`` with
    eigenvalue >= EIGENVALUE_THRESHOLD; return ``(w, n_kept)``."""
    lam, V = np.linalg.eigh(M)
    keep = lam >= EIGENVALUE_THRESHOLD
    Vk, lk = V[:, keep], lam[keep]
    g = -0.5 * (Vk.T @ alpha) / lk
    return Vk @ g, int(keep.sum())


@dataclass(frozen=True)
class _Scaling:
    """The public affine maps onto ``[-1, 1]`` (or, without an intercept, division by
    the largest absolute bound): ``x~ = ax x + cx``, ``y~ = ay y + cy``."""

    lo: np.ndarray
    hi: np.ndarray
    ylo: float
    yhi: float
    ax: np.ndarray
    cx: np.ndarray
    ay: float
    cy: float

    @classmethod
    def build(cls, lo, hi, ylo, yhi, *, fit_intercept):
        if fit_intercept:
            ax, cx = 2.0 / (hi - lo), -2.0 * lo / (hi - lo) - 1.0
            ay, cy = 2.0 / (yhi - ylo), -2.0 * ylo / (yhi - ylo) - 1.0
        else:
            ax, cx = 1.0 / np.maximum(np.abs(lo), np.abs(hi)), np.zeros(lo.shape[0])
            ay, cy = 1.0 / max(abs(ylo), abs(yhi)), 0.0
        return cls(lo, hi, ylo, yhi, ax, cx, ay, cy)

    def args(self):
        """``(lo, hi, ylo, yhi, ax, cx, ay, cy)`` for the release kernels."""
        return self.lo, self.hi, self.ylo, self.yhi, self.ax, self.cx, self.ay, self.cy


@dataclass(frozen=True)
class _Centre:
    """The target's private mean and variance in scaled units (0 and ``None`` without
    an intercept) and the Laplace scale of their release (0 when not released)."""

    mean: float = 0.0
    variance: float | None = None
    scale: float = 0.0


def _release_centre(X, y, scaling, plan, rng, columns, clip, weights=None):
    """Stage 1 (with an intercept): release the target's private mean and variance;
    the statistics are then those of ``y~ - mean``, clipped to ``[-1, 1]`` (Notes)."""
    if plan.eps_centre <= 0.0:
        return _Centre()
    sum_y, sum_sq = _target_moments(
        X, y, *scaling.args(), clip=clip, columns=columns, weights=weights
    )
    mean, var, scale = _release_target_moments(
        sum_y,
        sum_sq,
        plan.n,
        plan.eps_centre,
        secure_mode=plan.secure_mode,
        rng=rng,
        sensitivity=plan.centre_sensitivity,
    )
    return _Centre(mean, var, scale)


def _statistics(X, y, scaling, centre, plan, columns, clip, weights=None):
    """``(M, b)``: the exact ``X~^T X~`` and ``X~^T u`` (``u = y~ - mean``) of the
    clipped, scaled rows, to be released by :func:`_release`."""
    lo, hi, ylo, yhi, ax, cx, ay, cy = scaling.args()
    M, alpha = _objective_coefficients(
        X,
        y,
        lo,
        hi,
        ylo,
        yhi,
        ax,
        cx,
        ay,
        cy - centre.mean,
        plan.fit_intercept,
        clip=clip,
        columns=columns,
        weights=weights,
    )
    return M, -0.5 * alpha


def _is_private(value):
    """The explicit opt-in to a private bounds estimate (``"private"``)."""
    return isinstance(value, str) and value == "private"


def _resolve_bounds(est, X, y, epsilon, rng, columns, max_rows_per_group=None):
    """``((lo, hi), (ylo, yhi), epsilon_used)``: the declared bounds of ``est``, or a
    private estimate (refused where it cannot be reliable, unless ``"private"``; per
    patient on rows bounded to ``max_rows_per_group``), or the non-private ``"data"``
    opt-in."""
    p = X.shape[1]
    # None: a private estimate, refused where it cannot be reliable; "private": the
    # explicit opt-in to it; "data": the non-private read
    need_x = est.bounds_X is None or _is_private(est.bounds_X)
    need_y = est.bounds_y is None or _is_private(est.bounds_y)
    eps_used = 0.0
    if isinstance(est.bounds_X, str) and not need_x:
        lo, hi = data_bounds(X, name="bounds_X")
    elif not need_x:
        names = list(est.feature_names_in_) if hasattr(est, "feature_names_in_") else None
        lo, hi = check_bounds(est.bounds_X, p, name="bounds_X", columns=names)
    if isinstance(est.bounds_y, str) and not need_y:
        ylo, yhi = data_bounds(y[:, None], name="bounds_y")
    elif not need_y:
        ylo, yhi = check_bounds(est.bounds_y, 1, name="bounds_y")
    if need_x or need_y:
        blocks = ([X] if need_x else []) + ([y[:, None]] if need_y else [])
        names = (columns if need_x else []) + (["y"] if need_y else [])
        params = [("bounds_X", est.bounds_X)] if need_x else []
        params += [("bounds_y", est.bounds_y)] if need_y else []
        V = np.hstack(blocks) if len(blocks) > 1 else blocks[0]
        # one joint estimate: the opt-in holds only if every estimated parameter opts in
        opt_in = all(_is_private(v) for _, v in params)
        elo, ehi, eps_used = resolve_bounds(
            "private" if opt_in else None,
            V,
            epsilon=epsilon,
            rng=rng,
            name=[k for k, v in params if not _is_private(v)] or [k for k, _ in params],
            columns=names,
            max_rows_per_group=max_rows_per_group,
        )
        elo, ehi = np.asarray(elo, dtype=float), np.asarray(ehi, dtype=float)
        if need_x:
            lo, hi = elo[:p], ehi[:p]
        if need_y:
            ylo, yhi = elo[-1:], ehi[-1:]
    return (
        (np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)),
        (float(np.asarray(ylo).ravel()[0]), float(np.asarray(yhi).ravel()[0])),
        float(eps_used),
    )


def _solve(rel, plan, centre, regularization):
    """The ridge and the trimmed minimiser of the noisy objective (post-processing
    of the releases and public numbers only): ``(w, ridge, n_kept, rel)``."""
    M_noisy, b_noisy = rel["gram"], rel["target"]
    d = M_noisy.shape[0]
    if plan.adaptive:
        factor = 1.0
        if centre.variance is not None:
            factor = _ridge_factor(M_noisy, rel["n"], plan.p, plan.target_weight, centre.variance)
        reg = _adaptive_ridge(M_noisy, rel["min_eigenvalue"], rel["entry_sd"], factor)
    elif regularization == "zhang":
        reg = 5.0 * rel["entry_sd"]
    else:
        reg = float(regularization)
    A = M_noisy.copy()
    A[np.diag_indices(d)] += reg
    w, kept = _trimmed_minimiser(A, -2.0 * b_noisy)
    if kept == 0:
        warnings.warn(
            "every eigenvalue of the noisy objective was trimmed; all coefficients are 0 "
            "(the model predicts the private mean of y, or 0 without an intercept)",
            UserWarning,
            stacklevel=4,
        )
    return w, reg, kept, rel


def _check_dask_bounds(est):
    """Dask input needs declared bounds (no private estimate over partitions)."""
    for name in ("bounds_X", "bounds_y"):
        value = getattr(est, name)
        if value is None or isinstance(value, str):
            raise ValueError(
                f"{name}={value!r} is not supported for Dask input: declare public "
                f"bounds (a private bound estimate over partitions is not implemented)"
            )


def _validate_input(est, X, y, fit_params):
    """Checked ``(X, y, dask_input)``; Dask input stays lazy on the workers."""
    check_no_fit_params(fit_params, "DPLinearRegression", "the released coefficients")
    check_clip_bounds_declared(est.clip, bounds_X=est.bounds_X, bounds_y=est.bounds_y)
    if est.mechanism == "gaussian" and est.secure_mode:
        raise ValueError(
            "secure_mode=True is available for the Laplace releases only; use "
            "mechanism='functional' or secure_mode=False"
        )
    if any_dask(X, y):  # validated lazily; the rows stay on the workers (doc/dask.rst)
        X, y = check_dask_input(est, X, y)
        _check_dask_bounds(est)
        return X, y, True
    X, y = validate_data(est, X, y, dtype=np.float64, y_numeric=True, order="C")
    return X, y, False
