"""DPStandardScaler: standardisation with a private mean and variance (Laplace mechanism)."""

from __future__ import annotations

import functools
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from skdp.base import DPEstimatorMixin
from skdp.mechanisms import add_laplace, resolve_bounds
from skdp.preprocessing._common import (
    DOCS,
    bounds_constraint,
    column_labels,
    fitted_float_input,
    fitted_inverse_input,
    like_input,
    noisy_release,
)
from skdp.preprocessing._patients import check_patient_input, patient_streams, resolve_rows_bound
from skdp.preprocessing._scaler_dask import fit_dask
from skdp.preprocessing._scaler_plan import (
    ScalerPlan,
    standard_scaler_sensitivities,
)
from skdp.utils._deprecation import RenamedKeys
from skdp.utils._docstrings import groups_entry, insert_docs
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._keyword_init import keyword_init
from skdp.utils._rowsum import any_dask
from skdp.utils._sklearn_compat import Interval, StrOptions, _fit_context
from skdp.utils.validation import (
    check_bounds,
    check_clip_bounds_declared,
    clip_to_bounds,
    validate_data,
)

__all__ = ["DPStandardScaler", "standard_scaler_sensitivities"]


#: the keys of noise_scale_ before they followed privacy_breakdown_ (removed in 0.2)
_OLD_NOISE_KEYS = {"sum": "mean", "second_moment": "variance"}


#: the ``groups`` entry of ``fit``
_GROUPS_DOC = groups_entry(
    """ and the
    sensitivities are that many times the row's (Notes). A Dask array or Series
    with Dask ``X``: bounded on the workers (:doc:`/dask`)."""
)


@insert_docs
class DPStandardScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise features with a differentially private mean and variance.

    The private-data replacement for :class:`sklearn.preprocessing.StandardScaler`.
    Every column is clipped to its bounds and mapped onto ``[-1, 1]``; the column sums
    ``S`` and the sums ``W`` of ``z^2 - 1/2`` are released with the Laplace mechanism
    (:func:`skdp.mechanisms.add_laplace`) and divided by the public row count. The
    noisy mean and variance are then clipped to what bounded data allow (post-
    processing): ``mean_`` in the bounds, ``var_`` between a positive floor and
    ``((hi - lo) / 2)^2``. ``transform`` clips to the bounds, subtracts ``mean_`` and
    divides by ``scale_``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (including a private bound estimate).
        ``math.inf`` gives the exact mean and variance of the clipped data.
    bounds : (lo, hi), per-feature arrays, dict {column: (lo, hi)}, "private", "data" or \
None, default=None
        Public bounds of every feature. ``None``: a private estimate spending
        ``bounds_fraction * epsilon`` (:func:`skdp.mechanisms.resolve_bounds`) where
        public ``n``, the number of features and ``epsilon`` make it reliable; otherwise
        ``fit`` refuses with a ``ValueError`` that says what to declare
        (:doc:`/choosing_bounds`). ``"private"``: the explicit opt-in to that estimate
        even where it cannot be reliable (with a
        :class:`~skdp.exceptions.BoundsEstimateWarning`). ``"data"``: the non-private
        opt-in (min/max of the rows, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`, ``epsilon_spent_ = inf``).
    with_mean : bool, default=True
        Subtract ``mean_`` in ``transform``.
    with_std : bool, default=True
        Divide by ``scale_`` in ``transform``. The variance needs the mean, so with
        ``with_std=True`` the mean is released (and charged) even when
        ``with_mean=False``. With both ``False`` nothing is released or spent.
    mean_fraction : float in (0, 1), default=0.5
        Share of the budget (after the bound estimate) spent on the sums ``S``; the rest
        goes to ``W``. Ignored (everything goes to the mean) when ``with_std=False``.
    bounds_fraction : float in (0, 1), default=0.1
        Share of ``epsilon`` spent on the private bound estimate when ``bounds=None``.
    n_public : int, default=None
        The public row count the sums are divided by. ``None`` uses ``len(X)``, which
        the library's relation treats as public (:ref:`neighbouring-relation`); pass a
        declared count to make the release a function of public numbers only.
    min_relative_scale : float in (0, 1), default=1e-3
        Floor of ``scale_`` as a fraction of ``hi - lo`` (noise can make the variance
        estimate zero or negative; the floor keeps ``transform`` finite).
    clip : bool, default=True
        Clip values to the bounds, silently. ``False`` raises ``ValueError`` naming the
        column when a value lies outside them; it needs declared bounds (against a
        private estimate the refusal would depend on the data).
    secure_mode : bool, default=False
        ``True`` releases ``S`` and ``W`` with the floating-point-safe grid mechanism of
        :func:`skdp.mechanisms.add_laplace` (``secure_mode=True``: exact integer
        discrete Laplace noise from ``os.urandom`` on a power-of-two grid); the noise
        is then not reproducible with ``random_state``.
    max_rows_per_group : int, "private" or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (from the visit schedule or the study protocol, never from the
        data): rows beyond it are dropped at random and both sensitivities are that
        many times the row's, so ``epsilon`` holds per patient (:doc:`/patients`).
        Required with ``groups``. ``"private"`` (in memory): a private 0.9-quantile of
        the patients' row counts on 10 % of ``epsilon``
        (:func:`skdp.preprocessing._patients.private_max_rows_per_group`; one count
        per patient, so its utility moves by at most 1 per patient), then the same.
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise. ``None`` draws fresh OS entropy (what a real release uses).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        The private mean (``None`` when ``with_mean`` and ``with_std`` are both False).
    var_ : ndarray of shape (n_features,) or None
        The private variance, floored and capped (``None`` when ``with_std=False``).
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)`` (``None`` when ``with_std=False``).
    bounds_ : tuple of two ndarrays of shape (n_features,) or None
        The declared or privately estimated bounds (``None`` when nothing is released).
    n_public_ : int
        The row count the sums were divided by (with ``groups``: the rows kept, unless
        ``n_public`` is declared).
    noise_scale_ : dict of str to float
        Laplace scales of the released sums, keyed like ``privacy_breakdown_``:
        ``{"mean": Delta_S / epsilon_mean, "variance": Delta_W / epsilon_variance}``
        (the sums and the second moments) in units of the ``[-1, 1]`` scaled columns
        (0 when not released). The noise of ``mean_[j]`` has standard deviation
        ``sqrt(2) * noise_scale_["mean"] * h_j / n_public_``. The keys ``"sum"`` and
        ``"second_moment"`` are deprecated (``FutureWarning``; removed in 0.2).
    epsilon_spent_, delta_spent_ : float
        ``epsilon`` (0 when nothing is released) and 0.
    privacy_guarantee_ : str
        ``"exact"``.
    privacy_breakdown_ : dict
        ``{"bounds": ..., "mean": ..., "variance": ...}``: the epsilon of each release;
        they sum to ``epsilon_spent_``.
    privacy_unit_ : {"row", "group"}
        What ``epsilon_spent_`` protects: one row, or one patient with all their rows
        (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound of a patient-level fit (``None`` per row); with
        ``"private"`` the released estimate.
    nonprivate_options_ : list of str
    {attr_features_in}

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`); ``n_public`` makes the count a declared number.
    With ``z = (clip(x) - c) / h`` in ``[-1, 1]``, the released vectors ``S = sum z``
    and ``W = sum (z^2 - 1/2)`` have L1 sensitivities ``d`` and ``d / 2`` over the
    ``d`` columns (:func:`standard_scaler_sensitivities`). Laplace noise of scales
    ``d / epsilon_mean`` and ``d / (2 epsilon_variance)`` makes each release pure DP
    (Dwork et al. 2006); with a private bound estimate (sparse vector,
    ``bounds_fraction * epsilon``) the three compose sequentially to ``epsilon``, an
    exact guarantee. The split is in ``privacy_breakdown_``. ``mean_ = c + h S~/n``,
    ``var_ = h^2 (W~/n + 1/2 - (S~/n)^2)`` and the clipping of both are
    post-processing. For a replace-one guarantee the sensitivities double: fit with
    ``epsilon / 2``. No un-noised statistic is stored.

    **Patients.** With ``groups`` the neighbouring relation is add or remove one
    patient with all their rows (:doc:`/patients`). Each patient keeps at most ``k =
    max_rows_per_group`` rows, chosen uniformly at random inside the mechanism (never
    the first ``k``: the order of the rows is data); the number of kept rows is public
    as ``n`` is. ``S`` and ``W`` are sums of per-row terms, so a patient moves them by
    at most ``k`` rows' worth: the L1 sensitivities are ``k d`` and ``k d / 2``
    (:func:`skdp.mechanisms.sensitivity.group_sensitivity`), the Laplace scales
    ``k`` times the row-level ones, and ``epsilon_spent_`` holds per patient
    (``privacy_unit_ = "group"``). A private bounds estimate (``bounds=None``) runs
    on the kept rows: each of its threshold counts moves by at most ``k``, so its
    queries are calibrated to ``bounds_fraction * epsilon / k``
    (:func:`skdp.mechanisms.resolve_bounds`), and it still spends its stated share.

    **Floating point.** With ``secure_mode=True`` the sums are released as exact
    multiples of a power-of-two grid with exact integer noise (Canonne, Kamath and
    Steinke 2020), so the guarantee holds in floating point; everything after is
    post-processing. With the default ``secure_mode=False`` the Laplace noise is drawn
    in floating point, and the private bound estimate always is: the guarantee is for
    the mathematical mechanism (Mironov 2012).

    The noise of ``mean_`` has standard deviation ``sqrt(2) d h / (epsilon_mean n)``:
    with ``n`` in the thousands and a few columns it is a small fraction of the range;
    bounds much wider than the data cost accuracy in proportion.

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating Noise to Sensitivity in
    Private Data Analysis." TCC 2006.

    C. Dwork, A. Roth. "The Algorithmic Foundations of Differential Privacy."
    Foundations and Trends in Theoretical Computer Science 9(3-4), 2014, §3.3.

    {refs_floating_point}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(50, 10, 5000), rng.normal(120, 15, 5000)])
    >>> scaler = DPStandardScaler(epsilon=1.0, bounds=([0, 60], [100, 200]), random_state=0)
    >>> Z = scaler.fit_transform(X)
    >>> bool(np.all(np.abs(scaler.mean_ - [50, 120]) < 1.0))
    True
    >>> bool(np.all(np.abs(scaler.scale_ / [10, 15] - 1) < 0.2))
    True
    >>> scaler.privacy_breakdown_
    {'bounds': 0.0, 'mean': 0.5, 'variance': 0.5}
    """

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "bounds": bounds_constraint(private=True),
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        "mean_fraction": [Interval(Real, 0, 1, closed="neither")],
        "bounds_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_public": [None, Interval(Integral, 1, None, closed="left")],
        "min_relative_scale": [Interval(Real, 0, 1, closed="neither")],
        "clip": ["boolean"],
        "secure_mode": ["boolean"],
        "max_rows_per_group": [
            None,
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"private"}),
        ],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("bounds", None),
            ("with_mean", True),
            ("with_std", True),
            ("mean_fraction", 0.5),
            ("bounds_fraction", 0.1),
            ("n_public", None),
            ("min_relative_scale", 1e-3),
            ("clip", True),
            ("secure_mode", False),
            ("max_rows_per_group", None),
            ("random_state", None),
        ],
        qualname="DPStandardScaler.__init__",
    )

    @insert_docs(**DOCS, param_groups_fit=_GROUPS_DOC)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Release the private mean and variance of every column.

        {transform_param_X}
        y : None
            Ignored.
        {param_groups_fit}

        Returns
        -------
        self
        """
        # clip=False against a private estimate would raise exactly when a record lies
        # beyond the noisy bounds: refused before any row is read
        check_clip_bounds_declared(self.clip, bounds=self.bounds)
        check_patient_input(X, groups)
        if any_dask(X):  # summed on the workers, per row or per patient (doc/dask.rst)
            return fit_dask(self, X, groups)
        X = validate_data(self, X, dtype=np.float64, order="C")
        releases = self.with_mean or self.with_std
        codes, k = patient_codes(self, groups, X.shape[0], private_ok=True)
        epsilon, _ = self._check_privacy_params()
        if not releases:  # nothing released: no estimate of a "private" bound either
            return self._record(self._plan(X.shape[0], X.shape[1], epsilon, k))
        streams = patient_streams(self, ["bounds", "mean", "variance", "groups", "rows"], X, codes)
        k, eps_rows = resolve_rows_bound(codes, k, epsilon, streams["rows"])
        if codes is not None:  # at most k rows per patient, chosen at random
            if not self.clip:  # every row, before any is dropped at random
                clip_to_bounds(
                    X,
                    *check_bounds(self.bounds, X.shape[1], name="bounds"),
                    clip=False,
                    columns=column_labels(self, X.shape[1]),
                )
            X = X[bound_contributions(codes, k, streams["groups"])]
        plan = self._plan(X.shape[0], X.shape[1], epsilon, k, eps_rows)
        columns = column_labels(self, plan.n_features)
        lo, hi, eps_bounds = resolve_bounds(
            self.bounds,
            X,
            epsilon=epsilon,
            rng=streams["bounds"],
            name="bounds",
            columns=columns,
            fraction=self.bounds_fraction,
            max_rows_per_group=k,  # X is bounded: each count moves by up to k
        )
        if eps_bounds != plan.eps_bounds:  # the plan's public rule is resolve_bounds'
            raise RuntimeError(f"bounds spent {eps_bounds}, planned {plan.eps_bounds}")
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        Xc = clip_to_bounds(X, lo, hi, clip=self.clip, columns=columns)
        centre, half = lo / 2 + hi / 2, hi / 2 - lo / 2
        Z = np.clip((Xc - centre) / half, -1.0, 1.0)
        sums = (Z.sum(axis=0), (Z * Z - 0.5).sum(axis=0))
        mean, var = self._release_moments(sums, (centre, half), plan, streams)
        return self._record(plan, mean=mean, var=var, bounds=(lo, hi))

    def _plan(self, n, n_features, epsilon, k, eps_rows=0.0):
        """The release plan from public inputs: the row count (declared ``n_public``,
        or the rows kept), the columns, the budget and the parameters."""
        return ScalerPlan.build(
            n_public=self._n_public(n),
            n_features=n_features,
            epsilon=epsilon,
            bounds=self.bounds,
            bounds_fraction=self.bounds_fraction,
            mean_fraction=self.mean_fraction,
            with_mean=self.with_mean,
            with_std=self.with_std,
            max_rows_per_group=None if isinstance(k, str) else k,
            eps_rows=eps_rows,
        )

    def _release_moments(self, sums, box, plan, streams):
        """The private mean and variance (``None`` without ``with_std``) from the sums
        ``sums = (S, W)`` of the scaled rows ``z`` and of ``z^2 - 1/2`` released with the
        plan's Laplace noise (post-processing of the releases and public numbers only)."""
        centre, half = box
        n_pub = float(plan.n_public)
        laplace = functools.partial(noisy_release, add_laplace, secure_mode=self.secure_mode)
        s_noisy = laplace(sums[0], plan.sensitivity_mean, plan.eps_mean, streams["mean"])
        m1 = np.clip(s_noisy / n_pub, -1.0, 1.0)
        if not plan.with_std:
            return centre + half * m1, None
        w_noisy = laplace(
            sums[1], plan.sensitivity_variance, plan.eps_variance, streams["variance"]
        )
        m2 = np.clip(w_noisy / n_pub + 0.5, 0.0, 1.0)
        floor = (2.0 * self.min_relative_scale) ** 2  # (min_relative_scale (hi-lo) / h)^2
        var_z = np.clip(m2 - m1 * m1, floor, 1.0)
        return centre + half * m1, half * half * var_z

    def _record(self, plan, *, mean=None, var=None, bounds=None):
        """Write the fitted attributes: the released moments and the plan's facts (the
        only source of the privacy attributes)."""
        self.n_public_ = plan.n_public
        self.mean_, self.var_, self.bounds_ = mean, var, bounds
        self.scale_ = None if var is None else np.sqrt(var)
        self.noise_scale_ = RenamedKeys(
            plan.noise_scale(), _OLD_NOISE_KEYS, "DPStandardScaler.noise_scale_"
        )
        self.privacy_unit_ = "row" if plan.max_rows_per_group is None else "group"
        self.max_rows_per_group_ = plan.max_rows_per_group
        self._record_privacy_spent(
            plan.epsilon, plan.delta_spent, guarantee="exact", breakdown=plan.breakdown()
        )
        return self

    def _n_public(self, n):
        """The row count the sums are divided by: declared, or the rows (kept)."""
        return int(self.n_public) if self.n_public is not None else n

    @insert_docs(**DOCS)
    def transform(self, X):
        """Clip to the bounds, subtract ``mean_`` and divide by ``scale_``.

        {transform_io}
        """
        X_in = X
        X = fitted_float_input(self, X)
        if self.bounds_ is not None:
            lo, hi = self.bounds_
            X = clip_to_bounds(X, lo, hi, clip=self.clip, columns=column_labels(self, X.shape[1]))
        else:
            X = X.copy()
        if self.with_mean:
            X = X - self.mean_
        if self.with_std:
            X = X / self.scale_
        return like_input(self, X_in, X)

    @insert_docs(**DOCS)
    def inverse_transform(self, X):
        """Undo the standardisation: ``X * scale_ + mean_`` (post-processing).

        {inverse_transform_io}
        """
        X = fitted_inverse_input(self, X, copy=True)
        if self.with_std:
            X = X * self.scale_
        if self.with_mean:
            X = X + self.mean_
        return X
