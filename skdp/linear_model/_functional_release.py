"""Release kernels of :class:`DPLinearRegression` (Zhang et al. 2012; Wang 2018).

The scaled objective's coefficients, their noisy release (Laplace, exact grid Laplace or
Gaussian, with the private smallest eigenvalue of AdaSSP) and the trimmed minimiser.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtri

from skdp.mechanisms import gaussian_sigma, laplace_noise
from skdp.mechanisms._discrete import grid_laplace, random_source
from skdp.mechanisms.sensitivity import (
    gram_min_eigenvalue_sensitivity,
    sufficient_statistics_sensitivity,
    target_moments_sensitivity,
)
from skdp.utils._data_free import nonfinite_error
from skdp.utils._rowsum import fixed_point_gram, fixed_point_to_float, row_sum

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
    """Exact partial of ``Z^T Z`` for one block of rows, ``Z = [x~, y~, 1]``.

    Validates the block (finite values; inside the bounds when ``clip=False``), clips it
    to the declared bounds, scales it into ``[-1, 1]`` and accumulates in fixed point
    (:func:`skdp.utils._rowsum.fixed_point_gram`): the total is bit-identical for every
    split of the rows into blocks, in memory or on Dask workers.
    """
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
    return fixed_point_gram(Z)


def _objective_coefficients(
    X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, fit_intercept, *, clip=True, columns=None
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
    S = _scaled_gram(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip=clip, columns=columns)
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


def _release(
    M, b, *, n, p, fit_intercept, epsilon, delta, gaussian, adaptive, secure_mode, streams
):
    """The private releases: the smallest eigenvalue of ``M`` (``adaptive``) and the
    statistics ``s = (upper(M) without the corner, w b)``.

    Returns a dict with the noisy Gram matrix and ``X~^T y~``, the shifted and floored
    eigenvalue (``None`` when not released), the noise scales, the standard deviation
    of one Gram entry's noise and the epsilon of each release.
    """
    d = M.shape[0]
    rows, cols = _gram_index(d, fit_intercept)
    w = _target_weight(p, fit_intercept=fit_intercept, gaussian=gaussian)
    norm = "l2" if gaussian else "l1"
    sens = sufficient_statistics_sensitivity(
        p, fit_intercept=fit_intercept, target_weight=w, norm=norm
    )
    sens_eig = gram_min_eigenvalue_sensitivity(p, fit_intercept=fit_intercept)
    stats = np.concatenate([M[rows, cols], w * b])
    out = {"target_weight": w, "sensitivity": sens, "min_eigenvalue": None}
    share = EIGENVALUE_SHARE if adaptive else 0.0
    if math.isinf(epsilon):
        noisy, scale, scale_eig, sd, lam_noisy, tail = stats, 0.0, 0.0, 0.0, None, 0.0
        eps_eig, eps_obj = 0.0, math.inf
    elif gaussian:
        mu = 1.0 / gaussian_sigma(sensitivity=1.0, epsilon=epsilon, delta=delta)
        scale = sens / (mu * math.sqrt(1.0 - share))
        noisy = stats + streams["noise"].normal(0.0, scale, size=stats.size)
        sd = scale
        eps_eig, eps_obj = share * epsilon, (1.0 - share) * epsilon
        scale_eig = 0.0
        lam_noisy, tail = None, 0.0
        if adaptive:
            scale_eig = sens_eig / (mu * math.sqrt(share))
            lam = float(np.linalg.eigvalsh(M)[0])
            lam_noisy = lam + float(streams["eigenvalue"].normal(0.0, scale_eig))
            tail = scale_eig * float(ndtri(1.0 - EIGENVALUE_TAIL))
    else:
        eps_eig = share * epsilon
        eps_obj = epsilon - eps_eig
        if secure_mode:
            noisy, scale = _grid_laplace_release(stats, sens, eps_obj)
        else:
            scale = sens / eps_obj
            noisy = stats + laplace_noise(stats.size, scale=scale, rng=streams["noise"])
        sd = math.sqrt(2.0) * scale
        scale_eig = 0.0
        lam_noisy, tail = None, 0.0
        if adaptive:
            lam = float(np.linalg.eigvalsh(M)[0])
            if secure_mode:
                released, scale_eig = _grid_laplace_release(np.array([lam]), sens_eig, eps_eig)
                lam_noisy = float(released[0])
            else:
                scale_eig = sens_eig / eps_eig
                lam_noisy = lam + float(
                    laplace_noise(None, scale=scale_eig, rng=streams["eigenvalue"])
                )
            tail = scale_eig * math.log(1.0 / (2.0 * EIGENVALUE_TAIL))
    gram = np.zeros((d, d))
    gram[rows, cols] = noisy[: rows.size]
    gram[cols, rows] = noisy[: rows.size]
    if fit_intercept:
        gram[d - 1, d - 1] = n
    out.update(
        gram=gram,
        target=noisy[rows.size :] / w,
        scale=scale,
        entry_sd=sd,
        eigenvalue_scale=scale_eig,
        eps_eigenvalue=eps_eig,
        eps_objective=eps_obj,
    )
    if lam_noisy is not None:
        out["min_eigenvalue"] = max(lam_noisy - tail, 0.0)
    return out


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


def _scaled_gram(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, *, clip, columns):
    """Exact Gram of ``[x~, y~, 1]`` on the clipped, scaled rows (one fixed-point pass),
    rounded once to float64: the one data pass of every sufficient-statistic release."""
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
    total = row_sum(block, X, y)
    if total is None:
        raise ValueError("X has 0 samples")
    return fixed_point_to_float(total)


def _target_moments(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, *, clip, columns):
    """Exact ``(sum y~, sum y~^2)`` of the clipped, scaled target (the pass of
    :func:`_scaled_gram`, as in :func:`_objective_coefficients`)."""
    S = _scaled_gram(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, clip=clip, columns=columns)
    p = X.shape[1]
    return float(S[p, p + 1]), float(S[p, p])


def _release_target_moments(sum_y, sum_sq, n, epsilon, *, secure_mode, rng):
    """Release ``(sum y~, sum (y~^2 - 1/2))`` with Laplace noise (L1 sensitivity 3/2,
    :func:`skdp.mechanisms.sensitivity.target_moments_sensitivity`); return the private
    mean (clipped to ``[-1, 1]``), the private variance (floored at ``max(1 / (n
    epsilon), 1e-4)``) and the noise scale. Post-processing after the release only."""
    sens = target_moments_sensitivity(norm="l1")
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
