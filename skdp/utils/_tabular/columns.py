"""Columns of the public tabular schema: kinds, :class:`ColumnSpec`, dtype helpers."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["COLUMN_KINDS", "NUMERIC_KINDS", "ColumnSpec", "kind_from_dtype"]

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
            self._widen_dtype(lo, hi)
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


def kind_from_dtype(dtype) -> str:
    """The column kind a dtype implies (never read from values).

    ``bool`` -> ``"binary"``, integer -> ``"integer"``, float -> ``"continuous"``,
    pandas ``Categorical``/object/string -> ``"categorical"``.
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
