"""DPLinearRegression: least squares with the functional mechanism (Zhang et al. 2012)."""

from __future__ import annotations

import math
import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from skdp.base import DPEstimatorMixin
from skdp.mechanisms import laplace_noise, resolve_bounds
from skdp.mechanisms._discrete import grid_laplace, random_source
from skdp.mechanisms.sensitivity import functional_mechanism_sensitivity
from skdp.utils._random import fit_streams
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from skdp.utils.validation import check_bounds, data_bounds

__all__ = ["DPLinearRegression"]

#: eigenvalues of the noisy, regularised quadratic form below this are dropped (Matlab code)
EIGENVALUE_THRESHOLD = 1e-8
#: rows processed at a time when accumulating X~^T X~ (memory O(chunk * d), not O(n * d))
CHUNK_ROWS = 1 << 16


def _bounds_param():
    return [None, StrOptions({"data"}), tuple, list, np.ndarray]


class DPLinearRegression(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Differentially private least-squares linear regression (functional mechanism).

    The least-squares objective is a polynomial in the weights; its coefficients
    (``X~^T X~`` and ``-2 X~^T y`` on data scaled to ``[-1, 1]`` with public bounds) are
    released once with Laplace noise, and the noisy objective is minimised in closed
    form (Zhang et al. 2012, the mechanism Lantz 2016 §5.4.2 evaluates).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (including a private bound estimate, if any).
        ``math.inf`` gives ordinary least squares on the clipped data.
    bounds_X : None, "data", (lo, hi) of scalars or per-feature arrays, or dict, default=None
        Public bounds of the features (a dict ``{column: (lo, hi)}`` for a DataFrame).
        ``None``: a private estimate spending 10 % of ``epsilon``
        (:func:`skdp.mechanisms.resolve_bounds`; the rest goes to the objective).
        ``"data"``: the non-private opt-in, which emits
        :class:`~skdp.exceptions.PrivacyLeakWarning`.
    bounds_y : None, "data" or (lo, hi), default=None
        Public bounds of the target, as for ``bounds_X``. When both are ``None`` a
        single private estimate covers them (10 % of ``epsilon`` in total).
    fit_intercept : bool, default=True
        Fit an intercept. Features and target are mapped affinely onto ``[-1, 1]``.
        With ``False`` they are divided by their largest absolute bound instead, so that
        the model stays linear through the origin in original units.
    clip : bool, default=True
        Clip values to the bounds (silently). ``False`` raises ``ValueError`` naming
        the column when a value lies outside them.
    regularization : "zhang" or float, default="zhang"
        Constant added to the diagonal of the noisy quadratic form (in the scaled
        space). ``"zhang"`` is the authors' ``5 * sqrt(2) * sensitivity / epsilon``
        (five noise standard deviations); a float is used as is (``0.0`` allowed).
    secure_mode : bool, default=False
        ``False``: the coefficients get floating-point Laplace noise
        (``rng.laplace``), reproducible with ``random_state`` but exposed to the attack
        of Mironov (2012). ``True``: the coefficient vector is released with the
        floating-point-safe grid mechanism of :func:`skdp.mechanisms.add_laplace`
        (``secure_mode=True``): every coefficient is rounded to a power-of-two grid
        ``Λ <= 2^-10 sensitivity_ / (d'^2 + d')`` and receives exact integer discrete
        Laplace noise (Canonne, Kamath & Steinke 2020) drawn from ``os.urandom``, so
        the released coefficients are exact multiples of ``Λ``. The noise is then not
        reproducible, and ``noise_scale_`` exceeds the floating-point scale by less
        than 0.1 %. A private bound estimate (``bounds_X``/``bounds_y``
        ``None``) still draws its noise in floating point from ``random_state``.
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise (of the private bound estimate only, with ``secure_mode``).
        ``None`` draws fresh OS entropy. Keep it secret for a real release: the seed
        lets anyone subtract the noise.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights in original units.
    intercept_ : float
        Intercept in original units (0.0 when ``fit_intercept=False``).
    bounds_X_ : tuple of two ndarrays of shape (n_features,)
        The (declared or privately estimated) feature bounds used.
    bounds_y_ : tuple of two floats
        The target bounds used.
    sensitivity_ : float
        L1 sensitivity ``d'^2 + 2 d'`` of the released coefficients, ``d' = p + 1``
        (``p`` without intercept).
    noise_scale_ : float
        Laplace scale ``sensitivity_ / epsilon_objective`` (0 when non-private); each
        coefficient's noise has standard deviation ``sqrt(2) * noise_scale_``. With
        ``secure_mode`` the scale of the discrete Laplace noise, ``D Λ / epsilon'`` with
        ``D = floor(sensitivity_ / Λ) + d'^2 + d'`` grid steps and ``epsilon'`` the
        objective's share rounded down to 20 significant bits
        (:func:`skdp.mechanisms._discrete.grid_laplace`).
    regularization_ : float
        The diagonal constant actually added.
    n_components_ : int
        Eigen-directions of the noisy quadratic form kept after spectral trimming.
    epsilon_spent_, delta_spent_ : float
        ``epsilon`` and 0.
    privacy_guarantee_ : str
        ``"exact"``.
    privacy_breakdown_ : dict
        ``{"bounds": epsilon spent on bounds, "objective": epsilon of the Laplace
        release}``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`). Each row is clipped to the bounds and scaled to
    ``[-1, 1]``; a row then changes the ``d'^2 + d'`` coefficients
    ``[vec(X~^T X~), -2 X~^T y]`` by at most ``d'^2 + 2 d'`` in L1
    (:func:`skdp.mechanisms.sensitivity.functional_mechanism_sensitivity`; tight). Every
    coefficient receives i.i.d. Laplace noise of scale
    ``sensitivity_ / epsilon_objective``: pure ``epsilon``-DP by the Laplace mechanism,
    so ``privacy_guarantee_ = "exact"``; no accountant is needed beyond basic
    composition with the private bound estimate (``bounds_X``/``bounds_y`` ``None``).
    Symmetrisation, regularisation, spectral trimming and the closed-form solve are
    post-processing. For a replace-one guarantee (the Matlab constant ``2 d'^2 + 4 d'``),
    fit with ``epsilon / 2``. The fitted model stores no un-noised statistic. The unit
    sphere row scaling of the paper is not applied (the box bound suffices). Sample
    weights are rejected: they would change the sensitivity.

    **Floating point.** With ``secure_mode=True`` the released coefficients are exact
    multiples of a power-of-two grid plus exact integer discrete Laplace noise, so the
    guarantee holds in floating point (Mironov 2012 does not apply); everything after
    the release is post-processing. With the default ``secure_mode=False`` the Laplace
    noise is drawn in floating point, and the private bound estimate (sparse vector,
    ``bounds_X``/``bounds_y`` ``None``) always is: the guarantee is for the mathematical
    mechanism.

    At small ``epsilon`` the regulariser ``5 sqrt(2) Delta / epsilon`` dominates
    ``X~^T X~`` unless ``n`` is large, which shrinks the coefficients towards 0.

    References
    ----------
    J. Zhang, Z. Zhang, X. Xiao, Y. Yang, M. Winslett. "Functional mechanism:
    regression analysis under differential privacy." PVLDB 5(11), 2012.

    E. Lantz. "Machine learning for risk prediction and privacy in electronic health
    records." PhD thesis, University of Wisconsin-Madison, 2016, §5.4.2.

    I. Mironov. "On Significance of the Least Significant Bits for Differential
    Privacy." CCS 2012.

    C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
    Privacy." NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 2))
    >>> y = X @ [0.5, -0.3] + 0.1 + rng.normal(0, 0.05, size=20000)
    >>> reg = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1.5, 1.5),
    ...                          random_state=0).fit(X, y)
    >>> reg.epsilon_spent_, reg.sensitivity_
    (1.0, 15.0)
    >>> bool(np.all(np.abs(reg.coef_ - [0.5, -0.3]) < 0.1))
    True
    """

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "bounds_X": _bounds_param() + [dict],
        "bounds_y": _bounds_param(),
        "fit_intercept": ["boolean"],
        "clip": ["boolean"],
        "regularization": [StrOptions({"zhang"}), Interval(Real, 0, None, closed="left")],
        "secure_mode": ["boolean"],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        clip=True,
        regularization="zhang",
        secure_mode=False,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.clip = clip
        self.regularization = regularization
        self.secure_mode = secure_mode
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, **fit_params):
        """Fit the private linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Only ``sample_weight=None`` is accepted; weights are rejected.

        Returns
        -------
        self
        """
        if fit_params.get("sample_weight") is not None:
            raise ValueError(
                "DPLinearRegression does not support sample_weight: weights change the "
                "sensitivity of the released coefficients, so the privacy guarantee would "
                "not hold. Resample or clip rows instead."
            )
        unknown = set(fit_params) - {"sample_weight"}
        if unknown:
            raise TypeError(f"fit() got unexpected keyword argument(s) {sorted(unknown)}")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, order="C")
        epsilon, _ = self._check_privacy_params()
        n, p = X.shape
        streams = fit_streams(
            self.random_state, ["bounds", "noise"], estimator=self, X=X, y=y, order_invariant=True
        )
        columns = list(getattr(self, "feature_names_in_", range(p)))

        (lo, hi), (ylo, yhi), eps_bounds = self._resolve_bounds(
            X, y, epsilon, streams["bounds"], columns
        )
        eps_obj = epsilon - eps_bounds
        if not self.clip:
            _check_inside(X, lo, hi, columns)
            _check_inside(y[:, None], np.array([ylo]), np.array([yhi]), ["y"])

        # affine maps onto [-1, 1] (or, without intercept, division by max |bound|)
        if self.fit_intercept:
            ax, cx = 2.0 / (hi - lo), -2.0 * lo / (hi - lo) - 1.0
            ay, cy = 2.0 / (yhi - ylo), -2.0 * ylo / (yhi - ylo) - 1.0
        else:
            ax, cx = 1.0 / np.maximum(np.abs(lo), np.abs(hi)), np.zeros(p)
            ay, cy = 1.0 / max(abs(ylo), abs(yhi)), 0.0

        M, alpha = _objective_coefficients(
            X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, self.fit_intercept
        )
        d = M.shape[0]
        delta_l1 = functional_mechanism_sensitivity(p, fit_intercept=self.fit_intercept)
        if math.isinf(eps_obj):
            scale = 0.0
        elif self.secure_mode:
            M, alpha, scale = _grid_laplace_release(M, alpha, delta_l1, eps_obj)
        else:
            scale = delta_l1 / eps_obj
            rng = streams["noise"]
            M = M + laplace_noise((d, d), scale=scale, rng=rng)
            alpha = alpha + laplace_noise(d, scale=scale, rng=rng)
        M = (M + M.T) / 2.0
        if self.regularization == "zhang":
            reg = 5.0 * math.sqrt(2.0) * scale
        else:
            reg = float(self.regularization)
        M[np.diag_indices(d)] += reg

        w, kept = _trimmed_minimiser(M, alpha)
        if kept == 0:
            warnings.warn(
                "every eigenvalue of the noisy objective was trimmed; the model predicts "
                "the middle of bounds_y",
                UserWarning,
                stacklevel=2,
            )
        slope = w[:p]
        w0 = w[p] if self.fit_intercept else 0.0
        # y = (ys - cy) / ay with ys = slope . (ax x + cx) + w0
        self.coef_ = slope * ax / ay
        if self.fit_intercept:
            self.intercept_ = float((slope @ cx + w0 - cy) / ay)
        else:
            self.intercept_ = 0.0
        if kept == 0 and self.fit_intercept:
            self.intercept_ = float((ylo + yhi) / 2.0)

        self.bounds_X_ = (lo, hi)
        self.bounds_y_ = (float(ylo), float(yhi))
        self.sensitivity_ = float(delta_l1)
        self.noise_scale_ = float(scale)
        self.regularization_ = float(reg)
        self.n_components_ = int(kept)
        self.privacy_breakdown_ = {"bounds": float(eps_bounds), "objective": float(eps_obj)}
        self._record_privacy_spent(epsilon, 0.0, guarantee="exact")
        return self

    def _resolve_bounds(self, X, y, epsilon, rng, columns):
        p = X.shape[1]
        need_x = self.bounds_X is None
        need_y = self.bounds_y is None
        eps_used = 0.0
        if isinstance(self.bounds_X, str):
            lo, hi = data_bounds(X, name="bounds_X")
        elif not need_x:
            names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
            lo, hi = check_bounds(self.bounds_X, p, name="bounds_X", columns=names)
        if isinstance(self.bounds_y, str):
            ylo, yhi = data_bounds(y[:, None], name="bounds_y")
        elif not need_y:
            ylo, yhi = check_bounds(self.bounds_y, 1, name="bounds_y")
        if need_x or need_y:
            blocks = ([X] if need_x else []) + ([y[:, None]] if need_y else [])
            names = (columns if need_x else []) + (["y"] if need_y else [])
            V = np.hstack(blocks) if len(blocks) > 1 else blocks[0]
            elo, ehi, eps_used = resolve_bounds(
                None, V, epsilon=epsilon, rng=rng, name="bounds", columns=names
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

    # -------------------------------------------------------------- predict
    def predict(self, X):
        """Predict with the private linear model: ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_


def _check_inside(X, lo, hi, columns):
    out = np.any((X < lo) | (X > hi), axis=0)
    if out.any():
        labels = ", ".join(repr(columns[j]) for j in np.nonzero(out)[0])
        raise ValueError(
            f"values outside the declared bounds in column(s) {labels}; pass clip=True to clip them"
        )


def _objective_coefficients(X, y, lo, hi, ylo, yhi, ax, cx, ay, cy, fit_intercept):
    """``M = X~^T X~`` and ``alpha = -2 X~^T y~`` on clipped, scaled data, in chunks.

    Extra memory is O(CHUNK_ROWS * d + d^2), independent of ``n``.
    """
    n, p = X.shape
    d = p + int(fit_intercept)
    G = np.zeros((p, p))
    sx = np.zeros(p)
    sxy = np.zeros(p)
    sy = 0.0
    for start in range(0, n, CHUNK_ROWS):
        xc = np.clip(X[start : start + CHUNK_ROWS], lo, hi)
        xc *= ax
        xc += cx
        yc = np.clip(y[start : start + CHUNK_ROWS], ylo, yhi) * ay + cy
        G += xc.T @ xc
        sxy += xc.T @ yc
        if fit_intercept:
            sx += xc.sum(axis=0)
            sy += yc.sum()
    M = np.empty((d, d))
    M[:p, :p] = G
    alpha = np.empty(d)
    alpha[:p] = -2.0 * sxy
    if fit_intercept:
        M[p, :p] = sx
        M[:p, p] = sx
        M[p, p] = n
        alpha[p] = -2.0 * sy
    return M, alpha


def _grid_laplace_release(M, alpha, sensitivity, epsilon):
    """Release ``[vec(M), alpha]`` with the floating-point-safe grid Laplace mechanism.

    One call on the whole vector (its L1 sensitivity is ``sensitivity``), noise from
    ``os.urandom``; returns the noisy ``M``, ``alpha`` and the noise scale ``D Λ / ε'``.
    """
    d = alpha.size
    flat = np.concatenate([M.ravel(), alpha])
    source = random_source(secure_mode=True)
    out, (grid, big_d, eps_q) = grid_laplace(
        flat, sensitivity=sensitivity, epsilon=epsilon, source=source
    )
    scale = big_d * grid / float(eps_q)
    return out[: d * d].reshape(d, d), out[d * d :], float(scale)


def _trimmed_minimiser(M, alpha):
    """Minimise ``w^T M w + alpha^T w`` over the eigen-directions of ``M`` with
    eigenvalue >= EIGENVALUE_THRESHOLD; return ``(w, n_kept)``."""
    lam, V = np.linalg.eigh(M)
    keep = lam >= EIGENVALUE_THRESHOLD
    Vk, lk = V[:, keep], lam[keep]
    g = -0.5 * (Vk.T @ alpha) / lk
    return Vk @ g, int(keep.sum())
