"""The shared tabular schema and encoders used by every synthesizer.

A :class:`TabularSchema` is the *public* description of a table: its columns in
order, each a :class:`ColumnSpec` that is numeric (``"continuous"`` or ``"integer"``,
with declared ``bounds=(lo, hi)``), ``"binary"`` (declared levels ``{0, 1}`` or
``{False, True}``) or ``"categorical"`` (with its declared ``categories``). It also
remembers the input's dtypes so that synthetic output round-trips to a DataFrame
with the same columns, order and dtypes.

:class:`TabularEncoder` maps a table to a float matrix and back, per record and
using only the schema (no statistic of the data), so it costs no privacy:

* numeric columns are clipped to their declared bounds (or, with ``clip=False``,
  out-of-bounds values raise) and scaled affinely to ``numeric_range``;
* categorical columns are one-hot encoded (``numeric_range`` endpoints as the off/on
  values) or ordinal-encoded (integer codes ``0..K-1``);
* binary columns become one column holding the ``numeric_range`` endpoints.

The inverse map is post-processing: numeric values are unscaled and clipped to the
bounds, integers rounded, categoricals decoded by argmax (one-hot) or rounding
(ordinal), binaries thresholded at the midpoint.

Where the metadata come from (:doc:`privacy_guarantees`, "Metadata"):

* column kinds come from ``column_types`` or from dtypes only (bool -> binary with the
  levels ``{False, True}`` that the dtype itself fixes; pandas ``Categorical``,
  object/string -> categorical; integer -> integer; float -> continuous), never from
  values;
* bounds are declared (``{column: (lo, hi)}``, a ``(lo, hi)`` pair for every numeric
  column, or per-feature arrays); ``bounds="data"`` reads them off the data with a
  :class:`~skdp.exceptions.PrivacyLeakWarning`; ``bounds=None`` leaves them missing so
  that the *estimator* can fill them with a private estimate (this module is layer 0
  and cannot import :mod:`skdp.mechanisms`), see :func:`fill_missing_bounds`;
* categories come only from ``categories=`` (or a complete schema); missing ones raise
  ``ValueError``, unless the user opts in with ``categories="data"`` (warns). A pandas
  ``CategoricalDtype`` does *not* count as declared: ``df.astype("category")`` builds
  its categories from the private rows, so one extra row with a rare level would change
  the schema, the encoding width and the dtype of every synthetic sample (issue 15
  item 4). Only the dtype's ``ordered`` flag is kept.

Error messages name the column, never a value.

Examples
--------
>>> import pandas as pd
>>> from skdp.utils.schema import TabularSchema, TabularEncoder
>>> df = pd.DataFrame({"age": [30, 52], "sex": ["F", "M"], "bmi": [21.5, 30.1]})
>>> schema = TabularSchema.from_data(
...     df, bounds={"age": (18, 90), "bmi": (15.0, 50.0)}, categories={"sex": ["F", "M"]}
... )
>>> [(c.name, c.kind) for c in schema]
[('age', 'integer'), ('sex', 'categorical'), ('bmi', 'continuous')]
>>> enc = TabularEncoder(schema)
>>> Z = enc.transform(df)
>>> Z.shape
(2, 4)
>>> back = enc.inverse_transform(Z)
>>> list(back.dtypes) == list(df.dtypes), back["sex"].tolist(), back["age"].tolist()
(True, ['F', 'M'], [30, 52])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from skdp.exceptions import PrivacyLeakWarning

__all__ = [
    "COLUMN_KINDS",
    "ColumnSpec",
    "TabularEncoder",
    "TabularSchema",
    "assemble",
    "fill_missing_bounds",
]

COLUMN_KINDS = ("continuous", "integer", "binary", "categorical")
NUMERIC_KINDS = ("continuous", "integer")


def _label(name) -> str:
    return repr(name)


def _py(value):
    """Turn numpy scalars into Python scalars (JSON-able)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class ColumnSpec:
    """Public description of one column.

    Parameters
    ----------
    name : hashable
        Column name (an int position for numpy input).
    kind : {"continuous", "integer", "binary", "categorical"}
    bounds : tuple (lo, hi) or None
        Declared bounds of a numeric column (``None`` = not yet resolved).
        Binary columns have ``(0, 1)``.
    categories : tuple or None
        Declared levels of a categorical or binary column, in code order.
    dtype : str or None
        The input dtype (for the round trip back to a DataFrame).
    ordered : bool
        Whether a pandas categorical dtype was ordered.
    other : object or None
        A declared level that unknown values map to. Without it, unknown values raise.
    """

    name: Any
    kind: str
    bounds: tuple[float, float] | None = None
    categories: tuple | None = None
    dtype: str | None = None
    ordered: bool = False
    other: Any = None

    def __post_init__(self):
        if self.kind not in COLUMN_KINDS:
            raise ValueError(
                f"column {_label(self.name)}: kind must be one of {COLUMN_KINDS}, got {self.kind!r}"
            )
        if self.bounds is not None:
            lo, hi = (float(b) for b in self.bounds)
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
                raise ValueError(
                    f"column {_label(self.name)}: bounds must be finite with low < high"
                )
            if max(abs(lo), abs(hi)) > 1e150:  # = validation.MAX_ABS_BOUND (no import cycle)
                raise ValueError(
                    f"column {_label(self.name)}: bounds must lie within +-1e+150 (squares of "
                    "larger bounds overflow); rescale the column"
                )
            if self.kind == "integer" and math.ceil(lo) > math.floor(hi):
                raise ValueError(
                    f"column {_label(self.name)}: an integer column's bounds must contain an "
                    "integer"
                )
            object.__setattr__(self, "bounds", (lo, hi))
            self._widen_dtype(lo, hi)
        if isinstance(self.categories, str | bytes):
            raise TypeError(
                f"column {_label(self.name)}: categories must be a list of levels, not a string"
            )
        if self.kind in ("categorical", "binary") and self.categories is not None:
            cats = tuple(_py(c) for c in self.categories)
            if len(cats) == 0:
                raise ValueError(f"column {_label(self.name)}: categories must not be empty")
            if len(set(cats)) != len(cats):
                raise ValueError(f"column {_label(self.name)}: categories must be unique")
            if self.kind == "binary" and len(cats) != 2:
                raise ValueError(f"column {_label(self.name)}: a binary column has two levels")
            if self.other is not None and _py(self.other) not in cats:
                raise ValueError(
                    f"column {_label(self.name)}: the 'other' level must be a declared category"
                )
            object.__setattr__(self, "categories", cats)
        if self.kind == "binary":
            if self.categories is None:
                object.__setattr__(self, "categories", (0, 1))
            object.__setattr__(self, "bounds", (0.0, 1.0))
        if self.kind in NUMERIC_KINDS and self.categories is not None:
            raise ValueError(f"column {_label(self.name)}: a numeric column has no categories")

    def _widen_dtype(self, lo, hi):
        """An integer ``dtype`` that cannot hold the declared bounds would wrap synthetic
        values around: widen it (int64, else float64) and warn, once, here."""
        if self.kind not in NUMERIC_KINDS or self.dtype is None:
            return
        try:
            dt = np.dtype(self.dtype)
        except TypeError:
            return
        if dt.kind == "f":
            if max(abs(lo), abs(hi)) <= float(np.finfo(dt).max):
                return
            wide = "float64"
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            if info.min <= lo and hi <= info.max:
                return
            wide = "int64" if -(2.0**63) <= lo and hi < 2.0**63 else "float64"
        else:
            return
        warnings.warn(
            f"column {_label(self.name)}: dtype {dt.name} cannot hold the declared bounds; "
            f"synthetic values are returned as {wide}",
            UserWarning,
            stacklevel=4,
        )
        object.__setattr__(self, "dtype", wide)

    @property
    def is_numeric(self) -> bool:
        return self.kind in NUMERIC_KINDS

    @property
    def n_levels(self) -> int | None:
        return None if self.categories is None else len(self.categories)

    def to_dict(self) -> dict:
        out = {"name": _py(self.name), "kind": self.kind}
        if self.bounds is not None and self.kind != "binary":
            out["bounds"] = [self.bounds[0], self.bounds[1]]
        if self.categories is not None:
            out["categories"] = list(self.categories)
        if self.dtype is not None:
            out["dtype"] = self.dtype
        if self.ordered:
            out["ordered"] = True
        if self.other is not None:
            out["other"] = _py(self.other)
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> ColumnSpec:
        if not isinstance(d, Mapping):
            raise TypeError(f"a schema column must be a mapping, got {type(d).__name__}")
        missing = [k for k in ("name", "kind") if k not in d]
        if missing:
            raise ValueError(f"a schema column needs the key(s) {missing}")
        for key in ("bounds", "categories"):
            v = d.get(key)
            if v is not None and (isinstance(v, str | bytes) or not hasattr(v, "__iter__")):
                raise TypeError(
                    f"column {_label(d['name'])}: {key} must be a list, got {type(v).__name__}"
                )
        return cls(
            name=d["name"],
            kind=d["kind"],
            bounds=tuple(d["bounds"]) if d.get("bounds") is not None else None,
            categories=tuple(d["categories"]) if d.get("categories") is not None else None,
            dtype=d.get("dtype"),
            ordered=bool(d.get("ordered", False)),
            other=d.get("other"),
        )


def _is_dataframe(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _kind_from_dtype(dtype) -> str:
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    kind = getattr(dtype, "kind", "O")
    if kind == "b":
        return "binary"
    if kind in "iu":
        return "integer"
    if kind == "f":
        return "continuous"
    return "categorical"


@dataclass(frozen=True)
class TabularSchema:
    """Public description of a table: its columns, in order.

    Build it with :meth:`from_data` (from user metadata plus the dtypes of ``X``) or
    directly from a list of :class:`ColumnSpec`. It is immutable; :meth:`with_bounds`
    returns a copy with numeric bounds filled in.

    Parameters
    ----------
    columns : sequence of ColumnSpec
    input_type : {"dataframe", "array"}
        What :meth:`TabularEncoder.inverse_transform` returns.
    array_dtype : str or None
        dtype of numpy input (for the round trip).

    Attributes
    ----------
    names : list
        Column names in order.
    """

    columns: tuple[ColumnSpec, ...]
    input_type: str = "dataframe"
    array_dtype: str | None = None
    _index: dict = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        cols = tuple(self.columns)
        if not cols:
            raise ValueError("a schema needs at least one column")
        for c in cols:
            if not isinstance(c, ColumnSpec):
                raise TypeError("columns must be ColumnSpec objects")
        names = [c.name for c in cols]
        if len(set(names)) != len(names):
            raise ValueError("column names must be unique")
        if self.input_type not in ("dataframe", "array"):
            raise ValueError("input_type must be 'dataframe' or 'array'")
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})

    # ------------------------------------------------------------------ access
    def __len__(self):
        return len(self.columns)

    def __iter__(self):
        return iter(self.columns)

    def __getitem__(self, key) -> ColumnSpec:
        if key in self._index:
            return self.columns[self._index[key]]
        raise KeyError(key)

    @property
    def names(self) -> list:
        return [c.name for c in self.columns]

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    @property
    def numeric_names(self) -> list:
        return [c.name for c in self.columns if c.is_numeric]

    @property
    def categorical_names(self) -> list:
        return [c.name for c in self.columns if c.kind == "categorical"]

    def missing_bounds(self) -> list:
        """Names of numeric columns whose bounds are still missing."""
        return [c.name for c in self.columns if c.is_numeric and c.bounds is None]

    def with_bounds(self, bounds: Mapping) -> TabularSchema:
        """Return a copy with ``bounds[name] = (lo, hi)`` set on numeric columns."""
        unknown = [k for k in bounds if k not in self._index]
        if unknown:
            raise ValueError(f"bounds name unknown column(s) {unknown}")
        cols = []
        for c in self.columns:
            if c.name in bounds:
                if not c.is_numeric:
                    raise ValueError(f"column {_label(c.name)} is not numeric; it has no bounds")
                lo, hi = bounds[c.name]
                cols.append(replace(c, bounds=(float(lo), float(hi))))
            else:
                cols.append(c)
        return replace(self, columns=tuple(cols))

    def check_complete(self) -> TabularSchema:
        """Raise ``ValueError`` if a numeric column lacks bounds or a categorical column
        lacks categories."""
        nb = self.missing_bounds()
        if nb:
            raise ValueError(f"no bounds for numeric column(s) {nb}")
        nc = [c.name for c in self.columns if c.kind == "categorical" and c.categories is None]
        if nc:
            raise ValueError(f"no categories for categorical column(s) {nc}")
        return self

    # ------------------------------------------------------------ (de)serialise
    def to_dict(self) -> dict:
        """A JSON-able description (``json.dumps(schema.to_dict())`` works when the
        names and categories are JSON scalars)."""
        out = {"columns": [c.to_dict() for c in self.columns], "input_type": self.input_type}
        if self.array_dtype is not None:
            out["array_dtype"] = self.array_dtype
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> TabularSchema:
        if not isinstance(d, Mapping):
            raise TypeError(f"a schema must be a mapping, got {type(d).__name__}")
        if not isinstance(d.get("columns"), list | tuple):
            raise ValueError("a schema needs a 'columns' list")
        return cls(
            columns=tuple(ColumnSpec.from_dict(c) for c in d["columns"]),
            input_type=d.get("input_type", "dataframe"),
            array_dtype=d.get("array_dtype"),
        )

    # ------------------------------------------------------------ construction
    @classmethod
    def from_data(
        cls,
        X,
        *,
        bounds=None,
        categories=None,
        column_types=None,
        other=None,
    ) -> TabularSchema:
        """Build a schema from user metadata and the *dtypes* of ``X``.

        Only dtypes and the shape of ``X`` are read, except with the ``"data"``
        opt-ins, which read values and emit :class:`~skdp.exceptions.PrivacyLeakWarning`.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_columns)
            Numpy input gives columns named ``0..d-1``.
        bounds : None, "data", (lo, hi), or dict {column: (lo, hi)}
            Declared bounds of the numeric columns. A pair applies to every numeric
            column (its entries may be arrays of length ``n_columns`` for numpy
            input). ``None`` leaves them missing (see :meth:`missing_bounds` and
            :func:`fill_missing_bounds`); a dict may also omit columns, which are
            then missing. ``"data"`` reads the missing ones off ``X`` (warns).
        categories : None, "data", dict {column: list}, or list of lists
            Declared levels of categorical columns (a list of lists is in the order
            of the categorical columns). Every categorical column needs an entry,
            including those with a pandas ``category`` dtype (whose categories may
            have been read off the rows, so they are never trusted as public).
            ``"data"`` reads the missing ones off ``X`` (warns). Binary columns may
            declare their two levels here; a bool column's levels are
            ``(False, True)``, fixed by its dtype.
        column_types : None, dict {column: kind}, or list of kinds
            Overrides the dtype-based kinds.
        other : dict {column: level}, optional
            A declared level that unknown values of that column map to.

        Raises
        ------
        ValueError
            If a categorical column has no declared categories, metadata name
            unknown columns, or bounds are malformed.
        """
        import pandas as pd

        if _is_dataframe(X):
            names = list(X.columns)
            dtypes = list(X.dtypes)
            input_type, array_dtype = "dataframe", None
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-dimensional, got {X.ndim} dimension(s)")
            names = list(range(X.shape[1]))
            dtypes = [X.dtype] * X.shape[1]
            input_type, array_dtype = "array", str(X.dtype)
        if not names:
            raise ValueError("X has no columns")
        index = {n: i for i, n in enumerate(names)}

        # kinds
        kinds = [_kind_from_dtype(dt) for dt in dtypes]
        if column_types is not None:
            if isinstance(column_types, Mapping):
                unknown = [k for k in column_types if k not in index]
                if unknown:
                    raise ValueError(f"column_types names unknown column(s) {unknown}")
                for k, v in column_types.items():
                    kinds[index[k]] = v
            else:
                column_types = list(column_types)
                if len(column_types) != len(names):
                    raise ValueError(
                        f"column_types has {len(column_types)} entries for {len(names)} columns"
                    )
                kinds = column_types
        for n, k in zip(names, kinds, strict=True):
            if k not in COLUMN_KINDS:
                raise ValueError(f"column {_label(n)}: unknown column type {k!r}")

        # categories
        cat_names = [n for n, k in zip(names, kinds, strict=True) if k == "categorical"]
        declared: dict = {}
        for n, dt in zip(names, dtypes, strict=True):
            # A bool dtype fixes its levels. A pandas CategoricalDtype's categories are
            # NOT taken: astype("category") reads them off the (private) rows.
            if (
                kinds[index[n]] == "binary"
                and not isinstance(dt, pd.CategoricalDtype)
                and getattr(dt, "kind", None) == "b"
            ):
                declared[n] = [False, True]
        data_categories = False
        if isinstance(categories, str):
            if categories != "data":
                raise ValueError(
                    f'categories must be a dict, a list of lists or "data"; got {categories!r}'
                )
            data_categories = True
        elif isinstance(categories, Mapping):
            unknown = [k for k in categories if k not in index]
            if unknown:
                raise ValueError(f"categories name unknown column(s) {unknown}")
            bad = [k for k in categories if kinds[index[k]] not in ("categorical", "binary")]
            if bad:
                raise ValueError(f"categories given for non-categorical column(s) {bad}")
            declared.update({k: list(v) for k, v in categories.items()})
        elif categories is not None:
            categories = list(categories)
            if len(categories) != len(cat_names):
                raise ValueError(
                    f"categories has {len(categories)} lists for {len(cat_names)} "
                    "categorical column(s)"
                )
            declared.update({n: list(v) for n, v in zip(cat_names, categories, strict=True)})
        missing_cats = [n for n in cat_names if n not in declared]
        if missing_cats:
            if not data_categories:
                in_dtype = [
                    n for n in missing_cats if isinstance(dtypes[index[n]], pd.CategoricalDtype)
                ]
                note = (
                    f" A pandas 'category' dtype does not declare them (column(s) {in_dtype}):"
                    " astype('category') takes its categories from the rows."
                    if in_dtype
                    else ""
                )
                raise ValueError(
                    f"no declared categories for categorical column(s) {missing_cats}. "
                    "Category sets are public metadata: pass categories={column: [...]} "
                    '(or categories="data" to read them off the data, which leaks).' + note
                )
            warnings.warn(
                'categories="data" reads the category sets off the private data; a rare '
                "category reveals that some record has it. Declare the categories instead.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            for n in missing_cats:
                col = X[n] if input_type == "dataframe" else X[:, index[n]]
                vals = pd.Series(np.asarray(col, dtype=object))
                if vals.isna().any():
                    raise ValueError(f"column {_label(n)} contains missing values")
                declared[n] = sorted(pd.unique(vals).tolist(), key=lambda v: (str(type(v)), v))

        # bounds
        num_names = [n for n, k in zip(names, kinds, strict=True) if k in NUMERIC_KINDS]
        resolved: dict = {}
        data_bounds = False
        if isinstance(bounds, str):
            if bounds != "data":
                raise ValueError(f'bounds must be a pair, a dict, None or "data"; got {bounds!r}')
            data_bounds = True
        elif isinstance(bounds, Mapping):
            unknown = [k for k in bounds if k not in index]
            if unknown:
                raise ValueError(f"bounds name unknown column(s) {unknown}")
            bad = [k for k in bounds if kinds[index[k]] not in NUMERIC_KINDS]
            if bad:
                raise ValueError(f"bounds given for non-numeric column(s) {bad}")
            for k, v in bounds.items():
                try:
                    lo, hi = v
                    resolved[k] = (float(lo), float(hi))
                except (TypeError, ValueError):
                    raise ValueError(
                        f"bounds for column {_label(k)} must be a (low, high) pair"
                    ) from None
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
                try:
                    lo = np.broadcast_to(lo, (len(names),))
                    hi = np.broadcast_to(hi, (len(names),))
                except ValueError:
                    raise ValueError(
                        f"per-column bounds must have length n_columns={len(names)}"
                    ) from None
                resolved = {n: (float(lo[index[n]]), float(hi[index[n]])) for n in num_names}
        missing_b = [n for n in num_names if n not in resolved]
        if data_bounds and missing_b:
            warnings.warn(
                'bounds="data" reads the bounds off the private data without noise; the '
                "result carries no differential-privacy guarantee for them. Pass public "
                "bounds, or bounds=None for a private estimate.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            for n in missing_b:
                col = X[n] if input_type == "dataframe" else X[:, index[n]]
                v = _numeric_column(col, n)
                lo, hi = float(np.min(v)), float(np.max(v))
                resolved[n] = (lo, hi if hi > lo else lo + 1.0)

        other = dict(other or {})
        unknown = [k for k in other if k not in index]
        if unknown:
            raise ValueError(f"other names unknown column(s) {unknown}")

        cols = []
        for n, k, dt in zip(names, kinds, dtypes, strict=True):
            ordered = bool(getattr(dt, "ordered", False)) if k == "categorical" else False
            cols.append(
                ColumnSpec(
                    name=_py(n),
                    kind=k,
                    bounds=resolved.get(n),
                    categories=tuple(declared[n]) if n in declared else None,
                    dtype=str(dt) if input_type == "dataframe" else None,
                    ordered=ordered,
                    other=other.get(n),
                )
            )
        return cls(columns=tuple(cols), input_type=input_type, array_dtype=array_dtype)

    # ------------------------------------------------------------------ data
    def columns_of(self, X, *, names=None) -> list:
        """Return the raw columns of ``X`` (DataFrame or array), in schema order.

        Checks that ``X`` has exactly the schema's columns (a DataFrame may list them in
        another order) and raises ``ValueError`` otherwise.
        """
        names = self.names if names is None else list(names)
        if _is_dataframe(X):
            have = list(X.columns)
            if set(have) != set(self.names) or len(have) != len(self.names):
                missing = [n for n in self.names if n not in set(have)]
                extra = [n for n in have if n not in self._index]
                raise ValueError(
                    f"X does not have the schema's columns (missing {missing}, extra {extra})"
                )
            return [X[n].to_numpy() for n in names]
        X = np.asarray(X)
        if X.ndim == 1:
            raise ValueError("X must be 2-dimensional; reshape a single feature with X[:, None]")
        if X.ndim != 2 or X.shape[1] != self.n_columns:
            raise ValueError(
                f"X has {X.shape[1] if X.ndim == 2 else X.shape} columns; the schema has "
                f"{self.n_columns}"
            )
        if self.input_type == "dataframe" and not all(
            isinstance(n, int | np.integer) for n in self.names
        ):
            # positional input for a named schema: accepted, in schema order
            return [X[:, i] for i in (self._index[n] for n in names)]
        return [X[:, self._index[n]] for n in names]

    def numeric_matrix(self, X, names=None) -> np.ndarray:
        """Float matrix of the numeric columns ``names`` (default: all numeric columns) of
        ``X``, unclipped; NaN/inf raise ``ValueError`` naming the column. For estimators
        that resolve missing bounds privately."""
        names = self.numeric_names if names is None else list(names)
        cols = self.columns_of(X, names=names)
        n = len(cols[0]) if cols else (len(X) if hasattr(X, "__len__") else 0)
        if not names:
            return np.empty((n, 0))
        return np.column_stack([_numeric_column(c, nm) for c, nm in zip(cols, names, strict=True)])


def _numeric_column(col, name) -> np.ndarray:
    if np.asarray(col).dtype.kind == "c":
        # np.asarray(..., dtype=float) would silently drop the imaginary part
        raise ValueError(f"column {_label(name)} is declared numeric but holds complex numbers")
    try:
        v = np.asarray(col, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"column {_label(name)} is declared numeric but is not numeric") from None
    if not np.all(np.isfinite(v)):
        raise ValueError(f"column {_label(name)} contains NaN or infinity")
    return v


def fill_missing_bounds(
    schema: TabularSchema,
    X,
    resolve: Callable[[np.ndarray, list], tuple],
) -> TabularSchema:
    """Fill the schema's missing numeric bounds with ``resolve``.

    The hook through which an estimator (layer 4) plugs in a private bound estimate
    from :mod:`skdp.mechanisms` without this layer-0 module importing it::

        used = []
        def resolve(V, names):
            lo, hi, eps_used = resolve_bounds(None, V, epsilon=eps, rng=rng, columns=names)
            used.append(eps_used)
            return lo, hi
        schema = fill_missing_bounds(schema, X, resolve)

    Parameters
    ----------
    schema : TabularSchema
    X : DataFrame or array
        The private data (only the missing columns are passed to ``resolve``).
    resolve : callable ``(values, names) -> (lo, hi)``
        ``values`` is the float matrix (n_samples, n_missing); ``lo``, ``hi`` arrays
        of length n_missing. Called once, and only if some bounds are missing.

    Returns
    -------
    TabularSchema
    """
    missing = schema.missing_bounds()
    if not missing:
        return schema
    V = schema.numeric_matrix(X, missing)
    lo, hi = resolve(V, missing)
    lo = np.broadcast_to(np.asarray(lo, dtype=float), (len(missing),))
    hi = np.broadcast_to(np.asarray(hi, dtype=float), (len(missing),))
    return schema.with_bounds(
        {n: (float(a), float(b)) for n, a, b in zip(missing, lo, hi, strict=True)}
    )


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
        :meth:`transform`)."""
        cols = self.schema.columns_of(X)
        out = np.empty((len(cols[0]), self.schema.n_columns), dtype=float)
        for j, (c, col) in enumerate(zip(self.schema, cols, strict=True)):
            if c.is_numeric:
                out[:, j] = self._numeric(c, col)
            else:
                out[:, j] = self._level_codes(c, col)
        return out

    def _numeric(self, c: ColumnSpec, col) -> np.ndarray:
        v = _numeric_column(col, c.name)
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
        if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
            raise ValueError(f"column {_label(c.name)} contains missing values or infinity")
        try:
            inverse, uniques = pd.factorize(values, use_na_sentinel=True)
        except TypeError:  # unhashable entries
            raise ValueError(f"column {_label(c.name)} contains unhashable values") from None
        if (inverse < 0).any():
            raise ValueError(f"column {_label(c.name)} contains missing values")
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
        return ucodes.astype(np.int64)[inverse]

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
        integers rounded; levels as :class:`pandas.Categorical`)."""
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

        codes = np.clip(np.rint(codes), 0, len(c.categories) - 1).astype(np.int64)
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
