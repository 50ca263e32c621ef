"""Transformers defined by declared metadata only: no privacy cost.

:class:`PublicBoundsScaler` and :class:`PublicOneHotEncoder` are thin scikit-learn
transformers around the shared :class:`skdp.utils.schema.TabularEncoder`, which maps
each record with a public schema (declared bounds, declared categories) and reads no
statistic of the data.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from skdp.base import DPEstimatorMixin
from skdp.preprocessing._common import (
    DOCS,
    bounds_constraint,
    column_labels,
    feature_names_in_or_default,
    fitted_float_input,
    fitted_inverse_input,
    like_input,
)
from skdp.utils._data_free import missing_values_message
from skdp.utils._docstrings import FRAGMENTS, insert_docs
from skdp.utils._sklearn_compat import StrOptions, _fit_context, check_is_fitted
from skdp.utils.schema import ColumnSpec, TabularEncoder, TabularSchema
from skdp.utils.validation import (
    check_array,
    check_bounds,
    check_width,
    clip_to_bounds,
    data_bounds,
    validate_data,
)

__all__ = ["PublicBoundsScaler", "PublicOneHotEncoder"]

#: The Notes ending both public transformers share (inserted by ``insert_docs``).
_DOCS = dict(
    public_fit_floating_point="""\
**Floating point.** Nothing is random and nothing about the rows is released, so
floating-point attacks on noise (Mironov 2012) do not apply.

References
----------
"""
    + FRAGMENTS["ref_mironov2012"],
)

#: The fitted facts both public transformers share (their metadata ``bounds`` or
#: ``categories`` is all they learn; ``"data"`` reads it off the rows).
_PUBLIC_FACTS = """\
encoder_ : skdp.utils.schema.TabularEncoder
    The per-record encoder built from the declared {0}.
epsilon_spent_, delta_spent_ : float
    0 (``inf`` with ``{0}="data"``).
privacy_guarantee_ : str
    ``"exact"`` (``"none"`` with ``{0}="data"``).
nonprivate_options_ : list of str"""
_DOCS.update(
    {f"attr_public_facts_{name}": _PUBLIC_FACTS.format(name) for name in ("bounds", "categories")}
)


def _check_feature_range(feature_range):
    try:
        a, b = (float(v) for v in feature_range)
    except (TypeError, ValueError):
        raise ValueError("feature_range must be a (low, high) pair of numbers") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a >= b:
        raise ValueError("feature_range must be finite with low < high")
    check_width(a, b, name="feature_range")
    return a, b


@insert_docs(**_DOCS)
class PublicBoundsScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature from its declared bounds onto ``feature_range``; no privacy cost.

    The private-data replacement for :class:`sklearn.preprocessing.MinMaxScaler`: the
    map ``x -> a + (b - a) (clip(x, lo, hi) - lo) / (hi - lo)`` uses only the declared
    bounds ``(lo, hi)`` of every column, never a statistic of the rows, so fitting it
    costs no privacy (``epsilon_spent_ = 0``). It is the public-bounds job of
    :class:`skdp.utils.schema.TabularEncoder` (used internally) as a scikit-learn
    transformer: it works in a :class:`~sklearn.pipeline.Pipeline` and a
    :class:`~sklearn.compose.ColumnTransformer`, returns a DataFrame under
    ``set_output(transform="pandas")`` and has ``get_feature_names_out`` and
    ``inverse_transform``.

    Parameters
    ----------
    bounds : (lo, hi), per-feature arrays, dict {column: (lo, hi)} or "data", default=None
        Public bounds of every feature (a dict names every column of a DataFrame).
        ``None`` raises ``ValueError`` at ``fit``: a public scaler needs declared bounds
        (use :class:`DPStandardScaler`, whose ``bounds=None`` spends part of its budget
        on a private estimate, if there are none). ``"data"`` reads the minimum and
        maximum off the rows: the non-private opt-in, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`, ``epsilon_spent_ = inf``.
    feature_range : (a, b), default=(0.0, 1.0)
        Target range; ``(-1.0, 1.0)`` gives the symmetric unit range. Its width ``b - a``
        must be finite and at least ``1e-150``, like that of the bounds
        (:func:`skdp.utils.validation.check_width`), and the scale
        ``(b - a) / (hi - lo)`` finite.
    clip : bool, default=True
        Clip values to the bounds, silently (a warning would reveal that some record
        lies outside them). ``False`` raises ``ValueError`` naming the column instead.

    Attributes
    ----------
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The declared bounds.
    scale_ : ndarray of shape (n_features,)
        ``(b - a) / (hi - lo)``.
    min_ : ndarray of shape (n_features,)
        ``a - scale_ * lo``, so that ``transform(x) = scale_ * clip(x) + min_``.
    {attr_public_facts_bounds}
        ``["bounds"]`` with ``bounds="data"``, else empty.
    {attr_features_in}

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`). The fitted state (bounds, scale, offset) depends on
    the declared bounds and the number of columns only; two neighbouring data sets give
    the identical fitted transformer, so the release is 0-DP (sensitivity 0, no
    mechanism): ``epsilon_spent_ = 0``, an exact guarantee. ``transform`` is a
    per-record function: what it returns for a row depends on that row alone, so the
    privacy of a downstream estimator is unchanged. Values outside the declared bounds
    are clipped; that is what keeps the sensitivities of a downstream DP estimator
    declared with the same bounds valid.

    {public_fit_floating_point}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PublicBoundsScaler
    >>> X = np.array([[30.0, 120.0], [65.0, 180.0], [95.0, 260.0]])
    >>> scaler = PublicBoundsScaler(bounds=([18, 80], [90, 220])).fit(X)
    >>> scaler.transform(X).round(3)
    array([[0.167, 0.286],
           [0.653, 0.714],
           [1.   , 1.   ]])
    >>> scaler.epsilon_spent_, scaler.privacy_guarantee_
    (0.0, 'exact')
    >>> scaler.inverse_transform([[0.5, 0.5]])
    array([[ 54., 150.]])
    """

    #: Learns nothing from the rows beyond declared metadata (read by skdp.pipeline).
    _skdp_public_transform = True

    _parameter_constraints: dict = {
        "bounds": bounds_constraint(),
        "feature_range": [tuple, list],
        "clip": ["boolean"],
    }

    def __init__(self, *, bounds=None, feature_range=(0.0, 1.0), clip=True):
        self.bounds = bounds
        self.feature_range = feature_range
        self.clip = clip

    @insert_docs(**DOCS)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Build the map from the declared bounds (the values of ``X`` are not read).

        {transform_param_X}
            Only its shape and column names are used (and its values with
            ``bounds="data"`` or ``clip=False``).
        y : None
            Ignored.

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        a, b = _check_feature_range(self.feature_range)
        d = X.shape[1]
        columns = column_labels(self, d)
        if self.bounds is None:
            raise ValueError(
                "PublicBoundsScaler needs declared bounds: pass bounds=(lo, hi), per-feature "
                "arrays or {column: (lo, hi)}. Without public bounds use DPStandardScaler "
                '(bounds=None spends part of its epsilon on a private estimate); bounds="data" '
                "reads them off the rows and is not private."
            )
        if isinstance(self.bounds, dict) and not hasattr(self, "feature_names_in_"):
            raise ValueError(
                "bounds is a dict {column: (lo, hi)} but X has no column names. Pass a "
                "DataFrame: skdp's transformers keep a DataFrame's column names (a "
                "DPSimpleImputer before this scaler returns a DataFrame for a DataFrame), "
                "and a scikit-learn step before it does with set_output(transform='pandas'). "
                "Or give the bounds as per-column arrays in column order, ([lo...], [hi...])."
            )
        if isinstance(self.bounds, str):
            lo, hi = data_bounds(X, name="bounds")
        else:
            names = columns if hasattr(self, "feature_names_in_") else None
            lo, hi = check_bounds(self.bounds, d, name="bounds", columns=names)
        if not self.clip:
            clip_to_bounds(X, lo, hi, clip=False, columns=columns)
        schema = TabularSchema(
            columns=tuple(
                ColumnSpec(name=j, kind="continuous", bounds=(lo[j], hi[j])) for j in range(d)
            ),
            input_type="array",
            array_dtype="float64",
        )
        self.encoder_ = TabularEncoder(schema, numeric_range=(a, b), clip=self.clip)
        self.bounds_ = (lo, hi)
        self.scale_ = np.array([self.encoder_.scale_[j] for j in range(d)])
        self.min_ = np.array([self.encoder_.offset_[j] for j in range(d)])
        wide = np.nonzero(~(np.isfinite(self.scale_) & np.isfinite(self.min_)))[0]
        if wide.size:
            raise ValueError(
                f"feature_range is too wide for the bounds of column(s) "
                f"{[columns[j] for j in wide]}: the scale (b - a) / (hi - lo) overflows "
                "float64; narrow feature_range"
            )
        self._record_privacy_spent(0.0, 0.0, guarantee="exact")
        return self

    @insert_docs(**DOCS)
    def transform(self, X):
        """Clip to the declared bounds and map onto ``feature_range``.

        {transform_io}
        """
        X_in = X
        X = fitted_float_input(self, X)
        if not self.clip:
            lo, hi = self.bounds_
            clip_to_bounds(X, lo, hi, clip=False, columns=column_labels(self, X.shape[1]))
        return like_input(self, X_in, self.encoder_.transform(X))

    @insert_docs(**DOCS)
    def inverse_transform(self, X):
        """Map back to the original units (post-processing; clipped to the bounds).

        {inverse_transform_io}
        """
        X = fitted_inverse_input(self, X)
        return np.asarray(self.encoder_.inverse_transform(X), dtype=np.float64)


# --------------------------------------------------------------------------- one-hot
def _element_error(col, column):
    """The error for a column that is neither all strings nor all numbers (no value shown)."""
    label = repr(column)
    kinds = set()
    for v in col:
        if v is None or (isinstance(v, float | np.floating) and math.isnan(v)):
            return ValueError(
                missing_values_message("X", [column])
                + " Here: DPSimpleImputer(strategy='constant') with a fill_value that is "
                "among the declared categories."
            )
        if isinstance(v, str):
            kinds.add("str")
        elif isinstance(v, bool | int | float | np.number):
            kinds.add("num")
        else:
            return TypeError(
                f"column {label} holds an element that is neither a string nor a number "
                "(the value is not shown)"
            )
    if kinds == {"str", "num"}:
        return ValueError(
            f"column {label} mixes strings and numbers (the values are not shown); an "
            "encoder needs one type per column"
        )
    return None


def _check_column_types(X, labels):
    """Each column holds only strings or only numbers (as scikit-learn's encoders)."""
    from pandas.api.types import infer_dtype

    if X.dtype.kind in "biufUS":
        return
    for j in range(X.shape[1]):
        kind = infer_dtype(X[:, j], skipna=False)
        if kind in ("string", "integer", "floating", "mixed-integer-float", "boolean", "empty"):
            continue
        err = _element_error(X[:, j], labels[j])
        if err is not None:
            raise err


@insert_docs(**_DOCS)
class PublicOneHotEncoder(DPEstimatorMixin, TransformerMixin, BaseEstimator):
    """One-hot encode with declared categories only; no privacy cost.

    The private-data replacement for :class:`sklearn.preprocessing.OneHotEncoder`,
    whose default ``categories="auto"`` reads the category sets off the rows (a rare
    level reveals that some record has it, and changes the output width). Here every
    column's categories are declared; nothing is read off the data, so fitting costs
    no privacy (``epsilon_spent_ = 0``). pandas ``category`` dtypes are **not**
    declarations: ``df.astype("category")`` builds its levels from the rows, so their
    categories are ignored and ``categories`` is still required. The encoding is done
    by :class:`skdp.utils.schema.TabularEncoder`.

    Parameters
    ----------
    categories : list of lists, dict {column: list} or "data", default=None
        The declared levels of every column, in output order (a list per column, or a
        dict naming every column of a DataFrame). ``None`` raises ``ValueError`` at
        ``fit``. ``"data"`` reads them off the rows (sorted): the non-private opt-in,
        with a :class:`~skdp.exceptions.PrivacyLeakWarning`, ``epsilon_spent_ = inf``.
    drop : {None, "first", "if_binary"}, default=None
        Drop the first level of every column (``"first"``) or of two-level columns
        (``"if_binary"``), decided from the declared categories only.
    handle_unknown : {"error", "ignore"}, default="error"
        A value that is not a declared category raises ``ValueError`` naming the column
        (never the value); ``"ignore"`` encodes it as all zeros (and
        ``inverse_transform`` gives ``None``). With ``drop``, an ignored value is
        indistinguishable from the dropped level.

    Attributes
    ----------
    categories_ : list of ndarray
        The declared categories of every column, in output order.
    drop_idx_ : ndarray of object or None
        Index of the dropped level per column (``None`` where none is dropped).
    {attr_public_facts_categories}
    {attr_features_in}

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`). The fitted state (categories, output width, feature
    names) depends on the declarations and the number of columns only: neighbouring
    data sets give the identical encoder, so the release is 0-DP (sensitivity 0, no
    mechanism), an exact guarantee. ``transform`` is per record. The unknown-category
    error of ``handle_unknown="error"`` is raised by ``transform`` on the rows it is
    given; it names the column and never the value. Missing values (NaN, ``None``) are
    rejected: impute them first, e.g. with ``DPSimpleImputer(strategy="constant",
    fill_value="missing")`` and ``"missing"`` among the declared categories.

    {public_fit_floating_point}

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp.preprocessing import PublicOneHotEncoder
    >>> df = pd.DataFrame({"sex": ["F", "M", "F"], "smoker": ["never", "former", "current"]})
    >>> enc = PublicOneHotEncoder(
    ...     categories={"sex": ["F", "M"], "smoker": ["never", "former", "current"]},
    ...     drop="if_binary",
    ... ).fit(df)
    >>> enc.transform(df)  # a DataFrame in: a DataFrame out, named
       sex_M  smoker_never  smoker_former  smoker_current
    0    0.0           1.0            0.0             0.0
    1    1.0           0.0            1.0             0.0
    2    0.0           0.0            0.0             1.0
    >>> list(enc.get_feature_names_out())
    ['sex_M', 'smoker_never', 'smoker_former', 'smoker_current']
    >>> enc.epsilon_spent_
    0.0
    """

    #: Learns nothing from the rows beyond declared metadata (read by skdp.pipeline).
    _skdp_public_transform = True

    _parameter_constraints: dict = {
        "categories": [None, StrOptions({"data"}), list, tuple, dict],
        "drop": [None, StrOptions({"first", "if_binary"})],
        "handle_unknown": [StrOptions({"error", "ignore"})],
    }

    def __init__(self, *, categories=None, drop=None, handle_unknown="error"):
        self.categories = categories
        self.drop = drop
        self.handle_unknown = handle_unknown

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _validate(self, X, *, reset):
        X = validate_data(self, X, dtype=None, reset=reset)
        _check_column_types(X, column_labels(self, X.shape[1]))
        return X

    def _declared(self, X, labels):
        d = X.shape[1]
        if self.categories is None:
            raise ValueError(
                f"PublicOneHotEncoder needs declared categories for column(s) {labels}: pass "
                "categories=[[...], ...] or {column: [...]}. A pandas 'category' dtype is not "
                "a declaration: "
                "astype('category') takes its levels from the rows. "
                'categories="data" reads them off the rows and is not private.'
            )
        if isinstance(self.categories, str):
            # the non-private opt-in: the schema reads the levels and warns
            schema = TabularSchema.from_data(
                np.asarray(X, dtype=object), categories="data", column_types=["categorical"] * d
            )
            return [list(c.categories) for c in schema]
        if isinstance(self.categories, dict):
            missing = [c for c in labels if c not in self.categories]
            unknown = [c for c in self.categories if c not in set(labels)]
            if missing or unknown:
                raise ValueError(
                    f"categories must name every column once: missing {missing}, unknown {unknown}"
                )
            cats = [self.categories[c] for c in labels]
        else:
            cats = list(self.categories)
            if len(cats) != d:
                raise ValueError(f"categories has {len(cats)} lists for {d} column(s)")
        out = []
        for label, c in zip(labels, cats, strict=True):
            if isinstance(c, str) or not hasattr(c, "__iter__"):
                raise ValueError(f"categories for column {label!r} must be a list of levels")
            c = [v.item() if isinstance(v, np.generic) else v for v in c]
            if not c:
                raise ValueError(f"categories for column {label!r} must not be empty")
            if len(set(c)) != len(c):
                raise ValueError(f"categories for column {label!r} must be unique")
            out.append(c)
        return out

    @insert_docs(**DOCS)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Build the encoder from the declared categories (the values are not read).

        {transform_param_X}
            Only its shape, column names and element types are used (and its values
            with ``categories="data"``).
        y : None
            Ignored.

        Returns
        -------
        self
        """
        X = self._validate(X, reset=True)
        labels = column_labels(self, X.shape[1])
        cats = self._declared(X, labels)
        schema = TabularSchema(
            columns=tuple(
                ColumnSpec(name=j, kind="categorical", categories=tuple(c))
                for j, c in enumerate(cats)
            ),
            input_type="array",
        )
        self.encoder_ = TabularEncoder(schema, categorical="onehot", numeric_range=(0.0, 1.0))
        self.categories_ = [np.asarray(c, dtype=object) for c in cats]
        if self.drop == "first":
            drop = [0 for _ in cats]
        elif self.drop == "if_binary":
            drop = [0 if len(c) == 2 else None for c in cats]
        else:
            drop = None
        self.drop_idx_ = None if drop is None else np.asarray(drop, dtype=object)
        self._record_privacy_spent(0.0, 0.0, guarantee="exact")
        return self

    def _kept_columns(self):
        keep = []
        for j, c in enumerate(self.categories_):
            sl = self.encoder_.slices_[j]
            skip = None if self.drop_idx_ is None else self.drop_idx_[j]
            keep.extend(sl.start + k for k in range(len(c)) if k != skip)
        return np.asarray(keep, dtype=np.intp)

    @insert_docs(**DOCS)
    def transform(self, X):
        """One-hot encode ``X`` with the declared categories.

        {transform_param_X}

        Returns
        -------
        ndarray or DataFrame of shape (n_samples, n_output_features)
            A DataFrame (columns from :meth:`get_feature_names_out`, the input's index)
            when ``X`` is a DataFrame with string column names; an array otherwise, or
            what ``set_output`` asks for.

        Raises
        ------
        ValueError
            On a value that is not a declared category (``handle_unknown="error"``) or a
            missing value; the message names the column, never the value.
        """
        import pandas as pd

        check_is_fitted(self)
        X_in = X
        X = self._validate(X, reset=False)
        unknown = None
        if self.handle_unknown == "ignore":
            X = np.array(X, dtype=object)
            unknown = np.zeros(X.shape, dtype=bool)
            for j, c in enumerate(self.categories_):
                codes = pd.Index(list(c), dtype=object).get_indexer(X[:, j])
                unknown[:, j] = codes < 0
                X[unknown[:, j], j] = c[0]
        Z = self.encoder_.transform(X)
        if unknown is not None:
            for j in range(len(self.categories_)):
                Z[unknown[:, j], self.encoder_.slices_[j]] = 0.0
        return like_input(self, X_in, Z[:, self._kept_columns()])

    def inverse_transform(self, X):
        """Decode one-hot blocks back to the declared levels (post-processing).

        An all-zero block decodes to the dropped level, or to ``None`` (an ignored
        unknown value) when no level is dropped.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_output_features)

        Returns
        -------
        ndarray of object of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = check_array(X, dtype=np.float64)
        keep = self._kept_columns()
        if X.shape[1] != keep.size:
            raise ValueError(
                f"X has {X.shape[1]} columns, but {type(self).__name__} produces {keep.size}"
            )
        full = np.zeros((X.shape[0], self.encoder_.n_encoded_features_))
        full[:, keep] = X
        out = np.empty((X.shape[0], len(self.categories_)), dtype=object)
        for j, c in enumerate(self.categories_):
            block = full[:, self.encoder_.slices_[j]]
            skip = None if self.drop_idx_ is None else self.drop_idx_[j]
            empty = block.max(axis=1) <= 0.0
            codes = np.argmax(block, axis=1)
            col = c[codes].astype(object)
            col[empty] = c[skip] if skip is not None else None
            out[:, j] = col
        return out

    @insert_docs(**DOCS)
    def get_feature_names_out(self, input_features=None):
        """Output names ``"{column}_{level}"`` for every kept level.

        {feature_names_io}
        """
        check_is_fitted(self)
        names = feature_names_in_or_default(self, input_features)
        out = []
        for j, (name, c) in enumerate(zip(names, self.categories_, strict=True)):
            skip = None if self.drop_idx_ is None else self.drop_idx_[j]
            out.extend(f"{name}_{v}" for k, v in enumerate(c) if k != skip)
        return np.asarray(out, dtype=object)
