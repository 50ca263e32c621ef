"""The piecewise-exponential (Poisson) proportional-hazards model behind
:class:`~skdp.survival.DPCoxPH`: per-patient terms, the private noisy-Newton fit and the
exact (non-private) Newton fit.

With baseline log-hazards ``alpha_j`` on a public grid and coefficients ``beta`` on the
features ``z`` scaled to ``[-1, 1]``, patient ``i`` contributes

``l_i = sum_j [d_ij (alpha_j + z_i beta) - t_ij exp(alpha_j + z_i beta)]``

(``d_ij``: event in interval ``j``; ``t_ij``: time at risk there, in units of the
horizon). The log-likelihood is a sum of per-patient terms, so a patient's effect on its
gradient and Hessian can be clipped (Holford 1980; Laird & Olivier 1981: its maximiser
is the Cox estimate as the grid refines).
"""

from __future__ import annotations

import numpy as np

from skdp.survival._grid import exposure_matrix, interval_of

__all__ = ["PEData", "exact_newton", "noisy_newton", "pe_data"]


class PEData:
    """The per-row terms of one fit and the patient of each row.

    Attributes
    ----------
    Z : ndarray (n, d)
        Features in ``[-1, 1]``.
    events : ndarray (n, J)
        ``d_ij`` (0/1).
    exposure : ndarray (n, J)
        ``t_ij`` in units of the horizon.
    widths : ndarray (J,)
        The intervals' widths in units of the horizon (public: the grid).
    codes : ndarray (n,) of int or None
        The patient of each row (``None``: a patient per row).
    n_units : int
        The number of patients (rows when ``codes`` is None); never released.
    """

    def __init__(self, Z, events, exposure, widths, codes=None):
        self.Z, self.events, self.exposure = Z, events, exposure
        self.widths = widths
        self.codes = codes
        self.n_units = Z.shape[0] if codes is None else int(codes.max(initial=-1)) + 1

    @property
    def n_intervals(self):
        return self.events.shape[1]

    def per_unit(self, rows):
        """Sum a per-row array over each patient's rows (identity without groups)."""
        if self.codes is None:
            return rows
        out = np.zeros((self.n_units,) + rows.shape[1:], dtype=rows.dtype)
        np.add.at(out, self.codes, rows)
        return out

    def to_rows(self, units):
        """A per-patient array back on the rows (identity without groups)."""
        return units if self.codes is None else units[self.codes]


def pe_data(Z, event, time, edges, codes=None):
    """:class:`PEData` of rows ``(Z, event, time)`` on the public grid ``edges``."""
    idx, ev = interval_of(time, event, edges)
    events = np.zeros((Z.shape[0], edges.size - 1))
    events[np.arange(Z.shape[0]), idx] = ev
    exposure = exposure_matrix(time, edges) / float(edges[-1])
    widths = np.diff(edges) / float(edges[-1])
    return PEData(Z, events, exposure, widths, codes)


def _mu(data, alpha, beta):
    """``mu_ij = t_ij exp(alpha_j + z_i beta)`` (the expected events), overflow-safe."""
    eta = np.clip(alpha[None, :] + (data.Z @ beta)[:, None], -700.0, 700.0)
    return data.exposure * np.exp(eta)


def row_gradients(data, alpha, beta):
    """Per-row gradients ``((d_ij - mu_ij)_j, (d_i - Lambda_i) z_i)``, shape (n, J + d)."""
    mu = _mu(data, alpha, beta)
    resid = data.events.sum(1) - mu.sum(1)
    return np.hstack([data.events - mu, data.Z * resid[:, None]])


def _clip_rows(G, bound):
    """Each row of ``G`` scaled to L2 norm at most ``bound``."""
    norms = np.sqrt(np.einsum("ij,ij->i", G, G))
    factor = np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))
    return G * factor[:, None]


def hessian(data, mu, J):
    """The (negative) Hessian ``sum_i H_i`` of the log-likelihood in ``(alpha, beta)``
    from the per-row expected events ``mu`` (possibly scaled per patient)."""
    lam = mu.sum(1)
    h_aa = np.diag(mu.sum(0))
    h_ab = mu.T @ data.Z
    h_bb = (data.Z * lam[:, None]).T @ data.Z
    return np.block([[h_aa, h_ab], [h_ab.T, h_bb]])


def _symmetric_noise(size, sigma, rng):
    """A symmetric matrix whose upper triangle (diagonal included) is i.i.d.
    ``N(0, sigma^2)``."""
    upper = np.triu(rng.normal(0.0, sigma, size=(size, size)))
    return upper + np.triu(upper, 1).T


def centre_sum(data, bound):
    """``sum`` over rows of ``(1, z_i)``, each patient's sum clipped to L2 norm
    ``bound`` (the un-noised statistic: never stored)."""
    rows = np.hstack([np.ones((data.Z.shape[0], 1)), data.Z])
    return _clip_rows(data.per_unit(rows), bound).sum(0)


def release_centre(data, plan, rng, record=None):
    """The features' noisy mean ``m = S~ / max(n~, 1)`` clipped to ``[-1, 1]``
    (post-processing of the noisy :func:`centre_sum`): the point the model is expanded
    around, so that a rare binary feature is not confounded with the baseline.
    ``record``: a dict that receives the noisy sum as released."""
    total = centre_sum(data, plan.sensitivities["centre"])
    noisy = total + rng.normal(0.0, plan.sigma_centre, size=total.shape[0])
    if record is not None:
        record["centre"] = noisy.copy()
    return centre_of(noisy)


def centre_of(noisy):
    """The released mean ``S~ / max(n~, 1)`` clipped to ``[-1, 1]``, from the noisy
    ``(n~, S~)`` of :func:`release_centre` (post-processing)."""
    noisy = np.asarray(noisy, float)
    return np.clip(noisy[1:] / max(noisy[0], 1.0), -1.0, 1.0)


def baseline_sum(data, bound):
    """``sum`` over patients of ``((d_ij)_j, (t_ij)_j)``, each patient's vector clipped
    to L2 norm ``bound`` (the un-noised statistic: never stored)."""
    rows = np.hstack([data.events, data.exposure])
    return _clip_rows(data.per_unit(rows), bound).sum(0)


def hessian_sum(data, alpha, beta, bound):
    """``sum_i H_i`` at ``(alpha, beta)``, each patient's ``mu`` scaled so that the
    Frobenius bound ``Lambda_i (1 + ||z_i||^2)`` (summed over the patient's rows) is at
    most ``bound`` (the un-noised statistic: never stored)."""
    mu = _mu(data, alpha, beta)
    weight = data.per_unit(mu.sum(1) * (1.0 + np.einsum("ij,ij->i", data.Z, data.Z)))
    scale = np.minimum(1.0, bound / np.maximum(weight, np.finfo(float).tiny))
    return hessian(data, mu * data.to_rows(scale)[:, None], data.n_intervals)


def gradient_sum(data, alpha, beta, bound):
    """``sum_i clip(g_i, bound)`` of the patients' gradients at ``(alpha, beta)`` (the
    un-noised statistic: never stored)."""
    per = data.per_unit(row_gradients(data, alpha, beta))
    return _clip_rows(per, bound).sum(0)


def release_baseline(data, plan, rng, record=None):
    """Noisy ``(D_j, T_j)`` (:func:`baseline_sum`) and the starting log-hazards
    ``alpha_j = log(D~_j / T~_j)`` (post-processing, with public floors: one event, and
    one full interval of exposure)."""
    J = data.n_intervals
    total = baseline_sum(data, plan.sensitivities["baseline"])
    noisy = total + rng.normal(0.0, plan.sigma_baseline, size=2 * J)
    if record is not None:
        record["baseline"] = noisy.copy()
    d_tilde = np.maximum(noisy[:J], 1.0)
    t_tilde = np.maximum(noisy[J:], data.widths)
    return np.log(d_tilde / t_tilde)


def release_hessian_inverse(data, alpha, beta, plan, rng, record=None):
    """The inverse of the noisy Hessian at ``(alpha, beta)`` (:func:`hessian_sum`, noise
    on the upper triangle), eigenvalues floored at the plan's public ``eigen_floor``
    (post-processing)."""
    size = data.n_intervals + data.Z.shape[1]
    H = hessian_sum(data, alpha, beta, plan.sensitivities["hessian"])
    H = H + _symmetric_noise(size, plan.sigma_hessian, rng)
    if record is not None:
        record["hessian"] = H.copy()
    vals, vecs = np.linalg.eigh(H)
    vals = np.maximum(vals, plan.eigen_floor)
    return (vecs / vals) @ vecs.T


def release_gradient(data, alpha, beta, plan, rng):
    """The noisy :func:`gradient_sum` at ``(alpha, beta)``."""
    total = gradient_sum(data, alpha, beta, plan.sensitivities["gradient"])
    return total + rng.normal(0.0, plan.sigma_gradient, size=total.shape[0])


def noisy_newton(data, plan, streams, *, step_size=1.0, log=None, record=None):
    """``(alpha, beta)`` of the private fit (``alpha`` for ``z = 0``): features centred
    at the noisy mean ``m``, the noisy baseline as the start, one noisy Hessian at
    ``beta = 0`` and ``n_iter`` damped chord-Newton steps ``theta += step_size H~^-1
    g~(theta)`` on noisy clipped gradients. Every step is post-processing of the
    releases. ``record``: a dict that receives every noisy release as released
    (``centre``, ``baseline``, ``hessian``, ``gradients``; for the post-processing
    intervals of :mod:`skdp.survival._cox_inference`), never an un-noised sum."""
    J, d = data.n_intervals, data.Z.shape[1]
    centre = release_centre(data, plan, streams["centre"], record)
    data = PEData(data.Z - centre, data.events, data.exposure, data.widths, data.codes)
    alpha = release_baseline(data, plan, streams["baseline"], record)
    beta = np.zeros(d)
    h_inv = release_hessian_inverse(data, alpha, beta, plan, streams["hessian"], record)
    gradients = []
    for step in range(plan.n_iter):
        g = release_gradient(data, alpha, beta, plan, streams["gradient"])
        gradients.append(g)
        delta = step_size * (h_inv @ g)
        alpha, beta = alpha + delta[:J], beta + delta[J:]
        if log is not None:
            log(step + 1)
    if record is not None:
        record["gradients"] = np.array(gradients)
    # alpha + (z - m) beta = (alpha - m beta) + z beta
    return alpha - centre @ beta, beta


def log_likelihood(data, alpha, beta):
    """The piecewise-exponential log-likelihood (non-private evaluation)."""
    eta = alpha[None, :] + (data.Z @ beta)[:, None]
    return float((data.events * eta).sum() - _mu(data, alpha, beta).sum())


def exact_newton(data, *, max_iter=100, tol=1e-9, ridge=1e-8):
    """The maximum-likelihood ``(alpha, beta)`` by damped Newton (no clipping, no noise):
    the non-private fit (``epsilon = inf``) and the reference of the tests. A tiny ridge
    keeps intervals without events finite."""
    J, d = data.n_intervals, data.Z.shape[1]
    D = data.events.sum(0)
    T = data.exposure.sum(0)
    alpha = np.log(np.maximum(D, 0.5) / np.maximum(T, 1e-12))
    beta = np.zeros(d)
    penal = ridge * np.eye(J + d)
    current = log_likelihood(data, alpha, beta)
    for _ in range(max_iter):
        g = row_gradients(data, alpha, beta).sum(0)
        H = hessian(data, _mu(data, alpha, beta), J) + penal
        step = np.linalg.solve(H, g)
        t = 1.0
        while t > 1e-8:
            new_a, new_b = alpha + t * step[:J], beta + t * step[J:]
            new = log_likelihood(data, new_a, new_b)
            if new >= current - 1e-12:
                break
            t *= 0.5
        alpha, beta = new_a, new_b
        done = abs(new - current) <= tol * (1.0 + abs(current))
        current = new
        if done:
            break
    return alpha, beta
