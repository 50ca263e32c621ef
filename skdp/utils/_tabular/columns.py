"""Columns of the public tabular schema: kinds, :class:`ColumnSpec`, dtype helpers."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "COLUMN_KINDS",
    "NUMERIC_KINDS",
    "ColumnSpec",
    "dtype_family",
    "kind_from_dtype",
    "output_dtype",
    "structural_kind",
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


def _check_description(d, what: str, keys) -> None:
    """Raise unless ``d`` (a ``to_dict`` description of ``what``) is a mapping with ``keys``."""
    if not isinstance(d, Mapping):
        raise TypeError(f"{what} must be a mapping, got {type(d).__name__}")
    missing = [k for k in keys if k not in d]
    if missing:
        raise ValueError(f"{what} needs the key(s) {missing}")


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
        The dtype of the column in the output DataFrame. A numeric column's dtype
        follows its kind: an ``"integer"`` column given a non-integer dtype gets
        ``"int64"``, a ``"continuous"`` column given a non-float dtype ``"float64"``
        (``None``: the same defaults at output time).
    ordered : bool
        Whether a pandas categorical dtype was ordered.
    other : object or None
        A declared level that unknown values map to. Without it, unknown values raise.
    missing : bool, default=False
        Whether the column has a declared *missing* level: a missing value (NaN,
        ``None``) is then one more level of the column (for a numeric column, one more
        bin beside its value bins) instead of an error, and synthetic data write it
        back as NaN (``None`` in object columns). It is a declaration, never read off
        the data; the output dtype is one that holds a missing value (an integer
        column comes back as ``float64``, a bool one as ``object``).
    """

    name: Any
    kind: str
    bounds: tuple[float, float] | None = None
    categories: tuple | None = None
    dtype: str | None = None
    ordered: bool = False
    other: Any = None
    missing: bool = False

    def __post_init__(self):
        try:
            hash(self.name)
        except TypeError:
            raise TypeError(
                "a schema column's name must be a string or an integer, got "
                f"{type(self.name).__name__}"
            ) from None
        if not isinstance(self.kind, str) or self.kind not in COLUMN_KINDS:
            raise ValueError(
                f"column {_label(self.name)}: kind must be one of {COLUMN_KINDS}, got {self.kind!r}"
            )
        if self.bounds is not None:
            try:
                lo, hi = (float(b) for b in self.bounds)
            except OverflowError:  # an int beyond float range (e.g. a long JSON integer)
                lo = hi = math.inf
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
                raise ValueError(
                    f"column {_label(self.name)}: bounds must be finite with low < high"
                )
            if max(abs(lo), abs(hi)) > 1e150:  # = validation.MAX_ABS_BOUND (no import cycle)
                raise ValueError(
                    f"column {_label(self.name)}: bounds must lie within +-1e+150 (squares of "
                    "larger bounds overflow); rescale the column"
                )
            if not hi - lo >= 1e-150:  # = validation.MIN_BOUND_WIDTH (no import cycle)
                raise ValueError(
                    f"column {_label(self.name)}: the width of the bounds must be at least "
                    "1e-150 (rescaled values of a narrower interval overflow); rescale the "
                    "column"
                )
            if self.kind == "integer" and math.ceil(lo) > math.floor(hi):
                raise ValueError(
                    f"column {_label(self.name)}: an integer column's bounds must contain an "
                    "integer"
                )
            object.__setattr__(self, "bounds", (lo, hi))
        if not isinstance(self.missing, bool | np.bool_):
            raise TypeError(
                f"column {_label(self.name)}: missing must be true or false, got "
                f"{type(self.missing).__name__}"
            )
        object.__setattr__(self, "missing", bool(self.missing))
        self._numeric_dtype_follows_kind()
        if self.bounds is not None:
            self._widen_dtype(*self.bounds)
        if self.missing and self.dtype is not None:
            object.__setattr__(self, "dtype", dtype_with_missing(self.dtype))
        if isinstance(self.categories, str | bytes):
            raise TypeError(
                f"column {_label(self.name)}: categories must be a list of levels, not a string"
            )
        if self.kind in ("categorical", "binary") and self.categories is not None:
            cats = tuple(_py(c) for c in self.categories)
            try:
                hash(cats)
            except TypeError:
                raise TypeError(
                    f"column {_label(self.name)}: categories must be scalars (strings, "
                    "numbers), not lists or mappings"
                ) from None
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

    def _numeric_dtype_follows_kind(self):
        """A numeric column's output dtype is in its kind's family: the
        declared kind decides, never a dtype pandas inferred from the values."""
        if self.kind not in NUMERIC_KINDS or self.dtype is None:
            return
        fam = dtype_family(self.dtype)
        if fam is None:  # not a dtype pandas knows: left to the output cast
            return
        want = "integer" if self.kind == "integer" else "float"
        if fam != want:
            object.__setattr__(self, "dtype", "int64" if want == "integer" else "float64")

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
        if self.missing:
            out["missing"] = True
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> ColumnSpec:
        _check_description(d, "a schema column", ("name", "kind"))
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
            missing=False if d.get("missing") is None else d["missing"],
        )


def _is_dataframe(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def dtype_family(dtype) -> str | None:
    """The family of a dtype (or dtype string): ``"category"``, ``"string"``, ``"bool"``,
    ``"integer"``, ``"float"``, ``"datetime"`` or ``"object"`` (``None``: not a dtype).

    The family, not the width, is what a reader such as :func:`pandas.read_csv` infers
    from the values; within the numeric families the integer/float split depends on
    whether every value is whole.
    """
    import pandas as pd
    from pandas.api.types import pandas_dtype

    if isinstance(dtype, str):
        try:
            dtype = pandas_dtype(dtype)
        except TypeError:
            return None
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if isinstance(dtype, pd.StringDtype):
        return "string"
    kind = getattr(dtype, "kind", "O")
    return {"b": "bool", "i": "integer", "u": "integer", "f": "float", "M": "datetime"}.get(
        kind, "datetime" if kind == "m" else "object"
    )


def structural_kind(dtype) -> str:
    """The default kind of a column with no declared kind: from the dtype's *family*.

    ``bool`` -> ``"binary"``; any integer or float dtype -> ``"continuous"``; pandas
    ``Categorical``/object/string -> ``"categorical"``. The family is structural: a
    value outside it (a word in a numeric column, a third level in a bool column) is
    outside the table's domain and is refused. Whether a numeric column is integer or
    float is *not* used: :func:`pandas.read_csv` makes a column ``int64`` only when every
    value is whole, so one record would change the kind. Declare
    ``"integer"`` in ``column_types``, or opt in with ``column_types="data"``
    (:func:`kind_from_dtype`, not private).
    """
    kind = kind_from_dtype(dtype)
    return "continuous" if kind in NUMERIC_KINDS else kind


def kind_from_dtype(dtype) -> str:
    """The column kind a dtype implies (never read from values directly).

    ``bool`` -> ``"binary"``, integer -> ``"integer"``, float -> ``"continuous"``,
    pandas ``Categorical``/object/string -> ``"categorical"``.

    The integer/float split is what pandas inferred from the values, so a schema takes
    it only with the non-private opt-in ``column_types="data"``; the default kinds are
    :func:`structural_kind`.
    """
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


def dtype_with_missing(dtype) -> str:
    """An output dtype that holds a missing value: integer -> ``float64`` (NaN), bool ->
    ``object`` (``None``); float, ``category``, string and object dtypes already do."""
    fam = dtype_family(dtype)
    if fam == "integer":
        return "float64"
    if fam == "bool":
        return "object"
    return str(dtype)


def _levels_dtype(categories) -> str:
    """The dtype that holds the declared levels: bool, int64, float64 or object."""
    if not categories:
        return "object"
    if all(isinstance(v, bool | np.bool_) for v in categories):
        return "bool"
    if any(isinstance(v, bool | np.bool_) for v in categories):
        return "object"
    if all(isinstance(v, int | np.integer) for v in categories):
        return "int64"
    if all(isinstance(v, int | float | np.integer | np.floating) for v in categories):
        return "float64"
    return "object"


def output_dtype(kind, dtype, categories=None) -> str:
    """The output dtype of a column: from its declared kind and levels and the
    *family* of its input dtype, never from the integer/float split pandas inferred.

    * ``"integer"``: the input's own integer dtype (its width is the user's choice),
      else ``"int64"``; ``"continuous"``: the input's float dtype, else ``"float64"``.
    * ``"binary"``/``"categorical"``: a pandas ``category``, string or datetime input
      keeps its dtype (structural; a ``category`` dtype's levels are replaced by the
      declared ones); a bool input with bool levels stays bool; otherwise the dtype
      that holds the declared levels (bool, int64, float64, else object).
    """
    fam = dtype_family(dtype) if dtype is not None else None
    if kind == "integer":
        return str(dtype) if fam == "integer" else "int64"
    if kind == "continuous":
        return str(dtype) if fam == "float" else "float64"
    if fam in ("category", "string", "datetime"):
        return str(dtype)
    levels = _levels_dtype(categories)
    if fam == "bool" and levels == "bool":
        return str(dtype)
    return levels


def missing_mask(col) -> np.ndarray:
    """Boolean mask of the missing cells (NaN, ``None``, ``pd.NA``) of one column."""
    import pandas as pd

    return np.asarray(pd.isna(np.asarray(col, dtype=object)), dtype=bool)


def missing_values_error(name) -> ValueError:
    """The refusal of a missing value in column ``name`` (no missing level declared): the
    column, never a value, and what to do (:mod:`skdp.utils._data_free`)."""
    from skdp.utils._data_free import MISSING_VALUES_SYNTH_ADVICE

    return ValueError(
        f"column {_label(name)} contains missing values (NaN or None) and declares no "
        "missing level. " + MISSING_VALUES_SYNTH_ADVICE
    )


def _numeric_column(col, name, *, missing=False) -> np.ndarray:
    """The float values of a numeric column. Missing cells (NaN, ``None``) are NaN when
    the column declares a missing level (``missing=True``) and refused otherwise; an
    infinite value is always refused."""
    if np.asarray(col).dtype.kind == "c":
        # np.asarray(..., dtype=float) would silently drop the imaginary part
        raise ValueError(f"column {_label(name)} is declared numeric but holds complex numbers")
    try:
        v = np.asarray(col, dtype=float)
    except (TypeError, ValueError):
        v = None
        if np.asarray(col).dtype.kind == "O":  # None / pd.NA among numbers
            mask = missing_mask(col)
            if mask.any():
                try:
                    v = np.asarray(np.where(mask, np.nan, np.asarray(col, dtype=object)), float)
                except (TypeError, ValueError):
                    v = None
        if v is None:
            raise ValueError(
                f"column {_label(name)} is declared numeric but is not numeric"
            ) from None
    nan = np.isnan(v)
    if np.isinf(v).any():
        raise ValueError(f"column {_label(name)} contains infinity")
    if nan.any() and not missing:
        raise missing_values_error(name)
    return v
