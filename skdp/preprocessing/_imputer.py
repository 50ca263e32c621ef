"""DPSimpleImputer: fill missing values with a public constant or a private mean/median."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from skdp.base import DPEstimatorMixin
from skdp.exceptions import PrivacyLeakWarning
from skdp.mechanisms import add_geometric, add_laplace, private_quantile
from skdp.preprocessing._common import (
    DOCS,
    bounds_constraint,
    column_labels,
    feature_names_in_or_default,
    like_input,
    noisy_release,
)
from skdp.preprocessing._imputer_dask import fit_dask
from skdp.preprocessing._imputer_plan import ImputerPlan
from skdp.preprocessing._patients import check_patient_input, patient_streams
from skdp.utils._docstrings import groups_entry, insert_docs
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._keyword_init import keyword_init
from skdp.utils._rowsum import any_dask
from skdp.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted
from skdp.utils.validation import check_array, check_bounds, validate_data

__all__ = ["DPSimpleImputer"]


def _is_nan(value):
    return value is None or (isinstance(value, Real) and math.isnan(value))


def _missing_mask(X, missing_values):
    """Boolean mask of the missing cells of ``X`` (a per-cell function)."""
    if _is_nan(missing_values):
        if X.dtype.kind == "f":
            return np.isnan(X)
        if X.dtype.kind == "O":
            import pandas as pd

            return np.asarray(pd.isna(X), dtype=bool)
        return np.zeros(X.shape, dtype=bool)
    if X.dtype.kind in "biuf" and isinstance(missing_values, str):
        return np.zeros(X.shape, dtype=bool)
    return np.asarray(X == missing_values, dtype=bool)


#: the ``groups`` entry of ``fit``
_GROUPS_DOC = groups_entry(
    """ and every
    sensitivity is that many times the row's (Notes). A Dask array or Series
    with Dask ``X`` (``strategy="mean"``): bounded on the workers (:doc:`/dask`)."""
)


@insert_docs
class DPSimpleImputer(DPEstimatorMixin, TransformerMixin, BaseEstimator):
    """Impute missing values with a public constant, or a private mean or median.

    The private-data replacement for :class:`sklearn.impute.SimpleImputer` (and, with
    ``add_indicator=True``, :class:`sklearn.impute.MissingIndicator`). NaN is accepted
    in the input (other skdp estimators reject it); ``transform`` fills every missing
    cell of column ``j`` with ``statistics_[j]``:

    * ``strategy="constant"``: ``fill_value``, public: nothing is read off the rows and
      nothing is spent (``epsilon_spent_ = 0``). Works on strings too (a "missing"
      category for :class:`PublicOneHotEncoder`).
    * ``strategy="mean"``: ``c + h S~ / C~`` per column, with ``S~`` the noisy sum of
      the observed values (clipped to the declared bounds and scaled to ``[-1, 1]``)
      and ``C~`` the noisy count of observed values: the number of non-missing cells
      of a column is private, so it is noised too.
    * ``strategy="median"``: the exponential-mechanism quantile of Smith (2011)
      (:func:`skdp.mechanisms.private_quantile`) over the declared bounds, ``epsilon /
      n_features`` per column.

    ``add_indicator=True`` appends one 0/1 missing-indicator column per input column
    (for *every* column: scikit-learn's default ``features="missing-only"`` would reveal
    which columns have a missing value).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy loss of one ``fit`` with ``strategy="mean"`` or ``"median"`` (ignored,
        and nothing spent, with ``"constant"``). ``math.inf`` gives the exact
        statistics of the clipped observed values.
    strategy : {"mean", "median", "constant"}, default="mean"
    bounds : (lo, hi), per-feature arrays, dict {column: (lo, hi)} or "data", default=None
        Public bounds of every column, needed by ``"mean"`` and ``"median"`` (observed
        values are clipped to them for the statistic). ``None`` raises ``ValueError``
        for those strategies: declare the bounds. ``"data"`` reads the observed minimum
        and maximum off the rows: the non-private opt-in (a
        :class:`~skdp.exceptions.PrivacyLeakWarning`, ``epsilon_spent_ = inf``).
    fill_value : str, number, list or dict {column: value}, default=None
        The constant of ``strategy="constant"``: one value for every column, a list with
        one value per column (in column order), or a dict naming every column of a
        DataFrame. ``None`` (also as an entry) means 0 for numeric data and
        ``"missing_value"`` for strings. Public: choose it without looking at the rows
        (a clinical reference value, the normal range's midpoint, a "not measured"
        level).
    missing_values : float, int, str or None, default=np.nan
        The placeholder of a missing cell (``np.nan`` also matches ``None`` in object
        columns).
    add_indicator : bool, default=False
        Append a 0/1 missing-indicator column for every input column.
    secure_mode : bool, default=False
        ``strategy="mean"``: release the sums with the floating-point-safe grid
        mechanism of :func:`skdp.mechanisms.add_laplace` and draw the integer count
        noise from ``os.urandom`` (not reproducible with ``random_state``).
    max_rows_per_group : int or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (from the visit schedule or the study protocol, never from the
        data): rows beyond it are dropped at random and every sensitivity is that many
        times the row's, so ``epsilon`` holds per patient (:doc:`/patients`). Required
        with ``groups`` (for every strategy).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise. ``None`` draws fresh OS entropy (what a real release uses).

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of every column (private for ``"mean"``/``"median"``).
    bounds_ : tuple of two ndarrays of shape (n_features,) or None
        The declared bounds (``None`` for ``"constant"``).
    indicator_features_ : ndarray of shape (n_features,) or None
        With ``add_indicator``: the indices of the columns that get an indicator (all).
    epsilon_spent_, delta_spent_ : float
        ``epsilon`` (0 for ``"constant"``) and 0.
    privacy_guarantee_ : str
        ``"exact"``.
    privacy_breakdown_ : dict
        ``{"sum": epsilon / 2, "count": epsilon / 2}`` (mean), ``{"median": epsilon}``
        or ``{}`` (constant); the values sum to ``epsilon_spent_``.
    noise_scale_ : dict of str to float
        The Laplace scales of the noisy sums and counts (``"sum"``, ``"count"``, keyed
        like ``privacy_breakdown_``; in the units of the released sums and counts), 0 at
        ``epsilon=inf``; empty for ``"median"`` (an exponential mechanism,
        no additive noise) and ``"constant"``.
    {attr_patient_facts}
    nonprivate_options_ : list of str
    {attr_features_in}

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`); the number of *observed* cells of each column is
    not public. A row changes, in each of the ``d`` columns where it is observed, the
    scaled sum by at most 1 and the observed count by 1, so the sum vector and the count
    vector each have L1 sensitivity ``d``
    (:func:`skdp.mechanisms.sensitivity.bounded_sum_sensitivity`,
    :func:`skdp.mechanisms.sensitivity.count_sensitivity`). ``"mean"`` releases the sums
    with Laplace noise of scale ``2 d / epsilon`` (:func:`skdp.mechanisms.add_laplace`)
    and the counts with discrete Laplace noise of the same scale
    (:func:`skdp.mechanisms.add_geometric`): ``epsilon / 2`` each, pure ``epsilon``-DP
    by sequential composition (Dwork et al. 2006). The ratio and its clipping to the
    bounds are post-processing (a noisy count below 1 gives the midpoint of the bounds).
    ``"median"`` runs the exponential mechanism with the quantile utility (sensitivity
    1, :func:`skdp.mechanisms.sensitivity.quantile_utility_sensitivity`) on each column
    with ``epsilon / d``: pure ``epsilon``-DP. ``"constant"`` and the missing indicators
    are per-record functions of public metadata: 0-DP. All guarantees are exact. Under
    replace-one the sensitivities double (fit with ``epsilon / 2``). Unlike
    scikit-learn's imputer no column is ever dropped for being empty (that would reveal
    it); an empty column gets a noisy statistic like any other.

    **Patients.** With ``groups`` the neighbouring relation is add or remove one
    patient with all their rows (:doc:`/patients`). Each patient keeps at most ``k =
    max_rows_per_group`` rows, chosen uniformly at random inside the mechanism (never
    the first ``k``: the order of the rows is data); the number of kept rows is public
    as ``n`` is. The sums and the observed counts are sums of per-row terms, so a
    patient moves each vector by at most ``k`` rows' worth: L1 sensitivities ``k d``
    (:func:`skdp.mechanisms.sensitivity.group_sensitivity`) and noise ``k`` times the
    row-level scale. The quantile utility of ``"median"`` moves by at most ``k``
    (``k`` rows, each by at most 1), so each column's exponential mechanism runs with
    ``epsilon / (d k)``, the exponent of utility sensitivity ``k``. ``epsilon_spent_``
    then holds per patient (``privacy_unit_ = "group"``); ``"constant"`` stays 0-DP.

    **Which strategy.** A public constant costs nothing, and its error is its distance
    from the column's true mean; a DP mean costs part of the budget, and its error is its
    noise: the released mean of a column has a standard deviation of about
    ``1.4 d (hi - lo) / (epsilon n_obs)`` (``d`` the columns this imputer covers,
    ``n_obs`` the observed cells of the column, ``epsilon`` this imputer's own budget),
    plus the noise of the count. So:

    * prefer ``strategy="mean"`` when ``epsilon * n_obs / d`` is about 10 or more, and a
      public constant (a clinical reference value; the midpoint of the declared range if
      nothing better is known) below that;
    * impute only the columns that can be missing (a
      :class:`~sklearn.compose.ColumnTransformer` with ``remainder="passthrough"``): the
      noise grows with ``d``, and a constant costs nothing on the others;
    * in a :class:`~skdp.pipeline.DPPipeline` the imputer's ``epsilon`` comes out of the
      same total as the model's, so a noisy fill also costs the model accuracy.

    Measured with ``benchmarks/imputation.py`` (20 seeds; 20 % of three columns missing
    at random; the imputer at 10 % of the total epsilon, the model at the rest; the RMS
    error of the filled cells in units of the declared range's width; median over seeds)::

        table (train rows)    imputer                 eps=0.3   eps=1    eps=3
        diabetes (331)        constant (midpoint)      0.176    0.176    0.176
                              DP mean, 3 columns       0.301    0.191    0.145
                              DP mean, all 10          0.293    0.311    0.163
        breast_cancer (426)   constant (midpoint)      0.234    0.234    0.234
                              DP mean, 3 columns       0.285    0.206    0.184
                              DP mean, all 30          0.317    0.335    0.317

    ``epsilon * n_obs / d`` of the 3-column imputer is 2.6, 8.8 and 27 on diabetes, 3.4,
    11 and 34 on breast_cancer: the DP mean beat the constant in the three cells at 11
    or more, was on par at 8.8 and lost below; imputing all columns lost in every
    cell (a non-private mean, not an option here, had 0.133 and 0.180). The downstream
    scores (test R^2 of ``DPLinearRegression``, AUC of ``DPLogisticRegression``)
    moved less than the models' own noise at these sizes (diabetes R^2 -0.020 / -0.011
    / 0.094 with the constant, 0.010 / -0.006 / 0.074 with the DP mean; breast_cancer
    AUC 0.909 / 0.960 / 0.986 and 0.827 / 0.981 / 0.987).

    **Floating point.** The observed counts get exact integer noise (Canonne, Kamath and
    Steinke 2020). With ``secure_mode=True`` the sums are released as exact multiples
    of a power-of-two grid with exact integer noise, so ``"mean"`` holds in floating
    point. With ``secure_mode=False`` the sums' Laplace noise, and for ``"median"`` the
    exponential mechanism's Gumbel draws, are drawn in floating point: the guarantee is
    for the mathematical mechanism (Mironov 2012).

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating Noise to Sensitivity in
    Private Data Analysis." TCC 2006.

    A. Smith. "Privacy-preserving statistical estimation with optimal convergence
    rates." STOC 2011.

    {refs_floating_point}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPSimpleImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(120, 15, size=(4000, 1))
    >>> X[rng.random(4000) < 0.2] = np.nan
    >>> imp = DPSimpleImputer(epsilon=1.0, bounds=(60, 220), add_indicator=True,
    ...                       random_state=0).fit(X)
    >>> bool(abs(imp.statistics_[0] - 120) < 2)
    True
    >>> Xt = imp.transform([[np.nan], [130.0]])
    >>> bool(Xt[0, 0] == imp.statistics_[0]), Xt[1, 0], Xt[:, 1]
    (True, np.float64(130.0), array([1., 0.]))
    >>> list(imp.get_feature_names_out())
    ['x0', 'missingindicator_x0']
    >>> imp.privacy_breakdown_
    {'sum': 0.5, 'count': 0.5}
    """

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "strategy": [StrOptions({"mean", "median", "constant"})],
        "bounds": bounds_constraint(),
        "fill_value": [str, Real, None, list, tuple, dict, np.ndarray],
        "missing_values": [Real, str, None],
        "add_indicator": ["boolean"],
        "secure_mode": ["boolean"],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("strategy", "mean"),
            ("bounds", None),
            ("fill_value", None),
            ("missing_values", np.nan),
            ("add_indicator", False),
            ("secure_mode", False),
            ("max_rows_per_group", None),
            ("random_state", None),
        ],
        qualname="DPSimpleImputer.__init__",
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = _is_nan(self.missing_values)
        tags.input_tags.string = self.strategy == "constant"
        return tags

    def _planned_privacy_spend(self):
        # a constant fill and the missing indicators read nothing beyond the rows'
        # own missingness pattern, per row: no budget is spent
        return (0.0, 0.0) if self.strategy == "constant" else (self.epsilon, 0.0)

    def _validate(self, X, *, reset):
        finite = "allow-nan" if _is_nan(self.missing_values) else True
        if self.strategy == "constant":
            X = validate_data(self, X, dtype=None, ensure_all_finite=finite, reset=reset)
            if X.dtype.kind in "biuf":
                X = X.astype(np.float64)
            return X
        return validate_data(self, X, dtype=np.float64, ensure_all_finite=finite, reset=reset)

    @insert_docs(**DOCS, param_groups_fit=_GROUPS_DOC)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Compute the fill values (privately for ``"mean"`` and ``"median"``).

        {transform_param_X}
            May hold missing values.
        y : None
            Ignored.
        {param_groups_fit}

        Returns
        -------
        self
        """
        check_patient_input(X, groups)
        if any_dask(X):  # strategy="mean", summed on the workers (doc/dask.rst)
            return fit_dask(self, X, groups, _missing_mask)
        X = self._validate(X, reset=True)
        codes, k = patient_codes(self, groups, X.shape[0])
        d = X.shape[1]
        if self.strategy == "constant":
            plan = ImputerPlan.build(
                strategy="constant", n_features=d, epsilon=0.0, max_rows_per_group=k
            )
            return self._record(plan, self._constant(X), bounds=None)
        epsilon, _ = self._check_privacy_params()
        plan = ImputerPlan.build(
            strategy=self.strategy, n_features=d, epsilon=epsilon, max_rows_per_group=k
        )
        mask = _missing_mask(X, self.missing_values)
        lo, hi = self._bounds(X, mask)
        streams = patient_streams(self, ["noise", "groups"], X, codes)
        if codes is not None:  # at most k rows per patient, chosen at random
            keep = bound_contributions(codes, k, streams["groups"])
            X, mask = X[keep], mask[keep]
        release = self._mean if self.strategy == "mean" else self._median
        return self._record(plan, release(X, mask, lo, hi, plan, streams["noise"]), (lo, hi))

    def _record(self, plan, statistics, bounds):
        """Write the fitted attributes: the fill values and the plan's facts (the only
        source of the privacy attributes)."""
        self.statistics_, self.bounds_ = statistics, bounds
        self.indicator_features_ = np.arange(plan.n_features) if self.add_indicator else None
        self.privacy_unit_ = "row" if plan.max_rows_per_group is None else "group"
        self.max_rows_per_group_ = plan.max_rows_per_group
        self.noise_scale_ = plan.noise_scale()
        self._record_privacy_spent(
            plan.epsilon, plan.delta_spent, guarantee="exact", breakdown=plan.breakdown()
        )
        return self

    def _constant(self, X):
        d = X.shape[1]
        numeric = X.dtype.kind in "biuf"
        labels = column_labels(self, d)
        fill = self.fill_value
        if isinstance(fill, dict):
            missing = [c for c in labels if c not in fill]
            unknown = [c for c in fill if c not in set(labels)]
            if missing or unknown:
                raise ValueError(
                    "fill_value as a dict must name every column once (a DataFrame's "
                    f"columns): missing {missing}, unknown {unknown}"
                )
            fills = [fill[c] for c in labels]
        elif isinstance(fill, list | tuple | np.ndarray):
            fills = list(np.asarray(fill, dtype=object).ravel()) if np.ndim(fill) else [fill]
            if len(fills) != d:
                raise ValueError(f"fill_value has {len(fills)} values for {d} column(s)")
        else:
            fills = [fill] * d
        out = []
        for label, v in zip(labels, fills, strict=True):
            if isinstance(v, np.generic):
                v = v.item()
            if v is None:
                v = 0.0 if numeric else "missing_value"
            elif isinstance(v, bool) or not isinstance(v, str | Real):
                raise TypeError(
                    f"fill_value for column {label!r} must be a string or a number, got "
                    f"{type(v).__name__}"
                )
            elif isinstance(v, Real) and not math.isfinite(v):
                raise ValueError(f"fill_value for column {label!r} must be finite")
            if numeric and isinstance(v, str):
                raise ValueError(
                    f"fill_value for column {label!r} is a string: numeric data need a "
                    "numeric fill_value"
                )
            out.append(v)
        dtype = np.float64 if numeric else object
        return np.asarray(out, dtype=dtype)

    def _bounds(self, X, mask):
        d = X.shape[1]
        if self.bounds is None:
            raise ValueError(
                f"DPSimpleImputer(strategy={self.strategy!r}) needs declared bounds: pass "
                "bounds=(lo, hi), per-feature arrays or {column: (lo, hi)} (a mean or median "
                'of unbounded values has unbounded sensitivity); bounds="data" reads them '
                "off the rows and is not private."
            )
        if isinstance(self.bounds, str):
            warnings.warn(
                'bounds="data" reads the bounds off the private data without noise; the '
                "result carries no differential-privacy guarantee for them. Pass public "
                "bounds instead.",
                PrivacyLeakWarning,
                stacklevel=3,
            )
            obs = np.where(mask, np.nan, X)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-missing columns
                lo, hi = np.nanmin(obs, axis=0), np.nanmax(obs, axis=0)
            lo = np.where(np.isfinite(lo), lo, 0.0)
            hi = np.where(np.isfinite(hi), hi, 1.0)
            return lo, np.where(lo >= hi, lo + 1.0, hi)
        names = column_labels(self, d) if hasattr(self, "feature_names_in_") else None
        return check_bounds(self.bounds, d, name="bounds", columns=names)

    def _mean(self, X, mask, lo, hi, plan, rng):
        """``c + h S~ / C~`` per column: the noisy sums of the scaled observed values over
        the noisy observed counts, with the plan's sensitivities and budgets."""
        centre, half = lo / 2 + hi / 2, hi / 2 - lo / 2
        Z = np.where(mask, 0.0, np.clip((np.where(mask, centre, X) - centre) / half, -1, 1))
        counts = (~mask).sum(axis=0).astype(np.int64)
        return self._mean_release(Z.sum(axis=0), counts, lo, hi, plan, rng)

    def _mean_release(self, sums, counts, lo, hi, plan, rng):
        """The fill values from the exact sums of the scaled observed values and the
        observed counts, released with the plan's noise."""
        centre, half = lo / 2 + hi / 2, hi / 2 - lo / 2
        secure = self.secure_mode
        s = noisy_release(add_laplace, sums, plan.sensitivity_sum, plan.eps_sum, rng, secure)
        c = noisy_release(
            add_geometric, counts, plan.sensitivity_count, plan.eps_count, rng, secure
        )
        m = np.where(c >= 1.0, np.clip(s / np.maximum(c, 1.0), -1.0, 1.0), 0.0)
        return centre + half * m

    def _median(self, X, mask, lo, hi, plan, rng):
        """The exponential-mechanism median of each column's clipped observed values,
        each with the plan's ``eps_column``."""
        eps_col = plan.eps_column
        out = np.empty(plan.n_features)
        for j in range(plan.n_features):
            obs = np.clip(X[~mask[:, j], j], lo[j], hi[j])
            if math.isinf(eps_col):
                out[j] = float(np.median(obs)) if obs.size else lo[j] / 2 + hi[j] / 2
            else:
                out[j] = private_quantile(
                    obs, 0.5, lower=lo[j], upper=hi[j], epsilon=eps_col, rng=rng
                )
        return out

    @insert_docs(**DOCS)
    def transform(self, X):
        """Fill the missing cells (and append the indicators with ``add_indicator``).

        {transform_param_X}

        Returns
        -------
        ndarray or DataFrame of shape (n_samples, n_features) or (n_samples, 2 * n_features)
            A DataFrame (columns from :meth:`get_feature_names_out`, the input's index)
            when ``X`` is a DataFrame with string column names, so that a later step can
            use metadata by column name; an array otherwise, or the container that
            ``set_output`` asks for.
        """
        check_is_fitted(self)
        X_in = X
        X = self._validate(X, reset=False)
        mask = _missing_mask(X, self.missing_values)
        stats = self.statistics_
        if X.dtype.kind == "O" or stats.dtype.kind == "O":
            out = np.array(X, dtype=object)
        else:
            out = np.array(X, dtype=np.float64)
        rows, cols = np.nonzero(mask)
        out[rows, cols] = stats[cols]
        if self.add_indicator:
            out = np.hstack([out, mask.astype(out.dtype if out.dtype != object else np.float64)])
        return like_input(self, X_in, out)

    def inverse_transform(self, X):
        """Put the missing values back where the indicators are 1 (needs ``add_indicator``).

        Parameters
        ----------
        X : array-like of shape (n_samples, 2 * n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        if not self.add_indicator:
            raise ValueError(
                "inverse_transform needs add_indicator=True (the indicators say which "
                "cells were missing)"
            )
        X = check_array(X, dtype=None, ensure_all_finite="allow-nan")
        d = self.n_features_in_
        if X.shape[1] != 2 * d:
            raise ValueError(
                f"X has {X.shape[1]} columns, but {type(self).__name__} produces {2 * d}"
            )
        out = np.array(X[:, :d], dtype=object if X.dtype.kind == "O" else np.float64)
        missing = np.asarray(X[:, d:], dtype=np.float64) == 1.0
        out[missing] = self.missing_values
        return out

    @insert_docs(**DOCS)
    def get_feature_names_out(self, input_features=None):
        """The input names, then ``"missingindicator_{name}"`` with ``add_indicator``.

        {feature_names_io}
        """
        check_is_fitted(self)
        names = list(feature_names_in_or_default(self, input_features))
        if self.add_indicator:
            names += [f"missingindicator_{name}" for name in names]
        return np.asarray(names, dtype=object)
