"""Building a schema's columns from declared metadata and the dtype *families* of a table.

Only the shape of ``X`` and the family of each dtype (number, bool, string/object,
``category``; :func:`~skdp.utils._tabular.columns.structural_kind`) are read, except
with the ``"data"`` opt-ins, which read values (``bounds``, ``categories``) or the
integer/float split pandas inferred from the values (``column_types``), emit
:class:`~skdp.exceptions.PrivacyLeakWarning` and mark the schema ``data_derived``. Each
step (kinds, categories, bounds) is one function; :func:`infer_columns` runs them in
order.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._tabular.columns import (
    COLUMN_KINDS,
    NUMERIC_KINDS,
    ColumnSpec,
    _is_dataframe,
    _label,
    _numeric_column,
    _py,
    dtype_with_missing,
    kind_from_dtype,
    missing_values_error,
    output_dtype,
    structural_kind,
)

__all__ = ["infer_columns"]


class _Table:
    """Names, dtypes and raw column access of a DataFrame or 2-D array."""

    def __init__(self, X):
        if _is_dataframe(X):
            self.names = list(X.columns)
            self.dtypes = list(X.dtypes)
            self.input_type, self.array_dtype = "dataframe", None
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-dimensional, got {X.ndim} dimension(s)")
            self.names = list(range(X.shape[1]))
            self.dtypes = [X.dtype] * X.shape[1]
            self.input_type, self.array_dtype = "array", str(X.dtype)
        if not self.names:
            raise ValueError("X has no columns")
        self.X = X
        self.index = {n: i for i, n in enumerate(self.names)}
        self.missing = set()  # columns with a declared missing level (set_missing)

    def set_missing(self, missing):
        """Record the columns with a declared missing level: ``None``, ``"category"`` (all
        columns) or a list of column names."""
        if missing is None or (isinstance(missing, str) and missing == "error"):
            return
        if isinstance(missing, str):
            if missing != "category":
                raise ValueError(f'missing must be "error", "category" or a list; got {missing!r}')
            self.missing = set(self.names)
            return
        names = list(missing)
        unknown = self.unknown(names)
        if unknown:
            raise ValueError(f"missing names unknown column(s) {unknown}")
        self.missing = set(names)

    def column(self, name):
        if self.input_type == "dataframe":
            return self.X[name]
        return self.X[:, self.index[name]]

    def unknown(self, keys) -> list:
        return [k for k in keys if k not in self.index]


def _kinds(table: _Table, column_types) -> tuple[list, bool]:
    """The kind of each column and whether any was read off a dtype (``"data"``)."""
    kinds = [structural_kind(dt) for dt in table.dtypes]
    if isinstance(column_types, str):
        if column_types != "data":
            raise ValueError(f'column_types must be a dict, a list or "data"; got {column_types!r}')
        column_types = ["data"] * len(table.names)
    if column_types is not None:
        if isinstance(column_types, Mapping):
            unknown = table.unknown(column_types)
            if unknown:
                raise ValueError(f"column_types names unknown column(s) {unknown}")
            for k, v in column_types.items():
                kinds[table.index[k]] = v
        else:
            column_types = list(column_types)
            if len(column_types) != len(table.names):
                raise ValueError(
                    f"column_types has {len(column_types)} entries for {len(table.names)} columns"
                )
            kinds = column_types
    from_dtypes = [i for i, k in enumerate(kinds) if isinstance(k, str) and k == "data"]
    for i in from_dtypes:
        kinds[i] = kind_from_dtype(table.dtypes[i])
    if from_dtypes:
        warnings.warn(
            'column_types="data" takes the kinds from the dtypes, and pandas makes a numeric '
            "column integer only when every value is whole: one record can change the kind, "
            "the bins and the output dtype. Declare column_types instead.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
    for n, k in zip(table.names, kinds, strict=True):
        if k not in COLUMN_KINDS:
            raise ValueError(f"column {_label(n)}: unknown column type {k!r}")
    return kinds, bool(from_dtypes)


def _categories(table: _Table, kinds: list, categories) -> tuple[dict, bool]:
    """Declared levels per categorical/binary column ({name: list}), and whether any
    were read off the data."""
    import pandas as pd

    cat_names = [n for n, k in zip(table.names, kinds, strict=True) if k == "categorical"]
    declared: dict = {}
    for n, dt in zip(table.names, table.dtypes, strict=True):
        # A bool dtype fixes its levels. A pandas CategoricalDtype's categories are
        # NOT taken: astype("category") reads them off the (private) rows.
        if (
            kinds[table.index[n]] == "binary"
            and not isinstance(dt, pd.CategoricalDtype)
            and getattr(dt, "kind", None) == "b"
        ):
            declared[n] = [False, True]
    from_data = False
    if isinstance(categories, str):
        if categories != "data":
            raise ValueError(
                f'categories must be a dict, a list of lists or "data"; got {categories!r}'
            )
        from_data = True
    elif isinstance(categories, Mapping):
        unknown = table.unknown(categories)
        if unknown:
            raise ValueError(f"categories name unknown column(s) {unknown}")
        bad = [k for k in categories if kinds[table.index[k]] not in ("categorical", "binary")]
        if bad:
            fix = {k: "categorical" for k in bad}
            raise ValueError(
                f"categories given for column(s) {bad}, which are numeric: a number dtype "
                "(integer codes such as 1, 2, 3 included) makes a column 'continuous' unless "
                f"its kind is declared. Declare column_types={fix} (or 'binary' for two "
                'levels; in a schema file, "kind": "categorical") to use these categories.'
            )
        declared.update({k: list(v) for k, v in categories.items()})
    elif categories is not None:
        categories = list(categories)
        if len(categories) != len(cat_names):
            raise ValueError(
                f"categories has {len(categories)} lists for {len(cat_names)} categorical column(s)"
            )
        declared.update({n: list(v) for n, v in zip(cat_names, categories, strict=True)})
    missing = [n for n in cat_names if n not in declared]
    if missing and not from_data:
        in_dtype = [
            n for n in missing if isinstance(table.dtypes[table.index[n]], pd.CategoricalDtype)
        ]
        note = (
            f" A pandas 'category' dtype does not declare them (column(s) {in_dtype}):"
            " astype('category') takes its categories from the rows."
            if in_dtype
            else ""
        )
        raise ValueError(
            f"no declared categories for categorical column(s) {missing}. "
            "Category sets are public metadata: pass categories={column: [...]} "
            '(or categories="data" to read them off the data, which leaks).' + note
        )
    if missing:
        warnings.warn(
            'categories="data" reads the category sets off the private data; a rare '
            "category reveals that some record has it. Declare the categories instead.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        for n in missing:
            vals = pd.Series(np.asarray(table.column(n), dtype=object))
            if vals.isna().any():
                if n not in table.missing:
                    raise missing_values_error(n)
                vals = vals[~vals.isna()]
            declared[n] = sorted(pd.unique(vals).tolist(), key=lambda v: (str(type(v)), v))
    return declared, bool(missing)


def _pair(name, v) -> tuple[float, float]:
    try:
        lo, hi = v
        return float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(f"bounds for column {_label(name)} must be a (low, high) pair") from None


def _bounds(table: _Table, kinds: list, bounds) -> tuple[dict, bool]:
    """Declared (or, with ``"data"``, read) bounds per numeric column ({name: (lo, hi)}),
    and whether any were read off the data."""
    num_names = [n for n, k in zip(table.names, kinds, strict=True) if k in NUMERIC_KINDS]
    resolved: dict = {}
    from_data = False
    if isinstance(bounds, str):
        if bounds != "data":
            raise ValueError(f'bounds must be a pair, a dict, None or "data"; got {bounds!r}')
        from_data = True
    elif isinstance(bounds, Mapping):
        unknown = table.unknown(bounds)
        if unknown:
            raise ValueError(f"bounds name unknown column(s) {unknown}")
        bad = [k for k in bounds if kinds[table.index[k]] not in NUMERIC_KINDS]
        if bad:
            raise ValueError(
                f"bounds given for column(s) {bad}, whose kind is "
                f"{[kinds[table.index[k]] for k in bad]}: bounds are for numeric columns. "
                "Declare column_types={column: 'continuous' or 'integer'} for a numeric "
                "column held as text, or give its levels in categories instead."
            )
        resolved = {k: _pair(k, v) for k, v in bounds.items()}
    elif bounds is not None:
        if not isinstance(bounds, Sequence | np.ndarray) or len(bounds) != 2:
            raise ValueError("bounds must be a (low, high) pair, a dict, None or 'data'")
        try:
            lo = np.asarray(bounds[0], dtype=float)
            hi = np.asarray(bounds[1], dtype=float)
        except (TypeError, ValueError):
            raise ValueError("bounds must hold numbers") from None
        if lo.ndim == 0 and hi.ndim == 0:
            resolved = {n: (float(lo), float(hi)) for n in num_names}
        else:
            d = len(table.names)
            try:
                lo, hi = np.broadcast_to(lo, (d,)), np.broadcast_to(hi, (d,))
            except ValueError:
                raise ValueError(f"per-column bounds must have length n_columns={d}") from None
            resolved = {
                n: (float(lo[table.index[n]]), float(hi[table.index[n]])) for n in num_names
            }
    missing = [n for n in num_names if n not in resolved]
    if from_data and missing:
        warnings.warn(
            'bounds="data" reads the bounds off the private data without noise; the '
            "result carries no differential-privacy guarantee for them. Pass public "
            "bounds, or bounds=None for a private estimate.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        for n in missing:
            v = _numeric_column(table.column(n), n, missing=n in table.missing)
            v = v[~np.isnan(v)]
            lo, hi = (float(np.min(v)), float(np.max(v))) if v.size else (0.0, 1.0)
            resolved[n] = (lo, hi if hi > lo else lo + 1.0)
    return resolved, bool(from_data and missing)


def infer_columns(X, *, bounds=None, categories=None, column_types=None, other=None, missing=None):
    """Columns of the schema of ``X`` (see :meth:`TabularSchema.from_data`).

    Returns
    -------
    columns : tuple of ColumnSpec
    input_type : {"dataframe", "array"}
    array_dtype : str or None
        The output dtype of array input: from the columns' output dtypes
        (:func:`~skdp.utils._tabular.columns.output_dtype`) for a numeric or bool
        array, the input's dtype for another array (strings, objects).
    data_derived : bool
        Whether a ``"data"`` opt-in read any metadata off ``X``.
    """
    table = _Table(X)
    table.set_missing(missing)
    kinds, kinds_read = _kinds(table, column_types)
    declared, levels_read = _categories(table, kinds, categories)
    resolved, bounds_read = _bounds(table, kinds, bounds)
    other = dict(other or {})
    unknown = table.unknown(other)
    if unknown:
        raise ValueError(f"other names unknown column(s) {unknown}")
    cols, out_dtypes = [], []
    for n, k, dt in zip(table.names, kinds, table.dtypes, strict=True):
        ordered = bool(getattr(dt, "ordered", False)) if k == "categorical" else False
        cats = tuple(declared[n]) if n in declared else None
        out = output_dtype(k, dt, cats if cats is not None else (0, 1) if k == "binary" else None)
        if n in table.missing:
            out = dtype_with_missing(out)
        out_dtypes.append(out)
        cols.append(
            ColumnSpec(
                name=_py(n),
                kind=k,
                bounds=resolved.get(n),
                categories=cats,
                dtype=out if table.input_type == "dataframe" else None,
                ordered=ordered,
                other=other.get(n),
                missing=n in table.missing,
            )
        )
    array_dtype = table.array_dtype
    if array_dtype is not None and np.dtype(array_dtype).kind in "biuf":
        try:
            array_dtype = str(np.result_type(*(np.dtype(d) for d in out_dtypes)))
        except TypeError:
            array_dtype = "object"
    return tuple(cols), table.input_type, array_dtype, kinds_read or levels_read or bounds_read
