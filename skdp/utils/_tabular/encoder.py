"""Per-record encoding of a table from its public schema, and the output dtype rules."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from skdp.utils._tabular.columns import (
    ColumnSpec,
    _label,
    _numeric_column,
    missing_values_error,
)
from skdp.utils._tabular.schema import TabularSchema

__all__ = ["TabularEncoder", "assemble"]


class TabularEncoder:
    """Per-record encoder between a table and a float matrix, from a public schema.

    Parameters
    ----------
    schema : TabularSchema
        Must be complete (every numeric column has bounds, every categorical column
        has categories).
    categorical : {"onehot", "ordinal"}, default="onehot"
        One-hot blocks (off/on = the ``numeric_range`` endpoints) or one column of
        integer codes ``0..K-1``.
    numeric_range : tuple (a, b), default=(0, 1)
        Numeric columns are mapped affinely from their declared bounds onto ``[a, b]``;
        binary columns hold ``a`` or ``b``.
    clip : bool, default=True
        Clip numeric values to the declared bounds (silently: a warning would reveal a
        data fact). ``False`` raises ``ValueError`` naming the column instead.
    integer_margin : float, default=0.0
        Integer columns are scaled from ``(lo - margin, hi + margin)``; use 0.5 for
        uniform dequantization.

    Attributes
    ----------
    n_encoded_features_ : int
        Width of the encoded matrix.
    slices_ : dict {column name: slice}
        Where each column lives in the encoded matrix.
    kinds_ : dict {column name: kind}
    scale_, offset_ : dict {numeric column name: float}
        ``z = scale * x + offset`` for each numeric column.
    log_jacobian_ : float
        ``sum(log |scale|)`` over numeric columns: the log-determinant of the Jacobian
        of the numeric scaling ``x -> z``. A density ``p_z`` on the encoded numeric
        coordinates gives ``log p_x(x) = log p_z(z) + log_jacobian_``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils.schema import TabularSchema, TabularEncoder
    >>> X = np.array([[0.5, 2.0], [1.0, 4.0]])
    >>> schema = TabularSchema.from_data(X, bounds=(0.0, 4.0))
    >>> enc = TabularEncoder(schema, numeric_range=(-1, 1))
    >>> enc.transform(X)
    array([[-0.75,  0.  ],
           [-0.5 ,  1.  ]])
    >>> enc.inverse_transform(enc.transform(X))
    array([[0.5, 2. ],
           [1. , 4. ]])
    """

    def __init__(
        self,
        schema: TabularSchema,
        *,
        categorical: str = "onehot",
        numeric_range=(0.0, 1.0),
        clip: bool = True,
        integer_margin: float = 0.0,
    ):
        if not isinstance(schema, TabularSchema):
            raise TypeError("schema must be a TabularSchema")
        if categorical not in ("onehot", "ordinal"):
            raise ValueError(f"categorical must be 'onehot' or 'ordinal', got {categorical!r}")
        a, b = (float(v) for v in numeric_range)
        if not (math.isfinite(a) and math.isfinite(b)) or a >= b:
            raise ValueError("numeric_range must be a finite (low, high) pair with low < high")
        if integer_margin < 0:
            raise ValueError("integer_margin must be >= 0")
        schema.check_complete()
        self.schema = schema
        self.categorical = categorical
        self.numeric_range = (a, b)
        self.clip = bool(clip)
        self.integer_margin = float(integer_margin)
        self._layout()

    def _layout(self):
        a, b = self.numeric_range
        pos = 0
        self.slices_, self.kinds_, self.scale_, self.offset_ = {}, {}, {}, {}
        self._indexers = {}
        for c in self.schema:
            self.kinds_[c.name] = c.kind
            if c.kind == "categorical" and self.categorical == "onehot":
                width = len(c.categories)
            else:
                width = 1
            self.slices_[c.name] = slice(pos, pos + width)
            pos += width
            if c.is_numeric:
                lo, hi = c.bounds
                if c.kind == "integer":
                    lo, hi = lo - self.integer_margin, hi + self.integer_margin
                scale = (b - a) / (hi - lo)
                self.scale_[c.name] = scale
                self.offset_[c.name] = a - scale * lo
            if c.categories is not None:
                import pandas as pd

                self._indexers[c.name] = pd.Index(list(c.categories), dtype=object)
        self.n_encoded_features_ = pos
        self.log_jacobian_ = float(sum(math.log(abs(s)) for s in self.scale_.values()))

    def fit(self, X=None, y=None):
        """No-op (the encoder is defined by the public schema); returns ``self``."""
        return self

    def log_abs_det_jacobian(self) -> float:
        """``log |det dz/dx|`` of the numeric scaling (constant; see ``log_jacobian_``)."""
        return self.log_jacobian_

    # ----------------------------------------------------------------- forward
    def codes(self, X) -> np.ndarray:
        """Integer level codes of categorical/binary columns and clipped float values of
        numeric columns, one column per schema column (validated like
        :meth:`transform`).

        A column with a declared missing level (``ColumnSpec.missing``) codes a missing
        cell as NaN (numeric) or as the extra level ``len(categories)`` (categorical,
        binary)."""
        cols = self.schema.columns_of(X)
        out = np.empty((len(cols[0]), self.schema.n_columns), dtype=float)
        for j, (c, col) in enumerate(zip(self.schema, cols, strict=True)):
            if c.is_numeric:
                out[:, j] = self._numeric(c, col)
            else:
                out[:, j] = self._level_codes(c, col)
        return out

    def _numeric(self, c: ColumnSpec, col) -> np.ndarray:
        v = _numeric_column(col, c.name, missing=c.missing)
        lo, hi = c.bounds
        if self.clip:
            return np.clip(v, lo, hi)
        if np.any((v < lo) | (v > hi)):
            raise ValueError(
                f"column {_label(c.name)} has values outside its declared bounds; pass "
                "clip=True to clip them"
            )
        return v

    def _level_codes(self, c: ColumnSpec, col) -> np.ndarray:
        import pandas as pd

        values = np.asarray(col)
        if values.dtype.kind == "f" and np.isinf(values).any():
            raise ValueError(f"column {_label(c.name)} contains infinity")
        try:
            inverse, uniques = pd.factorize(values, use_na_sentinel=True)
        except TypeError:  # unhashable entries
            raise ValueError(f"column {_label(c.name)} contains unhashable values") from None
        absent = inverse < 0
        if absent.any() and not c.missing:
            raise missing_values_error(c.name)
        if len(uniques) == 0:  # every cell missing (a declared missing level)
            return np.full(len(inverse), len(c.categories), dtype=np.int64)
        uniques = np.asarray(uniques, dtype=object)
        ucodes = self._indexers[c.name].get_indexer(uniques)
        if c.kind == "binary" and (ucodes < 0).any():
            # declared {0, 1} binaries also accept 0.0/1.0 and True/False
            num = pd.Index([0, 1], dtype=object).get_indexer(uniques)
            ucodes = np.where(ucodes < 0, num, ucodes)
        unknown = ucodes < 0
        if unknown.any():
            if c.other is None:
                raise ValueError(
                    f"column {_label(c.name)} contains values that are not among its declared "
                    "categories; declare them (or an 'other' level)"
                )
            ucodes = np.where(unknown, c.categories.index(c.other), ucodes)
        out = ucodes.astype(np.int64)[inverse]
        if absent.any():  # the declared missing level comes after the categories
            out[absent] = len(c.categories)
        return out

    def transform(self, X) -> np.ndarray:
        """Encode ``X`` into a float matrix of shape ``(n_samples, n_encoded_features_)``.

        Raises
        ------
        ValueError
            On missing/extra columns, NaN or infinity, unknown categories, or (with
            ``clip=False``) numeric values outside the declared bounds. The message
            names the column, never the value.
        """
        a, b = self.numeric_range
        with_missing = [c.name for c in self.schema if c.missing]
        if with_missing:
            raise ValueError(
                f"column(s) {with_missing} declare a missing level, which this encoding "
                "(scaled numbers, one-hot blocks) cannot hold; use codes(), or an estimator "
                "that models missing values (missing='category')"
            )
        cols = self.schema.columns_of(X)
        n = len(cols[0])
        Z = np.full((n, self.n_encoded_features_), a if self.categorical == "onehot" else 0.0)
        for c, col in zip(self.schema, cols, strict=True):
            sl = self.slices_[c.name]
            if c.is_numeric:
                v = self._numeric(c, col)
                Z[:, sl.start] = self.scale_[c.name] * v + self.offset_[c.name]
            elif c.kind == "binary":
                codes = self._level_codes(c, col)
                Z[:, sl.start] = np.where(codes == 1, b, a)
            elif self.categorical == "onehot":
                codes = self._level_codes(c, col)
                Z[:, sl.start : sl.stop] = a
                Z[np.arange(n), sl.start + codes] = b
            else:
                Z[:, sl.start] = self._level_codes(c, col)
        return Z

    # ----------------------------------------------------------------- inverse
    def decode_codes(self, C) -> list:
        """Turn a codes matrix (as from :meth:`codes`, or a list of per-column code
        arrays) into per-column value arrays (numeric columns clipped to their bounds and
        integers rounded; levels as :class:`pandas.Categorical`). In a column with a
        declared missing level, NaN (and, for levels, the code ``len(categories)``)
        decodes to a missing value."""
        if isinstance(C, list | tuple):
            cols = [np.asarray(v, dtype=float) for v in C]
        else:
            C = np.asarray(C, dtype=float)
            cols = [C[:, j] for j in range(C.shape[1])]
        out = []
        for c, v in zip(self.schema, cols, strict=True):
            out.append(self._finish(c, v) if c.is_numeric else self._levels(c, v))
        return out

    def _finish(self, c: ColumnSpec, v: np.ndarray) -> np.ndarray:
        lo, hi = c.bounds
        v = np.clip(v, lo, hi)
        if c.kind == "integer":
            v = np.clip(np.rint(v), math.ceil(lo), math.floor(hi))
        return v

    def _levels(self, c: ColumnSpec, codes: np.ndarray):
        """Level values for codes, as a :class:`pandas.Categorical` (array-like)."""
        import pandas as pd

        codes = np.asarray(codes, dtype=float)
        absent = None
        if c.missing:
            absent = np.isnan(codes) | (codes >= len(c.categories) - 0.5)
            codes = np.where(absent, 0.0, codes)
        codes = np.clip(np.rint(codes), 0, len(c.categories) - 1).astype(np.int64)
        if absent is not None:
            codes[absent] = -1  # pandas' code of a missing value
        cats = pd.Index(list(c.categories), dtype=object, tupleize_cols=False)
        return pd.Categorical.from_codes(codes, categories=cats)

    def inverse_transform(self, Z):
        """Decode an encoded matrix back to the table (post-processing).

        Numeric columns are unscaled and clipped to their bounds (integers rounded);
        one-hot blocks decode by argmax, ordinal codes by rounding and clipping;
        binaries by thresholding at the midpoint of ``numeric_range``.

        Returns
        -------
        DataFrame (same columns, order and dtypes as the schema's input) or ndarray.
        """
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.n_encoded_features_:
            raise ValueError(
                f"Z must have shape (n_samples, {self.n_encoded_features_}), got {Z.shape}"
            )
        a, b = self.numeric_range
        values = []
        for c in self.schema:
            sl = self.slices_[c.name]
            if c.is_numeric:
                x = (Z[:, sl.start] - self.offset_[c.name]) / self.scale_[c.name]
                values.append(self._finish(c, x))
            elif c.kind == "binary":
                values.append(self._levels(c, (Z[:, sl.start] > (a + b) / 2).astype(float)))
            elif self.categorical == "onehot":
                values.append(self._levels(c, np.argmax(Z[:, sl], axis=1).astype(float)))
            else:
                values.append(self._levels(c, Z[:, sl.start]))
        return self.assemble(values)

    def assemble(self, values: Sequence[np.ndarray]):
        """Build the output table (DataFrame or array) from per-column value arrays, with
        the schema's dtypes."""
        return assemble(self.schema, values)


def assemble(schema: TabularSchema, values: Sequence[np.ndarray]):
    """Per-column arrays (schema order) -> DataFrame with the schema's dtypes, or ndarray."""
    import pandas as pd

    n = len(values[0]) if len(values) else 0
    if schema.input_type == "array":
        dtype = np.dtype(schema.array_dtype) if schema.array_dtype else np.dtype(float)
        if dtype.kind in "biu" and not all(_holds(dtype, v) for v in values):
            dtype = np.dtype(float)  # never cast into a dtype that cannot hold the values
        if dtype.kind == "f" and dtype.itemsize < 8 and not all(_fits(dtype, v) for v in values):
            dtype = np.dtype(float)  # float16/32 would turn large synthetic values into inf
        if dtype.kind in "biuf":
            out = np.empty((n, schema.n_columns), dtype=dtype)
        else:
            out = np.empty((n, schema.n_columns), dtype=object)
        for j, v in enumerate(values):
            out[:, j] = v
        return out
    data = {}
    for c, v in zip(schema, values, strict=True):
        data[c.name] = _cast(c, v)
    return pd.DataFrame(data, columns=schema.names)


def _cast(c: ColumnSpec, v):
    import pandas as pd
    from pandas.api.types import pandas_dtype

    if isinstance(v, pd.Categorical) and (v.codes < 0).any():
        return _cast_missing_levels(c, v)
    if isinstance(v, pd.Categorical) and (c.dtype is None or not c.dtype.startswith("category")):
        # decode the (few) categories once, then take
        levels = np.asarray(v.categories, dtype=object)
        if c.dtype is not None:
            try:
                dt = pandas_dtype(c.dtype)
                if getattr(dt, "kind", None) == "b":
                    levels = np.array([bool(x) for x in levels])
                return pd.Series(pd.array(levels, dtype=dt).take(v.codes))
            except (TypeError, ValueError):
                pass
        return pd.Series(levels[v.codes], dtype=object)
    if c.dtype is None:
        if c.kind == "integer" and _holds(np.dtype(np.int64), v):
            return pd.Series(np.asarray(v, dtype=float).astype(np.int64))  # by the kind
        return pd.Series(np.asarray(v), dtype=float if c.is_numeric else object)
    if c.dtype.startswith("category"):
        dt = pd.CategoricalDtype(
            categories=pd.Index(list(c.categories), tupleize_cols=False)
            if c.categories is not None
            else None,
            ordered=c.ordered,
        )
        if isinstance(v, pd.Categorical):
            return pd.Series(pd.Categorical.from_codes(v.codes, dtype=dt))
        return pd.Series(pd.Categorical(list(v), dtype=dt))
    try:
        dt = pandas_dtype(c.dtype)
    except TypeError:
        return pd.Series(v, dtype=object)
    if getattr(dt, "kind", None) in ("b", "i", "u") and not _holds(dt, v):
        # never cast into a dtype that cannot hold the values (numpy truncates
        # fractions and wraps integers around): keep int64 when it can, else float
        v = np.asarray(v, dtype=float)
        if np.all(v == np.rint(v)) and np.all(np.abs(v) < 2.0**63):
            return pd.Series(v.astype(np.int64))
        return pd.Series(v)
    try:
        return pd.Series(v).astype(dt)
    except (TypeError, ValueError):
        return pd.Series(v, dtype=object)


def _cast_missing_levels(c: ColumnSpec, v):
    """Levels with missing cells (code -1): a ``category`` dtype keeps them as NaN, a
    pandas string dtype as ``<NA>``, numeric levels become ``float64`` with NaN, the
    rest ``object`` with ``None``."""
    import pandas as pd
    from pandas.api.types import pandas_dtype

    absent = v.codes < 0
    if c.dtype is not None and c.dtype.startswith("category"):
        dt = pd.CategoricalDtype(
            categories=pd.Index(list(c.categories), tupleize_cols=False), ordered=c.ordered
        )
        return pd.Series(pd.Categorical.from_codes(v.codes, dtype=dt))
    levels = np.asarray(v.categories, dtype=object)
    codes = np.where(absent, 0, v.codes)
    if c.dtype is not None:
        try:
            dt = pandas_dtype(c.dtype)
        except TypeError:
            dt = None
        if isinstance(dt, pd.StringDtype):
            out = pd.array(levels, dtype=dt).take(codes)
            out[absent] = pd.NA
            return pd.Series(out)
    numeric = all(
        isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
        for x in levels
    )
    if numeric and (c.dtype is None or np.dtype(c.dtype).kind in "fiu"):
        out = np.asarray(levels, dtype=float)[codes]
        out[absent] = np.nan
        return pd.Series(out)
    out = levels[codes].astype(object)
    out[absent] = None
    return pd.Series(out, dtype=object)


def _fits(dt, v) -> bool:
    """Whether the float dtype ``dt`` holds every (finite) value of ``v`` without inf."""
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return True
    return v.size == 0 or bool(np.abs(v).max() <= float(np.finfo(dt).max))


def _holds(dt, v) -> bool:
    """Whether the bool/integer dtype ``dt`` holds every value of ``v`` exactly."""
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return True  # not numbers: let astype decide
    if v.size == 0:
        return True
    if not np.all(np.isfinite(v)) or not np.all(v == np.rint(v)):
        return False
    np_dt = np.dtype(getattr(dt, "numpy_dtype", dt))
    if np_dt.kind == "b":
        return bool(np.all((v == 0) | (v == 1)))
    info = np.iinfo(np_dt)
    return bool(v.min() >= info.min and v.max() <= info.max)
