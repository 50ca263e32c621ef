"""Dask dispatch: "sum this per-row function over the rows", in memory or on a cluster.

Most skdp releases are a noisy function of a **sum over rows** (a Gram matrix, cell
counts, a number of correct predictions, a data digest). This module is the one place
that turns such a sum into numpy work on the client or into a Dask graph whose workers
compute one small partial sum per partition and whose client receives only the total.
Dask is an optional dependency: nothing here imports it unless an input already *is* a
Dask collection (then ``dask`` is in :data:`sys.modules` anyway), so ``import skdp`` and
every numpy-only fit stay Dask-free.

How to use it (an estimator that releases a sum)
------------------------------------------------

1. ``if is_dask_collection(X)``: validate lazily -- shapes, dtypes and column names come
   from the collection's metadata (:func:`column_names`, ``X.dtype`` /
   ``X._meta.dtypes``); never call ``.compute()``, ``np.asarray`` or
   ``validate_data`` on it. :func:`n_rows` gives the (public) number of rows with one
   cheap pass when Dask does not know it. :func:`as_dask_array` turns a Dask DataFrame
   of numeric columns into a Dask array with known chunk sizes.
2. Write the statistic as ``func(*chunks) -> partial``: ``chunks`` are aligned blocks of
   rows (numpy arrays for arrays, pandas objects for DataFrames/Series, ``None`` stays
   ``None``); it validates the block (finite, inside the declared bounds, ...), clips it
   to the declared bounds and returns an **exact** partial sum: a Python ``int``, an
   integer numpy array (counts), an object array of Python ints (fixed point, see
   :func:`fixed_point_gram`), or a tuple/list/dict of those. Floats are refused as
   partials: their sum would depend on the chunking.
3. ``total = row_sum(func, X, y, ...)``: the same call for numpy/pandas input (the client
   iterates over blocks of ``chunk_rows`` rows, memory O(block)) and for Dask input (one
   task per partition, blocks inside it, a tree of additions on the workers, one
   ``dask.compute`` that returns only ``total`` -- O(size of the statistic), never O(n)).
   Because every partial is exact, ``total`` is bit-identical for every chunking and
   for numpy vs Dask input.
4. Draw the noise once, on the client, from the estimator's own stream
   (:func:`skdp.utils._random.fit_streams`, which digests Dask input with
   :func:`row_sum` too, as a multiset of rows).

Exact partials. The partial types, their exact addition (:func:`add_partials`) and the
fixed-point Gram matrix of float rows (:func:`fixed_point_gram`, :data:`FRACTION_BITS`)
are :mod:`skdp.utils._exact_partials`, re-exported here.

Scheduler. :func:`row_sum` calls ``dask.compute`` with Dask's current scheduler: a
``distributed.Client`` when one is active, the configured local scheduler otherwise.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

# the exact partials: re-exported, callers import them from here too
from skdp.utils._exact_partials import (
    _BLOCK_CELLS,
    _MAX_BLOCK_ROWS,
    FRACTION_BITS,
    SparseCounts,
    add_partials,
    fixed_point_gram,
    fixed_point_to_float,
)

__all__ = [
    "is_dask_collection",
    "any_dask",
    "n_rows",
    "column_names",
    "as_dask_array",
    "as_1d",
    "row_sum",
    "add_partials",
    "fixed_point_gram",
    "fixed_point_to_float",
    "FRACTION_BITS",
    "check_dask_input",
    "enforce_meta",
    "dask_errors",
    "SparseCounts",
]


# ------------------------------------------------------------------ what is Dask
def is_dask_collection(x) -> bool:
    """True when ``x`` is a Dask collection (array, DataFrame, Series, ...).

    Imports nothing: when ``dask`` has not been imported, ``x`` cannot be one.
    """
    if "dask" not in sys.modules or x is None:
        return False
    if not type(x).__module__.startswith("dask"):
        return False
    return bool(sys.modules["dask"].is_dask_collection(x))


def any_dask(*xs) -> bool:
    """True when any argument is a Dask collection."""
    return any(is_dask_collection(x) for x in xs)


def _is_dask_frame(x) -> bool:
    return is_dask_collection(x) and hasattr(x, "npartitions") and not hasattr(x, "chunks")


def column_names(x):
    """Column names of a (Dask or pandas) DataFrame, from metadata only; else ``None``."""
    cols = getattr(x, "columns", None)
    if cols is None or not hasattr(x, "dtypes"):
        return None
    return list(cols)


def n_rows(x) -> int:
    """Number of rows of ``x`` (numpy, pandas, list or Dask); one cheap pass when Dask
    does not know it (a Dask DataFrame, or an array with unknown chunk sizes)."""
    if is_dask_collection(x):
        if hasattr(x, "chunks"):
            if not np.isnan(x.shape[0]):
                return int(x.shape[0])
            return int(sum(_array_row_chunks(x)))
        return int(sum(_frame_lengths(x)))
    return int(getattr(x, "shape", (len(x),))[0])


def _frame_lengths(frame) -> list[int]:
    import dask

    lengths = [dask.delayed(len, pure=True)(part) for part in frame.to_delayed()]
    with dask_errors("a Dask input"):
        return [int(v) for v in dask.compute(*lengths)]


def _array_row_chunks(arr) -> tuple[int, ...]:
    if any(np.isnan(c) for c in arr.chunks[0]):
        with dask_errors("a Dask input"):
            arr = arr.compute_chunk_sizes()  # one pass, lengths only
    return tuple(int(c) for c in arr.chunks[0])


def as_dask_array(x, dtype=None, *, name="X"):
    """A Dask array (2-D for a DataFrame, known row chunks) from a Dask collection.

    Every partition (or block) is checked, when it is computed, against the collection's
    metadata: a numeric dtype declared in ``meta`` must be the partition's dtype or
    exactly castable to it, and a DataFrame partition must have the declared columns (a
    ``TypeError``/``ValueError`` naming ``name`` and the column, never a value; see
    :func:`enforce_meta`).
    """
    x = enforce_meta(x, name)
    if hasattr(x, "chunks"):
        arr = x
    else:
        # lengths from the array's own graph: read_parquet fuses the partitions of a
        # column subset when the graph is lowered, so counts taken through another
        # expression (map_partitions(len)) need not match ``x.npartitions``
        arr = x.to_dask_array()
        if any(np.isnan(c) for c in arr.chunks[0]):
            with dask_errors(name):
                arr = arr.compute_chunk_sizes()  # one count per partition
    if dtype is not None and arr.dtype != np.dtype(dtype):
        arr = arr.astype(dtype)
    return arr


# ------------------------------------------------------------- lying metadata
def enforce_meta(x, name):
    """``x`` with a lazy check of every partition (or block) against its metadata.

    Dask trusts the ``meta`` (``dtypes``, ``columns``) a collection declares; a
    ``map_partitions(..., meta=...)`` or ``from_delayed`` whose partitions differ from it
    (text in a column declared ``float64``) reaches numpy in a worker, which names the
    offending value in its error. The check casts a numeric partition column to the
    declared dtype where :func:`numpy.can_cast` calls that safe (int64 values under a
    declared float64) and raises ``TypeError`` otherwise (text, or a lossy cast), or
    ``ValueError`` when the columns differ, naming ``name`` and the column, never a
    value. Only numeric and bool declared dtypes are checked; a text or categorical column
    is checked by its consumer (declared levels).

    Parameters
    ----------
    x : Dask collection or other
        Anything else is returned as it is.
    name : str
        The parameter the messages name (``"X"``, ``"y_true"``, ...).

    Returns
    -------
    Dask collection
        ``x`` with the check as one more task per partition (nothing is computed here).
    """
    if not is_dask_collection(x):
        return x
    if hasattr(x, "chunks"):  # a Dask array: one dtype for every block
        if not _is_numeric(x.dtype):
            return x
        return x.map_blocks(_checked_block, name, x.dtype, dtype=x.dtype)
    meta = getattr(x, "_meta", None)
    if meta is None:
        return x
    if hasattr(meta, "columns"):
        columns = [(c, dt) for c, dt in zip(meta.columns, meta.dtypes, strict=True)]
    else:
        columns = [(None, meta.dtype)]
    return x.map_partitions(_checked_partition, name, columns, meta=meta)


def _checked_block(block, name, dtype):
    return _as_declared(np.asarray(block), dtype, f"{name}: a block of the Dask array")


def _as_declared(values, declared, where, shown=None):
    """``values`` in the declared numeric dtype: cast where the cast is exact
    (``numpy.can_cast(..., "safe")``, e.g. int64 under a declared float64), refused
    otherwise (text, or a lossy cast)."""
    actual = values.dtype
    if actual == declared:
        return values
    if _is_numeric(actual) and np.can_cast(actual, declared, casting="safe"):
        return values.astype(declared)
    shown = actual if shown is None else shown
    raise TypeError(
        f"{where} has dtype {shown}, but the Dask collection's metadata (meta) declares "
        f"{declared}; fix the meta= (or dtype=) given to Dask, or astype the partitions"
    )


def _checked_partition(part, name, columns):
    frame = hasattr(part, "columns")
    have = list(part.columns) if frame else [None]
    if have != [c for c, _ in columns]:
        raise ValueError(
            f"{name}: a partition of the Dask DataFrame does not have the columns its "
            "metadata (meta) declares; fix the meta= given to Dask"
        )
    if not frame:
        declared = columns[0][1]
        if not _is_numeric(declared) or part.dtype == declared:
            return part
        where = f"{name}: a partition of the Dask Series"
        return part.astype(_as_declared(part.to_numpy(), declared, where, part.dtype).dtype)
    for col, declared in columns:
        if _is_numeric(declared) and part[col].dtype != declared:
            where = f"{name}: column {col!r} of a partition"
            _as_declared(part[col].to_numpy(), declared, where, part[col].dtype)
            part = part.astype({col: declared})
    return part


_DIRS = None


def _raised_in_dask(exc) -> bool:
    """Whether the innermost frame of ``exc``'s traceback that is Dask's or skdp's own
    code is Dask's (numpy or pandas frames called by Dask count as Dask's)."""
    import os
    import traceback

    global _DIRS
    if _DIRS is None:
        import importlib.util

        skdp_dir = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep
        dask_dirs = []
        for package in ("dask", "distributed"):  # find_spec does not import it
            spec = importlib.util.find_spec(package)
            for d in (spec.submodule_search_locations or []) if spec else []:
                dask_dirs.append(os.path.realpath(d) + os.sep)
        _DIRS = (skdp_dir, tuple(dask_dirs))
    skdp_dir, dask_dirs = _DIRS
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.realpath(frame.filename)
        if path.startswith(skdp_dir):
            return False
        if path.startswith(dask_dirs):
            return True
    return False


_TRANSLATED = (ValueError, TypeError, KeyError, IndexError, AttributeError)


class dask_errors:  # noqa: N801 - used as a context manager, like contextlib's
    """Turn an error raised inside Dask while computing ``name`` (its own check that a
    partition has the declared columns, a failed metadata inference) into a
    ``ValueError`` naming ``name``. Dask's text is not repeated: it can quote the
    exception of a user function, which can quote a value. skdp's own errors pass."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or not isinstance(exc, _TRANSLATED):
            return False
        if not _raised_in_dask(exc):
            return False
        raise ValueError(
            f"{self.name}: Dask could not compute a partition as its metadata (meta: columns, "
            f"dtypes) declares ({type(exc).__name__} inside Dask); check the meta= given "
            "to Dask against the partitions"
        ) from None


# ---------------------------------------------------------------- 1-D inputs
def as_1d(x, name):
    """A 1-D Dask array from a Dask array/Series/one-column DataFrame (metadata only),
    or ``column_or_1d`` of an in-memory ``x``; ``ValueError`` naming ``name`` otherwise."""
    if not is_dask_collection(x):
        from skdp.utils.validation import column_or_1d

        return column_or_1d(x, input_name=name)
    if getattr(x, "ndim", 1) == 2 and hasattr(x, "columns"):
        if len(x.columns) != 1:
            raise ValueError(f"{name} must be 1-D")
        x = x[x.columns[0]]
    arr = as_dask_array(x, name=name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D")
    return arr


def as_1d_pair(a, b, names):
    """``(as_1d(a), as_1d(b), N)`` for two aligned 1-D inputs (``names``: theirs, for
    the messages); ``ValueError`` when their numbers of rows differ."""
    x, y = as_1d(a, names[0]), as_1d(b, names[1])
    N = n_rows(x)
    if n_rows(y) != N:
        raise ValueError(f"{names[0]} and {names[1]} have inconsistent numbers of samples")
    return x, y, N


# ------------------------------------------------------------------ row sums
def _sum_list(parts):
    total = None
    for p in parts:
        total = add_partials(total, p)
    return total


def _take(x, start, stop):
    if x is None:
        return None
    if hasattr(x, "iloc"):
        return x.iloc[start:stop]
    return x[start:stop]


def _len(x):
    return x.shape[0] if hasattr(x, "shape") else len(x)


def _width(x):
    if x is None:
        return 1
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) < 2:
        return 1
    return max(1, int(shape[1]))


def _block_sum(func, chunk_rows, *chunks):
    """Sum ``func`` over blocks of ``chunk_rows`` rows of aligned in-memory chunks."""
    present = [c for c in chunks if c is not None]
    lengths = {_len(c) for c in present}
    if len(lengths) > 1:
        raise ValueError("inputs have inconsistent numbers of rows")
    n = lengths.pop() if lengths else 0
    if chunk_rows is None:
        width = sum(_width(c) for c in present) or 1
        chunk_rows = max(1, min(_MAX_BLOCK_ROWS, _BLOCK_CELLS // width))
    total = None
    for start in range(0, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        total = add_partials(total, func(*(_take(c, start, stop) for c in chunks)))
    return total


def row_sum(func: Callable, *arrays, chunk_rows: int | None = None, split_every: int = 8):
    """Exact sum over rows of ``func(*aligned_row_blocks)``, in memory or with Dask.

    Parameters
    ----------
    func : callable
        ``func(*blocks) -> partial``; ``blocks`` hold the same rows of every input
        (numpy for arrays, pandas for DataFrames/Series; ``None`` inputs stay ``None``).
        Must be picklable for a distributed cluster (a module-level function or a
        :func:`functools.partial` of one). Returns an exact partial (module docstring).
    *arrays : array-like, pandas or Dask collections, or None
        Aligned by rows. Dask arrays are rechunked to the first Dask input's row
        chunks; Dask DataFrames/Series must have the same partitions (the number of
        rows of each partition is checked).
    chunk_rows : int, optional
        Rows per call of ``func`` inside one partition (default: about a million
        values per block). The result does not depend on it.
    split_every : int, default=8
        Fan-in of the tree of additions on the workers.

    Returns
    -------
    partial
        ``None`` when there are no rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._rowsum import row_sum
    >>> y = np.array([0, 1, 1, 2, 1])
    >>> row_sum(lambda b: np.bincount(b, minlength=3), y, chunk_rows=2)
    array([1, 3, 1])
    """
    if not any_dask(*arrays):
        return _block_sum(func, chunk_rows, *arrays)
    import dask

    blocks = _aligned_blocks(arrays)
    task = dask.delayed(_block_sum, pure=True)
    add = dask.delayed(_sum_list, pure=True)
    level = [task(func, chunk_rows, *parts) for parts in blocks]
    while len(level) > 1:
        level = [add(level[i : i + split_every]) for i in range(0, len(level), split_every)]
    if not level:
        return None
    with dask_errors("a Dask input"):
        (total,) = dask.compute(level[0])
    return total


def _aligned_blocks(arrays):
    """Per partition, a tuple of (delayed or concrete) blocks, one per input."""
    import dask.array as da

    frames = [x for x in arrays if _is_dask_frame(x)]
    first = next(x for x in arrays if is_dask_collection(x))
    if frames:
        npart = frames[0].npartitions
        if any(f.npartitions != npart for f in frames):
            raise ValueError("Dask DataFrame inputs must have the same partitions")
        need_lengths = any(x is not None and not _is_dask_frame(x) for x in arrays)
        chunks = tuple(_frame_lengths(frames[0])) if need_lengths else None
    else:
        chunks = _array_row_chunks(first)
    columns = []
    for x in arrays:
        if x is None:
            columns.append(None)
        elif _is_dask_frame(x):
            columns.append(list(x.to_delayed()))
        else:
            if not is_dask_collection(x):
                x = np.asarray(x)
            elif any(np.isnan(c) for c in x.chunks[0]):
                with dask_errors("a Dask input"):
                    x = x.compute_chunk_sizes()
            if chunks is not None and x.shape[0] != sum(chunks):  # before Dask's own error
                raise ValueError(
                    f"inputs have inconsistent numbers of rows ({sum(chunks)} and {x.shape[0]})"
                )
            if not is_dask_collection(x):
                x = da.from_array(x, chunks=(chunks,) + tuple(-1 for _ in x.shape[1:]))
            else:
                x = x.rechunk((chunks,) + tuple(-1 for _ in x.shape[1:]))
            columns.append(list(x.to_delayed().ravel()))
    n_parts = len(next(c for c in columns if c is not None))
    return [tuple(None if c is None else c[i] for c in columns) for i in range(n_parts)]


# ------------------------------------------------------------ lazy validation
def check_dask_input(estimator, X, y=None, *, reset=True, y_name="y"):
    """Validate Dask ``X`` (and ``y``) from metadata only; return float64 Dask arrays.

    Sets ``n_features_in_`` and ``feature_names_in_`` (for string column names) on
    ``estimator`` like :func:`~skdp.utils.validation.validate_data`, and checks that the
    columns are numeric, ``X`` is 2-D and ``y`` 1-D. Nothing is computed except the
    partition lengths of a Dask DataFrame (a count per partition). Values (finite,
    inside the bounds) are checked block by block by the caller's row function.
    In-memory ``y`` beside Dask ``X`` is returned as a numpy array.
    """
    from sklearn.utils.validation import _check_feature_names, _check_n_features

    if not is_dask_collection(X):
        raise TypeError("X must be a Dask collection here")
    dtypes = list(X.dtypes) if hasattr(X, "dtypes") else [X.dtype]
    names = column_names(X) or ["X"] * len(dtypes)
    for name, dt in zip(names, dtypes, strict=True):
        if not _is_numeric(dt):
            raise TypeError(f"column {name!r} of X must be numeric (bool, int or float)")
    _check_feature_names(estimator, getattr(X, "_meta", None), reset=reset)  # names only
    Xa = as_dask_array(X, np.float64, name="X")
    if Xa.ndim != 2:
        raise ValueError(f"Expected a 2-D X, got {Xa.ndim} dimension(s)")
    _check_n_features(estimator, np.empty((0, Xa.shape[1])), reset=reset)
    if y is None:
        return Xa, None
    if is_dask_collection(y):
        if not _is_numeric(getattr(y, "dtype", None)):
            raise TypeError(f"{y_name} must be numeric (bool, int or float)")
        ya = as_dask_array(y, np.float64, name=y_name)
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
    else:
        try:
            ya = np.asarray(y, dtype=np.float64)
        except (ValueError, TypeError):  # numpy's message quotes the value
            raise ValueError(f"{y_name} must be numeric (the value is not shown)") from None
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
    if ya.ndim != 1:
        raise ValueError(f"{y_name} must be 1-D")
    if not (np.isnan(Xa.shape[0]) or np.isnan(ya.shape[0])) and Xa.shape[0] != ya.shape[0]:
        raise ValueError(
            f"X and {y_name} have inconsistent numbers of samples: "
            f"[{int(Xa.shape[0])}, {int(ya.shape[0])}]"
        )
    return Xa, ya


def _is_numeric(dt) -> bool:
    return isinstance(dt, np.dtype) and dt.kind in "biuf"
