"""Confidence intervals and p-values of :class:`~skdp.survival.DPCoxPH` that include the
privacy noise (:doc:`/inference`): post-processing of the released statistics only.

The private fit releases a noisy Hessian ``H~`` (at the start, ``beta = 0``) and ``K``
noisy clipped gradients ``g~_k = G(theta_k) + e_k`` along its damped chord-Newton path
``theta_(k+1) = theta_k + S g~_k`` (``S = step_size H~^-1``, eigenvalues floored), all
stored in ``released_statistics_``; the path itself is post-processing of them. Where
the expected clipped gradient is linear, ``G(theta) = u - H* (theta - theta*)`` (``u``:
the sampling error of the gradient sum), with ``A = I - S H*``,

``theta_K - theta* = A^K (theta_0 - theta*) + (I - A^K) H*^-1 u + sum_k A^(K-1-k) S e_k``:

the remaining shrinkage of a path that has not converged, the sampling error and the
gradient noise propagated through the steps. :func:`private_interval` evaluates its
covariance and corrects the first term, with ``H*`` estimated from the releases;
where the released ``n epsilon`` is below 50,000, :func:`posterior_interval` draws ``H*``
from its release instead and mixes the linearised intervals.
"""

from __future__ import annotations

import math

import numpy as np

from skdp.survival._cox_fit import _mu, centre_of, hessian
from skdp.utils._docstrings import insert_docs
from skdp.utils._inference import (
    check_alpha,
    coefficient_names,
    draws_p,
    draws_table,
    normal_table,
    shrunk_spectrum,
    summary_frame,
)
from skdp.utils._sklearn_compat import check_is_fitted

__all__ = [
    "CoxInferenceMixin",
    "exact_statistics",
    "interval_centre",
    "move_to_interval_centre",
    "posterior_interval",
    "private_interval",
    "shrinkage_share",
    "wald_interval",
]

#: cap of the variance of a start log-hazard (where the release's floors bite)
START_VARIANCE_CAP = 1.0

#: the data and the estimator of the examples of DPCoxPH and its inference methods
EXAMPLE_COX_SETUP = """\
>>> import numpy as np
>>> from skdp.survival import DPCoxPH, make_survival_target
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, size=(4000, 2))
>>> t = rng.exponential(1 / (0.2 * np.exp(X @ [1.0, -0.5])))
>>> y = make_survival_target(t < 10, np.minimum(t, 10))
>>> cox = DPCoxPH(epsilon=1.0, bounds_X=(-1, 1), max_time=10, random_state=0)"""


def exact_statistics(data, alpha, beta):
    """``released_statistics_`` of a non-private fit (``epsilon = inf``): the exact
    Hessian at the maximum-likelihood estimate (nothing is private there)."""
    return {"hessian": hessian(data, _mu(data, alpha, beta), data.n_intervals)}


def wald_interval(est):
    """``(se, centre)`` of ``coef_`` (original units) at ``epsilon = inf``: the Wald
    standard errors ``sqrt(diag(H^-1))`` of the piecewise-exponential maximum-likelihood
    fit (the inverse of the observed information), centred at the estimate."""
    H = np.asarray(est.released_statistics_["hessian"], float)
    d = np.asarray(est.coef_).shape[0]
    cov = np.linalg.pinv(0.5 * (H + H.T))[-d:, -d:]
    half = _half(est)
    return np.sqrt(np.maximum(np.diag(cov), 0.0)) / half, np.asarray(est.coef_, float)


def _half(est):
    lo, hi = est.bounds_X_
    return np.asarray(hi, float) / 2 - np.asarray(lo, float) / 2


def _start_counts(est, stats, J):
    """``(D~, T~)``: the noisy events and exposure per interval with the fit's public
    floors (one event, one full interval of exposure; ``_cox_fit.release_baseline``)."""
    widths = np.diff(est.time_grid_) / float(est.time_grid_[-1])
    base = np.asarray(stats["baseline"], float)
    return np.maximum(base[:J], 1.0), np.maximum(base[J:], widths)


def _path(est, stats):
    """``(path, J, step)``: the points ``theta_0 .. theta_K`` of the fit's Newton path,
    recomputed from the releases exactly as the fit did (``_cox_fit.noisy_newton``),
    ``J``, and the step matrix ``S = step_size H~^-1`` (:func:`_floored_inverse`)."""
    J = np.asarray(est.time_grid_).size - 1
    D, T = _start_counts(est, stats, J)
    H = np.asarray(stats["hessian"], float)
    h_inv = _floored_inverse(est, H)
    theta = np.concatenate([np.log(D / T), np.zeros(H.shape[0] - J)])
    path = [theta]
    for g in np.asarray(stats["gradients"], float):
        theta = theta + est.step_size * (h_inv @ g)
        path.append(theta)
    return np.array(path), J, est.step_size * h_inv


def _information(est, stats, J):
    """``(D, P)``: the estimate of ``H*``, block-diagonal (the features are centred, so
    the cross block is small): ``D`` the events per interval (inverse-variance mean of
    the noisy baseline and the noisy Hessian's diagonal) and ``P`` the noisy Hessian's
    ``beta`` block, its eigenvalues shrunk towards their mean by the noise's expected
    share of their spread (``shrunk_spectrum``), floored at one noise standard
    deviation."""
    noise = est.noise_scale_
    s_h, s_b = float(noise["hessian"]), float(noise["baseline"])
    H = np.asarray(stats["hessian"], float)
    base = np.asarray(stats["baseline"], float)
    w_h, w_b = 1.0 / s_h**2, 1.0 / s_b**2
    D = (np.diag(H)[:J] * w_h + base[:J] * w_b) / (w_h + w_b)
    D = np.maximum(D, max(1.0, s_h, s_b))
    return D, shrunk_spectrum(H[J:, J:], s_h, s_h)


def _floored_inverse(est, H):
    """The inverse of the released Hessian with the fit's public eigenvalue floor
    (``2 sigma_H sqrt(J + d)``, as ``_cox_fit.release_hessian_inverse``)."""
    vals, vecs = np.linalg.eigh(H)
    floor = 2.0 * est.noise_scale_["hessian"] * math.sqrt(H.shape[0])
    return (vecs / np.maximum(vals, floor)) @ vecs.T


def _start_variance(est, stats, J):
    """Variance of the noisy start ``alpha_0 = log(D~_j / T~_j)`` (delta method, capped
    at 1 where the floors of the release bite)."""
    s_b = float(est.noise_scale_["baseline"])
    D, T = _start_counts(est, stats, J)
    return np.minimum(s_b**2 * (1.0 / D**2 + 1.0 / T**2), START_VARIANCE_CAP)


def _start_covariance(est, stats, J, AK):
    """The covariance the noisy start adds to ``theta_K``, ``A^K diag(v) A^KT`` (``v``
    :func:`_start_variance` on the baseline, 0 on ``beta``), for stacked ``A^K``."""
    start = np.concatenate([_start_variance(est, stats, J), np.zeros(AK.shape[-1] - J)])
    return (AK * start) @ np.swapaxes(AK, -1, -2)


def _cholesky(cov):
    """Cholesky factors of (stacked) covariances, with a jitter of ``1e-12`` of their
    trace (a covariance may be singular to rounding)."""
    scale = np.trace(cov, axis1=-2, axis2=-1)[..., None, None]
    return np.linalg.cholesky(cov + 1e-12 * scale * np.eye(cov.shape[-1]))


def _recursion(est, H_star, step, K):
    """``(A^K, C)`` for each candidate ``H*`` (shape ``(R, p, p)``): the contraction
    ``A = I - step H*`` of the linearised path after ``K`` steps and the covariance of
    ``theta_K`` it implies (sampling through ``(I - A^K) H*^-1 (I - A^K)^T``, the
    gradient noise through ``sigma_g^2 sum_m A^m step step^T A^mT``)."""
    p = H_star.shape[-1]
    A = np.eye(p) - step @ H_star
    AK = np.linalg.matrix_power(A, K)
    M = np.eye(p) - AK
    noise = np.zeros_like(H_star)
    Am = np.broadcast_to(np.eye(p), H_star.shape)
    for _ in range(K):
        T = Am @ step
        noise += T @ np.swapaxes(T, 1, 2)
        Am = A @ Am
    sigma2 = float(est.noise_scale_["gradient"]) ** 2
    return AK, M @ np.linalg.solve(H_star, np.swapaxes(M, 1, 2)) + sigma2 * noise


def _at_estimate(est, stats, J, step, K):
    """``(A^K, C)`` of the linearised path at the one estimate of ``H*`` of
    :func:`_information`: ``C`` the covariance of ``theta_K`` (sampling, gradient
    noise, and the noisy start through ``A^K``)."""
    D, P = _information(est, stats, J)
    p = J + P.shape[0]
    H_star = np.zeros((1, p, p))
    H_star[0, np.arange(J), np.arange(J)] = D
    H_star[0, J:, J:] = P
    AK, cov = _recursion(est, H_star, step, K)
    return AK[0], cov[0] + _start_covariance(est, stats, J, AK[0])


def private_interval(est):
    """``(se, centre)`` of ``coef_`` (original units) at a finite ``epsilon``: the
    linearised path's covariance and its remaining shrinkage (Notes of
    ``conf_int``)."""
    stats = est.released_statistics_
    path, J, step = _path(est, stats)
    AK, cov = _at_estimate(est, stats, J, step, np.asarray(stats["gradients"]).shape[0])
    p = AK.shape[0]
    # theta_K - theta* = -A^K (theta* - theta_0): the remaining shrinkage, to first
    # order in A^K (theta* ~ theta_K - b), damped for stability
    bias = -np.linalg.solve(np.eye(p) + AK, AK @ (path[-1] - path[0]))
    centre = path[-1] - bias
    half = _half(est)
    return np.sqrt(np.maximum(np.diag(cov)[J:], 0.0)) / half, centre[J:] / half


#: below this released ``n epsilon`` the information's draws correct the path's
#: shrinkage exactly, up to :data:`POSTERIOR_N_EPSILON` to first order (measured,
#: :doc:`/inference`)
EXACT_N_EPSILON = 1000.0
#: below this released ``n epsilon`` the linearised interval with one estimate of the
#: information under-covered (0.30-0.93 below 5,000; the worst coefficient 0.905-0.925
#: at 6,000-30,000, :doc:`/inference`): :func:`posterior_interval` is used instead
POSTERIOR_N_EPSILON = 50000.0
#: draws of the information in :func:`posterior_interval`
POSTERIOR_DRAWS = 2000
#: the spread of the cross block of the information's draws from a released ``n
#: epsilon`` of :data:`EXACT_N_EPSILON` on, in standard deviations of the Hessian's
#: noise (:func:`_structured_draws`; 0 under-covered the largest coefficient, 1 with
#: the released cross block gave intervals 1.3-1.5 times the oracle; measured,
#: :doc:`/inference`)
CROSS_SPREAD = 0.5
#: the smallest share of the first-order shrinkage correction applied to each draw
#: from a released ``n epsilon`` of :data:`EXACT_N_EPSILON` on (:func:`shrinkage_share`)
SHRINKAGE_SHARE = 0.5
#: the released ``n epsilon`` up to which the whole first-order correction is applied
SHARE_N_EPSILON = 1500.0
#: from this released ``n epsilon`` on, ``P>|z|`` is the test at the one estimate of the
#: information (:func:`_null_noise`): it was calibrated from 2,000 on and rejected 6.7 %
#: and 8.2 % at 5 % at 1,500, where the path is further from converged (measured,
#: :doc:`/inference`)
NULL_N_EPSILON = 1800.0


def shrinkage_share(n_epsilon):
    """The share of the first-order shrinkage correction applied to each draw: 1 up to
    a released ``n epsilon`` of :data:`SHARE_N_EPSILON`, ``SHARE_N_EPSILON / (n
    epsilon)`` above, at least :data:`SHRINKAGE_SHARE`. The whole correction put the
    largest coefficient's centre 0.4-0.6 standard errors above the truth at ``n
    epsilon`` 2,000-6,000 (the curvature's smallest draws over-correct), half of it
    0.75 below at 1,500 (the path is further from converged there); measured,
    :doc:`/inference`."""
    ratio = SHARE_N_EPSILON / max(float(n_epsilon), SHARE_N_EPSILON)
    return max(ratio, SHRINKAGE_SHARE)


#: the smallest eigenvalue floor of those draws, in standard deviations of the
#: Hessian's noise (where the released ``n epsilon`` is at most
#: :data:`FLOOR_N_EPSILON`)
POSTERIOR_FLOOR = 0.2
#: the released ``n epsilon`` above which the floor rises, as its power
#: :data:`FLOOR_EXPONENT`, up to :data:`FLOOR_CAP` (:func:`posterior_floor`)
FLOOR_N_EPSILON = 150.0
FLOOR_EXPONENT = 0.7
FLOOR_CAP = 0.5


def _released_n_epsilon(est):
    """The noisy row count of the centre's release times ``epsilon_spent_``
    (post-processing)."""
    return float(np.asarray(est.released_statistics_["centre"])[0]) * float(est.epsilon_spent_)


def posterior_floor(n_epsilon):
    """The eigenvalue floor of the information's draws, in standard deviations of the
    Hessian's noise: :data:`POSTERIOR_FLOOR` up to a released ``n epsilon`` of
    :data:`FLOOR_N_EPSILON`, then growing as ``(n epsilon)^0.7`` (the curvature grows
    as ``n``, the noise as ``1 / epsilon``) up to :data:`FLOOR_CAP` (reached at about
    550; higher floors under-covered the largest coefficient from ``n epsilon``
    2,000 on; measured, :doc:`/inference`)."""
    ratio = max(float(n_epsilon), FLOOR_N_EPSILON) / FLOOR_N_EPSILON
    return min(POSTERIOR_FLOOR * ratio**FLOOR_EXPONENT, FLOOR_CAP)


def _information_draws(H, sigma, rng, draws, floor=POSTERIOR_FLOOR):
    """Draws of the information ``H*`` given its release ``H = H* + E`` (``E``
    symmetric, ``N(0, sigma^2)`` entries): ``H + E_r`` (the flat-prior posterior),
    eigenvalues floored at ``floor sigma``."""
    p = H.shape[0]
    upper = np.triu(rng.normal(0.0, sigma, size=(draws, p, p)))
    E = upper + np.swapaxes(np.triu(upper, 1), 1, 2)
    lam, V = np.linalg.eigh(0.5 * (H + H.T) + E)
    lam = np.maximum(lam, floor * sigma)
    return (V * lam[:, None, :]) @ np.swapaxes(V, 1, 2)


def _structured_draws(est, stats, J, rng, draws, floor):
    """Draws of ``H*`` that use the releases' structure (a released ``n epsilon`` of at
    least :data:`EXACT_N_EPSILON`): the baseline block diagonal (the grid's intervals are
    disjoint), the events per interval of :func:`_information` plus their own noise
    (the baseline's and the Hessian's releases combined by inverse variance: smaller
    than the Hessian's); the ``beta`` block the shrunk release plus the Hessian's
    noise; the cross block drawn around 0 (the features are centred at the released
    mean) with :data:`CROSS_SPREAD` times the Hessian's noise; eigenvalues floored at
    ``floor`` noise standard deviations."""
    D, P = _information(est, stats, J)
    s_h, s_b = float(est.noise_scale_["hessian"]), float(est.noise_scale_["baseline"])
    s_d = 1.0 / math.sqrt(1.0 / s_h**2 + 1.0 / s_b**2)
    d = P.shape[0]
    H_star = np.zeros((draws, J + d, J + d))
    H_star[:, np.arange(J), np.arange(J)] = D + rng.normal(0.0, s_d, size=(draws, J))
    upper = np.triu(rng.normal(0.0, s_h, size=(draws, d, d)))
    H_star[:, J:, J:] = P + upper + np.swapaxes(np.triu(upper, 1), 1, 2)
    cross = rng.normal(0.0, CROSS_SPREAD * s_h, size=(draws, J, d))
    H_star[:, :J, J:], H_star[:, J:, :J] = cross, np.swapaxes(cross, 1, 2)
    lam, V = np.linalg.eigh(H_star)
    lam = np.maximum(lam, floor * s_h)
    return (V * lam[:, None, :]) @ np.swapaxes(V, 1, 2)


def _coefficient_draws(est, n_epsilon):
    """``(draws, null)``: draws of ``theta*``'s coefficients (original units), one per
    draw of ``H*`` (Notes of ``conf_int``), at the released ``n epsilon``; ``null`` the
    draws of the test of ``coefficient = 0`` from a released ``n epsilon`` of
    :data:`NULL_N_EPSILON` on (the same corrections, the path's noise from the
    covariance at the one estimate of ``H*``; :func:`_null_noise`), else ``None``."""
    exact = n_epsilon < EXACT_N_EPSILON
    stats = est.released_statistics_
    path, J, step = _path(est, stats)
    H = np.asarray(stats["hessian"], float)
    seed = np.frombuffer(np.ascontiguousarray(H).tobytes(), dtype=np.uint32)
    rng = np.random.default_rng(seed[:64] if seed.size else 0)
    sigma, floor = float(est.noise_scale_["hessian"]), posterior_floor(n_epsilon)
    if exact:
        H_star = _information_draws(H, sigma, rng, POSTERIOR_DRAWS, floor)
    else:
        H_star = _structured_draws(est, stats, J, rng, POSTERIOR_DRAWS, floor)
    K = np.asarray(stats["gradients"]).shape[0]
    AK, cov = _recursion(est, H_star, step, K)
    p, eye = H.shape[0], np.eye(H.shape[0])
    moved = path[-1] - path[0]
    if not exact:  # the noisy start, through A^K
        cov = cov + _start_covariance(est, stats, J, AK)
    xi = (_cholesky(cov) @ rng.standard_normal((len(AK), p, 1)))[..., 0]
    half = _half(est)
    if exact:  # theta_K - theta_0 = (I - A^K) (theta* - theta_0) + xi, start given
        theta = path[0] + np.linalg.solve(eye - AK, (moved - xi)[..., None])[..., 0]
        return theta[:, J:] / half, None
    # a share of the first-order correction of the linearised path, per draw
    share = shrinkage_share(n_epsilon)
    bias = -share * np.linalg.solve(eye + AK, (AK @ moved)[..., None])[..., 0]
    theta = path[-1] - bias - xi
    if n_epsilon < NULL_N_EPSILON:
        return theta[:, J:] / half, None
    null = path[-1] - bias - _null_noise(est, stats, J, step, K, rng, len(AK))
    return theta[:, J:] / half, null[:, J:] / half


def _null_noise(est, stats, J, step, K, rng, draws):
    """``draws`` rows of the linearised path's noise (sampling, gradient noise and the
    noisy start) from its covariance at the one estimate of ``H*``
    (:func:`_at_estimate`). The covariance mixed over the draws of ``H*`` is larger on
    average (an average of inverses exceeds the inverse of the average): by 4-25 % in
    standard deviation on every coefficient in the cells measured (:doc:`/inference`).
    The interval keeps that mixture, the test of ``coefficient = 0`` does not."""
    _, cov = _at_estimate(est, stats, J, step, K)
    return rng.standard_normal((draws, cov.shape[0])) @ _cholesky(cov).T


def posterior_interval(est, alpha):
    """``(se, lower, upper, p, centre)`` of ``coef_`` (original units) where the released
    ``n epsilon`` is below :data:`POSTERIOR_N_EPSILON`: the linearised path with the
    uncertainty of ``H*`` propagated (Notes of ``conf_int``)."""
    draws, null = _coefficient_draws(est, _released_n_epsilon(est))
    se, lower, upper, pval = draws_table(draws, alpha)
    if null is not None:
        pval = draws_p(null)
    return se, lower, upper, pval, np.median(draws, axis=0)


def interval_centre(est):
    """The centre of ``conf_int``'s interval (original units) at a finite
    ``epsilon``: the median of the draws where the released ``n epsilon`` is below
    :data:`POSTERIOR_N_EPSILON`, else the linearised path's corrected end point. It
    does not depend on the level ``alpha``."""
    if _released_n_epsilon(est) < POSTERIOR_N_EPSILON:
        return posterior_interval(est, 0.05)[4]
    return private_interval(est)[1]


def move_to_interval_centre(est):
    """``DPCoxPH(inference=True)``: ``coef_`` moved to :func:`interval_centre` and
    ``baseline_hazard_`` with it, so that the hazard at the released mean of the
    features is unchanged (post-processing of ``released_statistics_``)."""
    stats = est.released_statistics_
    centre = np.asarray(interval_centre(est), float)
    mean = centre_of(stats["centre"])  # the point the fit was expanded around
    moved = (centre - np.asarray(est.coef_, float)) * _half(est)  # in the scaled units
    with np.errstate(over="ignore"):
        baseline = np.asarray(est.baseline_hazard_, float) * np.exp(-(mean @ moved))
    if not (np.isfinite(centre).all() and np.isfinite(baseline).all()):
        raise RuntimeError("DPCoxPH(inference=True): the interval's centre is not finite")
    est.coef_, est.baseline_hazard_ = centre, baseline


class CoxInferenceMixin:
    """``conf_int`` and ``summary`` of :class:`~skdp.survival.DPCoxPH`
    (post-processing)."""

    def _inference(self, alpha):
        """``(names, estimate, se, lower, upper, p)`` of every coefficient."""
        check_is_fitted(self)
        alpha = check_alpha(alpha)
        estimate = np.asarray(self.coef_, float)
        names = coefficient_names(self, estimate.shape[0], False)
        if "gradients" in self.released_statistics_:
            if _released_n_epsilon(self) < POSTERIOR_N_EPSILON:
                se, lower, upper, p, _ = posterior_interval(self, alpha)
                return names, estimate, se, lower, upper, p
            se, centre = private_interval(self)
        else:
            se, centre = wald_interval(self)
        lower, upper, p = normal_table(estimate, centre, se, alpha)
        return names, estimate, se, lower, upper, p

    @insert_docs(example_cox_setup=EXAMPLE_COX_SETUP)
    def conf_int(self, alpha=0.05):
        """Confidence intervals of ``coef_`` that include the privacy noise.

        Post-processing only: it reads the fitted model (the noisy statistics the fit
        released, ``released_statistics_``, the noise scales and the public bounds and
        grid), never the data; it spends no budget (``epsilon_spent_`` is unchanged)
        and works on an unpickled model with the data gone. Milliseconds (analytic) to
        about half a second (the information's draws), whatever the number of patients.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage (0.05 for 95 % intervals).

        Returns
        -------
        ndarray of shape (n_features, 2)
            Lower and upper bounds of each log hazard ratio, rows in the order of
            ``coef_`` (no intercept: the baseline hazard plays its part).

        Notes
        -----
        **Finite epsilon: the Newton path, linearised.** The fit's path ``theta_0,
        ..., theta_K`` (``theta = (alpha, beta)``, features centred at the released
        mean) is recomputed from the releases: the noisy baseline gives ``theta_0``,
        the noisy Hessian (eigenvalues floored, as in the fit) the step matrix ``S``,
        the ``K`` noisy clipped gradients the steps. Where the expected clipped
        gradient is linear, ``G(theta) = u - H* (theta - theta*)``, and with ``A = I
        - S H*``, ``theta_K - theta* = A^K (theta_0 - theta*) + (I - A^K) H*^-1 u +
        sum_k A^(K-1-k) S e_k``. The covariance of ``theta_K`` is therefore ``(I -
        A^K) H*^-1 (I - A^K)^T`` (sampling, with the information identity ``Var u =
        H*``) plus ``sigma_g^2 sum_m A^m S S^T A^mT`` (the Gaussian gradient noise of
        standard deviation ``sigma_g``, ``noise_scale_["gradient"]``) plus the noisy
        start propagated through ``A^K``; the centre is ``theta_K`` minus the
        remaining shrinkage ``-(I + A^K)^-1 A^K (theta_K - theta_0)`` (first order
        in ``A^K``: the exact inverse ``(I - A^K)^-1`` over-corrects whenever the
        estimated information is too small), with normal quantiles; the p-value is
        the two-sided normal one of that centre over its standard error. ``H*`` is
        estimated from the releases only: the events per interval (inverse-variance
        mean of the noisy baseline and the noisy Hessian's diagonal) and the noisy
        Hessian's ``beta`` block, its eigenvalues moved towards their mean by the
        noise's expected share of their spread (noise makes the smallest fall and the
        largest rise; a moment match, as for linear regression's design in
        :doc:`/inference`) and floored at one noise standard deviation; the cross
        block is left out (the features are centred, and profiling it out added more
        noise than it removed).

        Assumptions: patients independent; the likelihood locally quadratic along
        the path; the Hessian at ``beta = 0`` close to the one at the optimum
        (moderate hazard ratios). **Clipping:** the fit solves the *clipped*
        gradient equation, whose root differs from the maximum-likelihood estimate
        where the clipping bites; the interval is built around that root and does
        not correct the difference, which at the default ``max_grad_norm`` is small
        next to the standard error (the bias column of
        ``benchmarks/intervals_cox.py``); a much smaller ``max_grad_norm`` biases
        the interval. **A path far from converged:** where the curvature is small
        next to the fit's eigenvalue floor (few events, correlated features) the path
        stops well short of the optimum and the first-order correction falls short;
        the exact one over-corrects where the path is closer to converged, and one
        release does not show which holds (neither a spiked estimate of the
        curvature's spectrum nor a constant-correlation one changed the coverage; a
        fit whose steps converge covered, with intervals about twice as long). On a
        second simulator (correlation 0.4, a Weibull baseline, 35 % events) at a
        released ``n epsilon`` of 1,500-2,000 a 5 % test of a zero coefficient
        rejected 9-11 % and the worst coefficient covered 0.77-0.89 in three of the
        four cells (coverage and width met there below 1,000, every target from
        3,000 on; :doc:`/inference`).

        **Finite n epsilon: the uncertainty of ``H*`` propagated.** Where the released
        ``n epsilon`` (the noisy row count of the centre's release times
        ``epsilon_spent_``) is below 50,000, ``H*`` is not identified well enough by
        one noisy Hessian; the interval above under-covered there (0.30-0.93 below
        5,000, where the path is also shrunk; the worst coefficient 0.905-0.925 at
        6,000-30,000; measured in :doc:`/inference`). ``conf_int`` then draws ``H*_r =
        H~ + E_r`` (``E_r`` the release's Gaussian noise: the flat-prior posterior of
        ``H*``), eigenvalues floored at ``f sigma_H`` with ``f = 0.2`` up to a released
        ``n epsilon`` of 150, ``0.2 (n epsilon / 150)^0.7`` above, at most ``0.5``
        (the curvature grows with ``n`` and the noise with ``1 / epsilon``, so a floor
        that is safe at ``n epsilon = 150`` is needlessly low from about 500 on: the
        smallest draws made the intervals too wide), draws ``xi_r ~ N(0, C_r)`` from
        the covariance above at ``H*_r`` and, per draw,
        ``theta*_r = theta_0 + (I - A_r^K)^-1 (theta_K - theta_0 - xi_r)`` below a
        released ``n epsilon`` of 1,000 (the exact correction, given the released start)
        or ``theta_K`` minus a share ``s`` of the first-order correction above minus
        ``xi_r`` from 1,000 on (the exact one's average over the draws over-corrects
        there, and so did the whole first-order one from about 2,000 on: the largest
        coefficient's centre sat 0.4-0.6 standard errors above the truth), ``s = 1``
        up to a released ``n epsilon`` of 1,500, ``1,500 / (n epsilon)`` above, at
        least 0.5. From 1,000 on the draws of ``H*`` also use
        the releases' structure instead of ``H~ + E_r``: the baseline block diagonal
        (the grid's intervals are disjoint) around the events per interval with their
        own, smaller noise, the ``beta`` block its shrunk release plus the noise, the
        cross block around 0 (the features are centred) with half the noise (the
        release's full cross-block noise, which the centre's spread does not follow,
        made the intervals 1.3-1.5 times too wide). It
        reports the quantiles of the draws (``std err``: half their 68 % range):
        wider, since it admits every curvature the release allows. ``P>|z|`` is the
        smallest ``alpha`` whose interval excludes 0 below a released ``n epsilon`` of
        1,800; from 1,800 on (the path close to converged) it is the two-sided tail
        at 0 of draws with the same corrections but ``xi_r ~ N(0, C)``, ``C`` the
        covariance at the one estimate of ``H*`` above: the covariance mixed over the
        draws is larger on average (an average of inverses exceeds the inverse of the
        average), which the interval needs for the large coefficients (whose spread
        grows with their size) but which made a zero coefficient's p-values
        conservative. Near the boundary ``P>|z|`` can therefore fall below ``alpha``
        while the interval still contains 0.

        **epsilon=inf.** The Wald interval ``coef_ -+ z sqrt(diag(H^-1))`` of the exact
        piecewise-exponential fit, ``H`` its observed information at the estimate
        (equal to a Poisson-GLM fit of the same model to 1e-9 of the width; within
        0.4 % of the width of lifelines' ``CoxPHFitter`` interval on the simulated
        cohorts of ``benchmarks/intervals_cox.py``, whose baseline hazard is constant;
        a baseline far from piecewise constant on the grid moves the two apart).

        References
        ----------
        T. R. Holford. "The analysis of rates and of survivorship using log-linear
        models." Biometrics 36, 1980.

        C. Ferrando, S. Wang, D. Sheldon. "Parametric bootstrap for differentially
        private confidence intervals." AISTATS 2022 (the noise-aware target; here the
        mechanism's linearisation replaces the simulation).

        Examples
        --------
        {example_cox_setup}
        >>> ci = cox.fit(X, y).conf_int()
        >>> ci.shape
        (2, 2)
        >>> bool(np.all(ci[:, 0] < ci[:, 1]))
        True
        """
        _, _, _, lower, upper, _ = self._inference(alpha)
        return np.column_stack([lower, upper])

    @insert_docs(example_cox_setup=EXAMPLE_COX_SETUP)
    def summary(self, alpha=0.05):
        """A statsmodels-like table of the log hazard ratios with noise-aware
        inference.

        Post-processing only, as :meth:`conf_int` (same method, same interval).

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage.

        Returns
        -------
        pandas.DataFrame
            Indexed by feature name (``feature_names_in_`` when present, else ``x0,
            x1, ...``), with columns ``coef`` (the released ``coef_``), ``std err``,
            the interval's bounds (``[0.025`` and ``0.975]`` for ``alpha=0.05``) and
            ``P>|z|``, the two-sided p-value of ``coefficient = 0``.

        Examples
        --------
        {example_cox_setup}
        >>> list(cox.fit(X, y).summary().index)
        ['x0', 'x1']
        """
        names, estimate, se, lower, upper, p = self._inference(alpha)
        return summary_frame(names, estimate, se, lower, upper, p, alpha)
