"""A guard that fails a test when a fit brings rows of a Dask collection to the client."""

from __future__ import annotations

import contextlib
from unittest import mock

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np


def _size(obj):
    if isinstance(obj, np.ndarray):
        return obj.shape[0] if obj.ndim else 1
    if isinstance(obj, tuple | list):
        return max((_size(o) for o in obj), default=0)
    if isinstance(obj, dict):
        return max((_size(o) for o in obj.values()), default=0)
    if hasattr(obj, "shape") and getattr(obj, "ndim", 0):  # pandas
        return obj.shape[0]
    if hasattr(obj, "__len__") and not isinstance(obj, str | bytes):  # a partial's class
        return len(obj)
    return 1


@contextlib.contextmanager
def no_full_compute(max_rows):
    """Inside: materialising a Dask collection on the client (``.compute()``,
    ``np.asarray``, ``.values``) raises, and every ``dask.compute`` result must hold at
    most ``max_rows`` rows per returned object (the size of the statistic, not ``n``).
    Partition lengths (``n_rows``) come back as one int per partition and are allowed."""
    real = dask.compute
    results = []

    def checked(*args, **kwargs):
        out = real(*args, **kwargs)
        results.append(out)
        return out

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask collection was materialised on the client")

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(dask, "compute", checked))
        for cls in (da.Array, dd.DataFrame, dd.Series):
            stack.enter_context(mock.patch.object(cls, "compute", refuse))
            stack.enter_context(mock.patch.object(cls, "__array__", refuse, create=True))
        yield results
    for out in results:
        sizes = [_size(o) for o in out]
        # one scalar per partition (lengths) or statistics of at most max_rows rows
        assert all(s <= max_rows for s in sizes) or all(
            isinstance(o, int | np.integer) for o in out
        ), f"a compute returned {max(sizes)} rows to the client"
    assert results, "nothing was computed"
