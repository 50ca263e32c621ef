"""Paper helpers for DP-NF-VI (Su, Wang, Schiavazzi & Liu 2023): not package code.

* :func:`paper_reg_dp_vi`: :class:`skdp.sampling.DPFlowVI` with the paper's "Reg DP-VI"
  settings (Table 9);
* :func:`gaussian_divergence`, :func:`gaussian_divergence_profile`: the closed-form divergence
  profiles of equicorrelated bivariate Gaussians (§4.3, Fig. 4).

Used by ``benchmarks/flow_vi.py``; tested in ``tests/benchmarks/test_flow_vi_paper.py``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from skdp.datasets import NonlinearRepeatedMeasuresLogLik
from skdp.sampling import DPFlowVI

__all__ = ["gaussian_divergence", "gaussian_divergence_profile", "paper_reg_dp_vi"]


def paper_reg_dp_vi(**overrides):
    """:class:`DPFlowVI` with the paper's "Reg DP-VI" settings (Su et al. 2023, Table 9).

    1 MADE block with 10 hidden units, m = 1000 MC draws, q = 500/6000 (``batch_size=500``
    for the paper's n = 6000), RMSprop with learning rate 0.01 and decay 0.999, T = 8000,
    C = 10, and the likelihood of the simulated nonlinear model
    (:class:`NonlinearRepeatedMeasuresLogLik`). Deviation: the paper's BatchNorm layer is
    replaced by a learnable affine layer (``normalization="affine"``; BatchNorm mixes records).

    Parameters
    ----------
    **overrides
        Any :class:`DPFlowVI` parameter (e.g. ``epsilon``, ``random_state``).

    Returns
    -------
    DPFlowVI
        Unfitted.

    Examples
    --------
    >>> paper_reg_dp_vi(epsilon=5.0).n_iter
    8000
    """
    params = dict(
        log_lik=NonlinearRepeatedMeasuresLogLik(),
        n_params=5,
        epsilon=1.0,
        delta=1e-5,
        max_grad_norm=10.0,
        batch_size=500,
        n_iter=8000,
        n_mc=1000,
        flow="iaf",
        n_layers=1,
        hidden_size=10,
        normalization="affine",
        optimizer="rmsprop",
        learning_rate=0.01,
        learning_rate_decay=0.999,
    )
    params.update(overrides)
    return DPFlowVI(**params)


# -------------------------------------- divergence profiles (Su et al. 2023, §4.3)
_METRICS = ("kl", "reverse_kl", "w2", "l1")


def _eigen_variances(rho, sigma):
    """Variances of ``N(0, sigma^2[(1-rho)I + rho 11^T])`` along (1, 1)/√2 and (1, -1)/√2."""
    s2 = np.asarray(sigma, dtype=float) ** 2
    rho = np.asarray(rho, dtype=float)
    return s2 * (1 + rho), s2 * (1 - rho)


def _l1_1d_pair(A, B, s1, s2):
    """``∫ |A N(v; 0, s1²) - B N(v; 0, s2²)| dv`` in closed form (arrays broadcast)."""
    from scipy.special import ndtr

    A, B, s1, s2 = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (A, B, s1, s2)))
    out = np.abs(A - B)
    c = 0.5 * (1.0 / s2**2 - 1.0 / s1**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(B * s1) - np.log(A * s2)
        v2 = t / c
    cross = (c != 0) & np.isfinite(v2) & (v2 > 0) & (A > 0) & (B > 0)
    v = np.sqrt(np.where(cross, v2, 1.0))
    inner = np.abs(A * (2 * ndtr(v / s1) - 1) - B * (2 * ndtr(v / s2) - 1))
    outer = np.abs(A * 2 * ndtr(-v / s1) - B * 2 * ndtr(-v / s2))
    return np.where(cross, inner + outer, out)


def _l1_distance(lp, lm, mp, mm, n_nodes=2001):
    """``∫|p - q|`` for ``p = N(0, diag(mp, mm))``, ``q = N(0, diag(lp, lm))`` (rotated axes).

    The inner integral is exact (:func:`_l1_1d_pair`); the outer one uses the trapezoid rule
    on ``n_nodes`` points over ±10 of the larger standard deviation.
    """
    lp, lm, mp, mm = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (lp, lm, mp, mm)))
    L = 10.0 * np.sqrt(np.maximum(lp, mp))
    u = np.linspace(-1.0, 1.0, n_nodes)[:, None] * L.reshape(1, -1)  # (nodes, k)
    lp_, mp_ = lp.reshape(1, -1), mp.reshape(1, -1)
    A = np.exp(-0.5 * u**2 / mp_) / np.sqrt(2 * np.pi * mp_)
    B = np.exp(-0.5 * u**2 / lp_) / np.sqrt(2 * np.pi * lp_)
    inner = _l1_1d_pair(A, B, np.sqrt(mm).reshape(1, -1), np.sqrt(lm).reshape(1, -1))
    return np.trapezoid(inner, u, axis=0).reshape(lp.shape)


def gaussian_divergence(rho, sigma, *, rho0=0.0, sigma0=1.0, metric="kl"):
    """Divergence between two equicorrelated bivariate Gaussians (Su et al. 2023, §4.3).

    Target ``p = N(0, Sigma0)``, ``Sigma0 = sigma0^2[(1 - rho0)I + rho0 11^T]``;
    approximation ``q = N(0, Sigma)``, ``Sigma = sigma^2[(1 - rho)I + rho 11^T]``. Both share
    the eigenvectors ``(1, ±1)/√2`` (variances ``s^2(1 ± r)``), which gives closed forms.

    Parameters
    ----------
    rho, sigma : float or array-like
        Correlation in (-1, 1) and marginal SD > 0 of ``q`` (broadcast together).
    rho0 : float in (-1, 1), default=0.0
    sigma0 : float > 0, default=1.0
    metric : {"kl", "reverse_kl", "w2", "l1"}, default="kl"
        ``"kl"``: ``D(q||p)``, what the free energy minimises; ``"reverse_kl"``: ``D(p||q)``;
        ``"w2"``: the squared 2-Wasserstein distance
        ``sum_± (sqrt(lambda_±) - sqrt(mu_±))^2`` (the paper's printed "W2" formula is this
        square; same argmin); ``"l1"``: ``∫|p - q|`` (= 2 TV; inner integral exact, outer by
        quadrature, absolute error below about 1e-8).

    Returns
    -------
    ndarray
        Non-negative; zero iff ``(rho, sigma) == (rho0, sigma0)``.

    Examples
    --------
    >>> float(gaussian_divergence(0.5, 1.0, rho0=0.5, sigma0=1.0, metric="kl"))
    0.0
    >>> round(float(gaussian_divergence(0.0, 2.0, metric="w2")), 6)
    2.0
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    rho = np.asarray(rho, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    if np.any(np.abs(rho) >= 1) or abs(float(rho0)) >= 1:
        raise ValueError("correlations must lie in (-1, 1)")
    if np.any(sigma <= 0) or not float(sigma0) > 0:
        raise ValueError("standard deviations must be positive")
    lp, lm = _eigen_variances(rho, sigma)
    mp, mm = _eigen_variances(rho0, sigma0)
    if metric == "kl":
        r1, r2 = lp / mp, lm / mm
    elif metric == "reverse_kl":
        r1, r2 = mp / lp, mm / lm
    elif metric == "w2":
        return (np.sqrt(lp) - np.sqrt(mp)) ** 2 + (np.sqrt(lm) - np.sqrt(mm)) ** 2
    else:
        return _l1_distance(lp, lm, mp, mm)
    return 0.5 * (r1 - 1 - np.log(r1)) + 0.5 * (r2 - 1 - np.log(r2))


def gaussian_divergence_profile(
    sigma_hat, *, rho0=0.0, sigma0=1.0, metric="kl", grid_step=0.001, rtol=1e-7
):
    """The paper's Fig. 4 red curves: ``rho*(sigma_hat) = argmin_rho L(rho, sigma_hat)``.

    For each inflated (or deflated) marginal SD ``sigma_hat`` the divergence of
    :func:`gaussian_divergence` is minimised over ``rho`` in (-1, 1): a grid search with
    step ``grid_step``, then a bounded scalar refinement around every grid-local minimum.
    Minima whose values agree within ``rtol`` (relative) are all reported: the reverse KL
    and l1 optima are non-unique (``±rho``) when ``rho0 = 0`` and ``sigma_hat`` is large.

    Parameters
    ----------
    sigma_hat : float or array-like
        Marginal SDs of the approximation.
    rho0, sigma0 : float
        Target correlation and marginal SD.
    metric : {"kl", "reverse_kl", "w2", "l1"}, default="kl"
    grid_step : float, default=0.001
    rtol : float, default=1e-7

    Returns
    -------
    sklearn.utils.Bunch
        ``sigma_hat`` (ndarray), ``rho_star`` (ndarray: the minimiser closest to ``rho0``,
        the larger one on a tie), ``rho_star_all`` (list of ndarrays: every global
        minimiser), ``value`` (ndarray: the minimum), ``n_minima`` (ndarray of int).

    Examples
    --------
    >>> prof = gaussian_divergence_profile([1.0, 2.0], rho0=0.5, metric="w2")
    >>> [round(float(r), 4) for r in prof.rho_star]
    [0.5, 0.5]
    """
    from scipy.optimize import minimize_scalar

    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    if not 0 < grid_step < 0.5:
        raise ValueError("grid_step must be in (0, 0.5)")
    sig = np.atleast_1d(np.asarray(sigma_hat, dtype=float))
    grid = np.arange(-1 + grid_step, 1 - grid_step / 2, grid_step)
    grid = np.clip(grid, -1 + 1e-9, 1 - 1e-9)
    rho_star, values, all_minima = [], [], []
    for s in sig:
        vals = gaussian_divergence(grid, s, rho0=rho0, sigma0=sigma0, metric=metric)
        cand = [
            i
            for i in range(len(grid))
            if (i == 0 or vals[i] <= vals[i - 1]) and (i == len(grid) - 1 or vals[i] <= vals[i + 1])
        ]
        found = []
        for i in cand:
            lo = grid[max(i - 1, 0)] if i > 0 else -1 + 1e-9
            hi = grid[min(i + 1, len(grid) - 1)] if i < len(grid) - 1 else 1 - 1e-9
            res = minimize_scalar(
                lambda r, s=s: float(
                    gaussian_divergence(r, s, rho0=rho0, sigma0=sigma0, metric=metric)
                ),
                bounds=(lo, hi),
                method="bounded",
                options={"xatol": 1e-10},
            )
            x, v = float(res.x), float(res.fun)
            if vals[i] < v:
                x, v = float(grid[i]), float(vals[i])
            found.append((x, v))
        vmin = min(v for _, v in found)
        tol = rtol * max(abs(vmin), 1e-12) + 1e-12
        minima = sorted({round(x, 8) for x, v in found if v <= vmin + tol})
        minima = np.asarray(minima)
        best = minima[np.lexsort((-minima, np.abs(minima - rho0)))[0]]
        rho_star.append(best)
        values.append(vmin)
        all_minima.append(minima)
    return Bunch(
        sigma_hat=sig,
        rho_star=np.asarray(rho_star),
        rho_star_all=all_minima,
        value=np.asarray(values),
        n_minima=np.asarray([len(a) for a in all_minima]),
    )
