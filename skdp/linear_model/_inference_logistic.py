"""Noise-aware confidence intervals of :class:`DPLogisticRegression` (:doc:`/inference`).

``inference=True`` releases, per problem, a Laplace-noised Fisher information
``H = sum_i p_i (1 - p_i) x~_i x~_i^T`` at the released weights (a share of the same
``epsilon``, :class:`LogisticPlan`); :meth:`LogisticInferenceMixin.conf_int` is then
post-processing of the released weights, that noisy ``H``, the ridge, the noise rate and
the public bounds: a parametric bootstrap of the linearised mechanism (Ferrando, Wang &
Sheldon 2022).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from skdp.utils._inference import (
    bootstrap_rng,
    check_alpha,
    coefficient_names,
    normal_table,
    summary_frame,
)
from skdp.utils._sklearn_compat import check_is_fitted

__all__ = ["LogisticInferenceMixin", "release_fisher"]

#: default number of replicates of the linearised mechanism
N_BOOTSTRAP_LOGISTIC = 4000
#: eigenvalues of the Fisher information used by ``conf_int`` are floored at this many
#: Laplace scales of the released entries (the release is noisy and may be indefinite)
EIGEN_FLOOR = 0.5


def fisher_information(Z, w):
    """``sum_i p_i (1 - p_i) z_i z_i^T`` at the weights ``w``."""
    t = Z @ w
    return (Z.T * (expit(t) * expit(-t))) @ Z


def release_fisher(Z, signs, w, plan, rng):
    """``(H, mle)`` of one problem: the Fisher information at the released ``w`` plus
    symmetric Laplace noise of scale ``plan.fisher_scale(d')`` on the upper triangle
    (``mle = None``); at ``epsilon=inf`` (non-private) the unpenalised maximum
    likelihood weights and the exact ``H`` there (``mle`` is ``None`` and ``H`` the one
    at ``w`` when the likelihood has no finite maximum, e.g. separated classes)."""
    d = Z.shape[1]
    if not math.isfinite(plan.epsilon):
        from skdp.linear_model._objective_perturbation import _solve

        mle = _solve(Z, signs, 0.0, np.zeros(d), tol=1e-12, max_iter=1000)[0]
        H = fisher_information(Z, mle)
        if np.all(np.isfinite(mle)) and np.linalg.cond(H) < 1e12:
            return H, mle
        return fisher_information(Z, w), None
    H = fisher_information(Z, w)
    upper = np.triu_indices(d)
    noise = np.zeros((d, d))
    noise[upper] = rng.laplace(0.0, plan.fisher_scale(d), size=upper[0].size)
    return H + noise + np.triu(noise, 1).T, None


def _floored(H, floor):
    """Symmetric ``H`` (stacked ``(..., d, d)``) with eigenvalues at least ``floor``."""
    lam, V = np.linalg.eigh(0.5 * (H + np.swapaxes(H, -1, -2)))
    lam = np.maximum(lam, floor)
    return (V * lam[..., None, :]) @ np.swapaxes(V, -1, -2)


def _laplace_sym(rng, scale, size, d):
    """``size`` symmetric ``d x d`` matrices with Laplace(``scale``) upper triangles."""
    upper = np.triu_indices(d)
    E = np.zeros((size, d, d))
    E[:, upper[0], upper[1]] = rng.laplace(0.0, scale, size=(size, upper[0].size))
    return E + np.triu(E, 1).swapaxes(1, 2)


def _sample_noise(rng, size, d, beta):
    """``size`` draws of ``b`` with density ``∝ exp(-beta ||b||)``."""
    direction = rng.standard_normal((size, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return rng.gamma(shape=d, scale=1.0 / beta, size=(size, 1)) * direction


def _debiased(H, ridge, w):
    """One Newton step from the ridge minimiser towards the unpenalised one:
    ``H^-1 (H + ridge I) w`` (stacked)."""
    return w + ridge * np.linalg.solve(H, w[..., None])[..., 0]


def shrunk_fisher(H, scale, floor):
    """The Fisher information estimated from a noisy release ``H`` (stacked ``(..., d,
    d)``) whose entries carry Laplace noise of scale ``scale``: the off-diagonal part
    shrunk towards 0 by ``a = max(0, 1 - 2 scale^2 d (d - 1) / ||off(H)||_F^2)`` (the
    share of its squared norm that the noise does not explain, as in James & Stein's and
    Ledoit & Wolf's shrinkage), then every eigenvalue floored at ``floor``. A function of
    the release and the public noise scale only."""
    H = 0.5 * (H + np.swapaxes(H, -1, -2))
    d = H.shape[-1]
    diag = np.diagonal(H, axis1=-2, axis2=-1)
    off = H - np.eye(d) * diag[..., None, :]
    if scale > 0 and d > 1:
        norm2 = np.maximum((off**2).sum(axis=(-2, -1)), np.finfo(float).tiny)
        off = off * np.clip(1.0 - 2.0 * scale**2 * d * (d - 1) / norm2, 0.0, 1.0)[..., None, None]
    return _floored(off + np.eye(d) * diag[..., None, :], floor)


def bootstrap_problem(w, H_hat, ridge, beta, h_scale, B, rng):
    """Replicates ``theta* - theta0`` (scaled units) of the debiased estimate, and its
    centre ``theta0``.

    The Fisher information is estimated by :func:`shrunk_fisher` (``H0``: off-diagonal
    noise shrunk away, eigenvalues floored at ``EIGEN_FLOOR`` Laplace scales), the
    centre is ``theta0 = H0^-1 (H0 + ridge I) w`` and the data model is ``(theta0,
    H0)``. A replicate draws the score ``g ~ N(0, H0)``, the objective's noise ``b`` and
    the Fisher noise ``E``, and runs the linearised mechanism and the same estimator:
    ``w* = theta0 + (H0 + ridge I)^-1 (g - b - ridge theta0)``, ``H* = shrunk(H0 + E)``,
    ``theta* = H*^-1 (H* + ridge I) w*``.
    """
    d = w.shape[0]
    floor = max(EIGEN_FLOOR * h_scale, 1e-9 * max(float(np.trace(H_hat)), 1e-12) / d)
    H0 = shrunk_fisher(H_hat, h_scale, floor)
    theta0 = _debiased(H0, ridge, w)
    eye = np.eye(d)
    g = rng.standard_normal((B, d)) @ np.linalg.cholesky(H0).T
    b = _sample_noise(rng, B, d, beta) if math.isfinite(beta) else np.zeros((B, d))
    w_star = theta0 + np.linalg.solve(H0 + ridge * eye, (g - b - ridge * theta0).T).T
    H_star = np.broadcast_to(H0, (B, d, d))
    if h_scale > 0:
        H_star = shrunk_fisher(H0 + _laplace_sym(rng, h_scale, B, d), h_scale, floor)
    return _debiased(H_star, ridge, w_star) - theta0, theta0


def _to_original(est, p):
    """The linear map ``A`` of scaled weights to ``(coef, intercept)`` (rows), and the
    scaled weights of every problem from the released ``coef_``/``intercept_``."""
    lo, hi = (np.asarray(b, float) for b in est.bounds_X_)
    if est.fit_intercept:
        ax, cx = 2.0 / (hi - lo), -2.0 * lo / (hi - lo) - 1.0
        scale = 1.0 / math.sqrt(p + 1)
        A = np.zeros((p + 1, p + 1))
        A[:p, :p] = np.diag(ax * scale)
        A[p, :p] = cx * scale
        A[p, p] = scale
        theta = np.column_stack([est.coef_, est.intercept_])
    else:
        A = np.diag(1.0 / np.maximum(np.abs(lo), np.abs(hi)) / math.sqrt(p))
        theta = np.asarray(est.coef_, float)
    return A, np.linalg.solve(A, theta.T).T


class LogisticInferenceMixin:
    """``conf_int`` and ``summary`` of :class:`DPLogisticRegression` (post-processing)."""

    def _inference(self, alpha, n_bootstrap, random_state):
        """``(names, estimate, se, lower, upper, p)`` per problem (lists)."""
        check_is_fitted(self)
        alpha = check_alpha(alpha)
        if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
            raise TypeError("n_bootstrap must be an int")
        if n_bootstrap < 200:
            raise ValueError("n_bootstrap must be at least 200")
        stats = getattr(self, "released_statistics_", None)
        if stats is None:
            raise ValueError(
                "conf_int and summary need the noisy Fisher information, released only "
                "by a fit with inference=True (objective perturbation; it takes a share "
                "of the same epsilon): refit DPLogisticRegression(inference=True, ...)"
            )
        p = self.coef_.shape[1]
        A, weights = _to_original(self, p)
        names = coefficient_names(self, p, bool(self.fit_intercept))
        rng = bootstrap_rng(random_state, self.coef_, self.intercept_, stats["fisher"])
        out = []
        for k in range(weights.shape[0]):
            estimate = A @ weights[k]
            H = stats["fisher"][k]
            if stats["mle"] is not None and stats["mle"][k] is not None:  # epsilon=inf
                cov = A @ np.linalg.inv(H) @ A.T
                centre, se = A @ stats["mle"][k], np.sqrt(np.diag(cov))
                out.append((names, estimate, se, *normal_table(estimate, centre, se, alpha)))
                continue
            beta = _rate(self.noise_scale_["objective"])
            h_scale = float(self.noise_scale_.get("fisher", 0.0))
            delta, theta0 = bootstrap_problem(
                weights[k], H, self.ridge_, beta, h_scale, int(n_bootstrap), rng
            )
            out.append((names, estimate, *_quantile_table(A @ theta0, delta @ A.T, alpha)))
        return out

    def conf_int(self, alpha=0.05, *, n_bootstrap=N_BOOTSTRAP_LOGISTIC, random_state=None):
        """Confidence intervals of the coefficients that include the privacy noise.

        Post-processing only: reads the released weights, the noisy Fisher information
        (``released_statistics_``, from a fit with ``inference=True``), ``ridge_``,
        ``noise_scale_`` and the public ``bounds_X_``; never the data, and no budget
        (``epsilon_spent_`` is unchanged). It works on an unpickled model.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage.
        n_bootstrap : int, default=4000
            Replicates of the linearised mechanism (at least 200).
        random_state : None, int or Generator, default=None
            Seed of the simulation; ``None``: derived from the released values, so the
            same model always gives the same interval.

        Returns
        -------
        ndarray of shape (n_features + 1, 2) or (n_classes, n_features + 1, 2)
            Lower and upper bounds, rows in the order of ``coef_`` then the intercept
            (no intercept row with ``fit_intercept=False``); one block per class
            (one-vs-rest) beyond two classes.

        Raises
        ------
        ValueError
            When the fit was not made with ``inference=True``.

        Notes
        -----
        **Finite epsilon** (Ferrando, Wang & Sheldon 2022, a parametric bootstrap of the
        mechanism, here linearised): the released weights ``w`` minimise ``L(w) + ridge/2
        ||w||^2 + b . w``; with the Fisher information ``H`` estimated from the noisy
        release (its off-diagonal part shrunk towards 0 by the share of its norm that the
        public noise scale explains, eigenvalues floored at half a Laplace scale) the
        centre is ``theta0 = H^-1 (H + ridge I) w`` (one Newton step that undoes the
        ridge's shrinkage). Replicates draw the sampling score ``N(0, H)``, the
        objective's noise ``b`` (density ``∝ exp(-beta ||b||)``) and the Laplace noise of
        the release and re-run the linearised mechanism and the same estimator; the
        interval is the basic bootstrap one, ``theta0 - q_(1 - alpha/2)`` to ``theta0 -
        q_(alpha/2)`` of the replicates' deviations ``delta``, the p-value the smallest
        ``alpha`` whose interval excludes 0 (``2 min(P(delta <= theta0), P(delta >=
        theta0))``), ``std err`` their standard deviation. Assumptions: rows
        independent (with ``groups``, rows of one patient too), the logistic model correct
        on the clipped features, ``n epsilon`` large enough for the linearisation
        (:ref:`inference-logistic`).

        **epsilon=inf:** the unpenalised maximum likelihood estimate and its Wald
        interval (as statsmodels' ``Logit`` when no value is clipped).

        References
        ----------
        C. Ferrando, S. Wang, D. Sheldon. "Parametric bootstrap for differentially
        private confidence intervals." AISTATS 2022.

        Examples
        --------
        >>> import numpy as np
        >>> from skdp.linear_model import DPLogisticRegression
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(-1, 1, size=(5000, 2))
        >>> y = (rng.uniform(size=5000) < 1 / (1 + np.exp(-X @ [1.0, -0.5]))).astype(int)
        >>> clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], bounds_X=(-1, 1),
        ...                            inference=True, random_state=0).fit(X, y)
        >>> ci = clf.conf_int()
        >>> ci.shape
        (3, 2)
        >>> bool(np.all(ci[:, 0] < ci[:, 1]))
        True
        """
        blocks = [
            np.column_stack(r[3:5]) for r in self._inference(alpha, n_bootstrap, random_state)
        ]
        return blocks[0] if len(blocks) == 1 else np.stack(blocks)

    def summary(self, alpha=0.05, *, n_bootstrap=N_BOOTSTRAP_LOGISTIC, random_state=None):
        """A statsmodels-like table of the coefficients with noise-aware inference.

        Post-processing only, the same method as :meth:`conf_int`.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage.
        n_bootstrap : int, default=4000
            Replicates of the linearised mechanism.
        random_state : None, int or Generator, default=None
            Seed of the simulation (``None``: derived from the released values).

        Returns
        -------
        pandas.DataFrame
            Indexed by feature name (``"intercept"`` last; beyond two classes by
            ``(class, feature)``), with columns ``coef`` (the released estimate), ``std
            err``, the interval's bounds and ``P>|z|`` (two-sided, ``coefficient = 0``).

        Examples
        --------
        >>> import numpy as np
        >>> import pandas as pd
        >>> from skdp.linear_model import DPLogisticRegression
        >>> gen = np.random.default_rng(1)
        >>> df = pd.DataFrame({"age": gen.uniform(20, 80, 8000), "dose": gen.uniform(0, 5, 8000)})
        >>> logit = 0.05 * (df["age"] - 50) - 0.2
        >>> event = gen.uniform(size=8000) < 1 / (1 + np.exp(-logit))
        >>> model = DPLogisticRegression(
        ...     epsilon=2.0, classes=[False, True], inference=True, random_state=1,
        ...     bounds_X={"age": (20, 80), "dose": (0, 5)}).fit(df, event)
        >>> table = model.summary()
        >>> list(table.index)
        ['age', 'dose', 'intercept']
        >>> bool(table.loc["age", "P>|z|"] < 0.01)
        True
        """
        import pandas as pd

        alpha = check_alpha(alpha)
        frames = [
            summary_frame(*r, alpha) for r in self._inference(alpha, n_bootstrap, random_state)
        ]
        if len(frames) == 1:
            return frames[0]
        return pd.concat(frames, keys=[str(c) for c in self.classes_], names=["class"])


def _rate(scale):
    return math.inf if scale == 0 else 1.0 / float(scale)


def _quantile_table(centre, delta, alpha):
    """``(se, lower, upper, p)`` of the basic bootstrap from the deviations ``delta``
    (replicates x coefficients) around ``centre``; ``p`` is the smallest ``alpha`` whose
    interval excludes 0: ``2 min(P(delta <= centre), P(delta >= centre))``."""
    lo_q, hi_q = np.quantile(delta, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    se = delta.std(axis=0, ddof=1)
    below = (1.0 + (delta <= centre).sum(axis=0)) / (1.0 + delta.shape[0])
    above = (1.0 + (delta >= centre).sum(axis=0)) / (1.0 + delta.shape[0])
    return se, centre - hi_q, centre - lo_q, np.minimum(1.0, 2.0 * np.minimum(below, above))
