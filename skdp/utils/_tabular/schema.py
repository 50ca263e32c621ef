"""The public tabular schema: :class:`TabularSchema`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from skdp.utils._tabular.columns import (
    ColumnSpec,
    _check_description,
    _is_dataframe,
    _label,
    _numeric_column,
)

__all__ = ["TabularSchema"]


@dataclass(frozen=True)
class TabularSchema:
    """Public description of a table: its columns, in order.

    Build it with :meth:`from_data` (from user metadata plus the dtype families of
    ``X``) or directly from a list of :class:`ColumnSpec`. It is immutable;
    :meth:`with_bounds` returns a copy with numeric bounds filled in.

    Parameters
    ----------
    columns : sequence of ColumnSpec
    input_type : {"dataframe", "array"}
        What :meth:`TabularEncoder.inverse_transform` returns.
    array_dtype : str or None
        dtype of the output array for numpy input.
    data_derived : bool, default=False
        Whether some of its metadata were read off the private rows (a ``"data"``
        opt-in of :meth:`from_data`, or a schema file marked ``"data_derived": true``
        such as ``skdp schema --from-data`` writes). The mark travels with the schema
        (:meth:`with_bounds`, :meth:`to_dict`, :meth:`from_dict`), and an estimator
        given such a schema through ``schema=`` warns with
        :class:`~skdp.exceptions.PrivacyLeakWarning` and reports its fit non-private
        (``epsilon_spent_ = inf``, ``privacy_guarantee_ = "none"``, ``"schema"`` in
        ``nonprivate_options_``). Clear it only by building a new schema from public
        metadata.

    Attributes
    ----------
    names : list
        Column names in order.
    """

    columns: tuple[ColumnSpec, ...]
    input_type: str = "dataframe"
    array_dtype: str | None = None
    data_derived: bool = False
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
        if not isinstance(self.data_derived, bool | np.bool_):
            raise TypeError("data_derived must be a bool")
        object.__setattr__(self, "data_derived", bool(self.data_derived))
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

    @property
    def missing_names(self) -> list:
        """Names of the columns with a declared missing level (``ColumnSpec.missing``)."""
        return [c.name for c in self.columns if c.missing]

    def with_missing(self, names=None) -> TabularSchema:
        """Return a copy in which the columns ``names`` (default: every column) declare a
        missing level (see :class:`ColumnSpec`, ``missing``)."""
        names = self.names if names is None else list(names)
        unknown = [k for k in names if k not in self._index]
        if unknown:
            raise ValueError(f"missing names unknown column(s) {unknown}")
        chosen = set(names)
        cols = tuple(
            replace(c, missing=True) if c.name in chosen and not c.missing else c
            for c in self.columns
        )
        return replace(self, columns=cols)

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
        if self.data_derived:
            out["data_derived"] = True
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> TabularSchema:
        _check_description(d, "a schema", ())
        if not isinstance(d.get("columns"), list | tuple):
            raise ValueError("a schema needs a 'columns' list")
        return cls(
            columns=tuple(ColumnSpec.from_dict(c) for c in d["columns"]),
            input_type=d.get("input_type", "dataframe"),
            array_dtype=d.get("array_dtype"),
            # any mark but false/null counts (a hand-edited "yes" is still a mark)
            data_derived=bool(d.get("data_derived", False)),
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
        missing=None,
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
            input). ``None`` leaves them missing (see :meth:`missing_bounds`; the
            estimators fill them with ``skdp.mechanisms.resolve_schema_bounds``); a
            dict may also omit columns, which are then missing. ``"data"`` reads the
            missing ones off ``X`` (warns).
        categories : None, "data", dict {column: list}, or list of lists
            Declared levels of categorical columns (a list of lists is in the order
            of the categorical columns). Every categorical column needs an entry,
            including those with a pandas ``category`` dtype (whose categories may
            have been read off the rows, so they are never trusted as public).
            ``"data"`` reads the missing ones off ``X`` (warns). Binary columns may
            declare their two levels here; a bool column's levels are
            ``(False, True)``, fixed by its dtype.
        column_types : None, "data", dict {column: kind}, or list of kinds
            The declared kinds (``"continuous"``, ``"integer"``, ``"binary"``,
            ``"categorical"``). A column without one gets its kind from its dtype's
            family: bool -> ``"binary"``, any number -> ``"continuous"``, anything
            else -> ``"categorical"``. An integer dtype does *not* make a column
            ``"integer"``: :func:`pandas.read_csv` makes a column int64 only when every
            value is whole, so one record would change the kind, the bins and the
            output dtype; declare ``"integer"`` instead. ``"data"`` (for all columns, or
            as one column's value) takes the kind from the dtype as
            :func:`~skdp.utils.schema.kind_from_dtype` does (warns; not
            private).
            The output dtype follows the kind: ``"integer"`` -> ``int64`` (or the
            input's own integer dtype), ``"continuous"`` -> ``float64`` (or the input's
            own float dtype), whatever pandas inferred.
        other : dict {column: level}, optional
            A declared level that unknown values of that column map to.
        missing : None, "category" or list of columns, optional
            Columns with a declared missing level (``"category"``: every column; see
            :class:`ColumnSpec`, ``missing``). A declaration: nothing is read off the
            data to decide it. The ``"data"`` opt-ins skip missing cells of those columns.

        Raises
        ------
        ValueError
            If a categorical column has no declared categories, metadata name
            unknown columns, or bounds are malformed.
        """
        from skdp.utils._tabular.inference import infer_columns

        columns, input_type, array_dtype, data_derived = infer_columns(
            X,
            bounds=bounds,
            categories=categories,
            column_types=column_types,
            other=other,
            missing=missing,
        )
        return cls(
            columns=columns,
            input_type=input_type,
            array_dtype=array_dtype,
            data_derived=data_derived,
        )

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
        return np.column_stack(
            [
                _numeric_column(c, nm, missing=self[nm].missing)
                for c, nm in zip(cols, names, strict=True)
            ]
        )

    def outside_bounds(self, X) -> np.ndarray:
        """Boolean mask of the rows of ``X`` with a numeric value outside its declared
        bounds (a density is 0 there: ``score_samples`` returns ``-inf``). A missing
        value (in a column with a declared missing level) is not outside."""
        raw = self.numeric_matrix(X)
        lo = np.array([self[c].bounds[0] for c in self.numeric_names], dtype=float)
        hi = np.array([self[c].bounds[1] for c in self.numeric_names], dtype=float)
        return np.any((raw < lo) | (raw > hi), axis=1)
