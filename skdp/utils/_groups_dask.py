"""Contribution bounding on Dask input: each patient keeps at most ``k`` of its rows,
chosen at random **on the workers** (:doc:`/patients`, :doc:`/dask`).

Bounding needs a patient's rows together, and a patient's rows may lie in any
partition. The rows (the data columns and the patient label) are moved by Dask's own
shuffle on the label (``DataFrame.shuffle``, on the workers), so that all rows of a
patient land in one partition; each partition then keeps at most ``k`` rows per
patient and the result stays a lazy Dask collection. The client receives only one row
count per partition (the number of rows kept is public, as the number of rows is).

Random choice. Every row gets a pseudo-random priority: a keyed hash (splitmix64
rounds, :func:`skdp.utils._random._mix`) of a secret 64-bit key drawn from the
estimator's own noise stream, of the row's contents and label, and of its occurrence
number among identical rows of the same patient; a patient keeps its ``k`` rows of
smallest priority. For a fresh key the priorities of a patient's rows are independent
and uniform (up to the hash), so every ``k``-subset of its rows is equally likely,
whatever their order and partition. The choice for a patient depends only on the key
and on that patient's own rows, so adding or removing a patient changes the bounded
data by that patient's at most ``k`` rows: the sensitivity of every sum is ``k`` times
the row's (:func:`skdp.mechanisms.sensitivity.group_sensitivity`) -- the same bound as
for the in-memory choice (:func:`skdp.utils._groups.bound_contributions`), whose
random rows differ. The kept multiset of rows is a function of the key and of the
multiset of rows, so a permuted or repartitioned copy of the data keeps the same rows
(a seeded release digests Dask input as a multiset, ``order_invariant=True``). The key
lives only in the task graph of the fit; nothing of it is stored.
"""

from __future__ import annotations

import sys

import numpy as np

from skdp.utils._random import _cell_keys, _mix
from skdp.utils._rowsum import _frame_lengths, dask_errors, is_dask_collection

__all__ = ["bound_dask_rows"]

#: the label column of the shuffled frame
_LABEL = "__skdp_group__"
_OFFSET = np.uint64(0x9E3779B97F4A7C15)


def _frame(arrays, labels):
    """One lazy Dask DataFrame of the aligned ``arrays`` (data columns ``a{i}_{j}``) and
    the labels (column :data:`_LABEL`), partitioned like the first array's rows."""
    import dask.array as da
    import dask.dataframe as dd

    chunks = arrays[0].chunks[0]
    frames = []
    for i, a in enumerate(arrays):
        a = a.rechunk((chunks,) + tuple(-1 for _ in a.shape[1:]))
        width = 1 if a.ndim == 1 else int(a.shape[1])
        a = a.reshape(a.shape[0], width) if a.ndim == 1 else a
        frames.append(dd.from_dask_array(a, columns=[f"a{i}_{j}" for j in range(width)]))
    if is_dask_collection(labels):
        labels = labels.rechunk((chunks,))
    else:
        labels = da.from_array(labels, chunks=(chunks,))
    frames.append(dd.from_dask_array(labels, columns=_LABEL))
    return dd.concat(frames, axis=1)


def _shuffle_method():
    """The configured shuffle, or Dask's own choice (``p2p``) when the scheduler that
    will run the graph is a ``distributed`` client; ``"tasks"`` on a local scheduler
    (where Dask would pick its on-disk shuffle, and ``p2p`` cannot run)."""
    import dask
    from dask.base import get_scheduler

    if dask.config.get("dataframe.shuffle.method", None) is not None:
        return None
    distributed = sys.modules.get("distributed")
    owner = getattr(get_scheduler(), "__self__", None)
    if distributed is not None and isinstance(owner, distributed.Client):
        return None
    return "tasks"


def _check_labels(labels):
    """Missing labels are refused, naming ``groups`` (never a label)."""
    import pandas as pd

    missing = ~np.isfinite(labels) if labels.dtype.kind == "f" else pd.isna(labels)
    if np.any(missing):
        raise ValueError("groups has missing or non-finite labels (every row needs one)")


def _priorities(part, key):
    """``(patient hash, exact patient code, priority)`` of every row of ``part`` (module
    docstring). The hash only orders the output; patients are told apart by their exact
    label (``pandas.factorize``), so two labels whose hashes collide -- which an
    adversarial label could force, the hash being public -- still get ``k`` rows each
    and their choices stay independent."""
    import pandas as pd

    patient = _cell_keys(part[_LABEL].to_numpy())
    exact = pd.factorize(part[_LABEL].to_numpy())[0]
    content = np.full(len(part), np.uint64(key), dtype=np.uint64)
    for j, column in enumerate(part.columns):
        offset = np.uint64((j + 1) * int(_OFFSET) % 2**64)
        content = _mix(content ^ (_cell_keys(part[column].to_numpy()) + offset))
    # the occurrence number among identical rows of a patient: duplicates differ too
    occurrence = pd.DataFrame({"g": exact, "h": content}).groupby(["g", "h"]).cumcount()
    priority = _mix(content ^ _mix(occurrence.to_numpy().astype(np.uint64) + _OFFSET))
    return patient, exact, priority


def _keep_k(part, k, key):
    """The rows of one shuffled partition that are kept: at most ``k`` per patient,
    those of smallest priority, in the order of (patient key, priority) -- a function
    of the rows, not of the order in which the shuffle delivered them, so every
    column computed apart lines up."""
    if len(part) == 0:
        return part
    import pandas as pd

    _check_labels(part[_LABEL].to_numpy())
    patient, exact, priority = _priorities(part, key)
    order = np.lexsort((priority, patient))
    # each exact patient's rank in that order (a collision of hashes merges no bound)
    sorted_exact = exact[order]
    rank = pd.Series(sorted_exact).groupby(sorted_exact).cumcount().to_numpy()
    return part.iloc[order[rank < k]]


def bound_dask_rows(arrays, groups, k, rng):
    """The rows of ``arrays`` with each patient kept to at most ``k`` rows, chosen at
    random on the workers (module docstring).

    Parameters
    ----------
    arrays : sequence of Dask arrays (1-d or 2-d) or None
        Aligned by rows (validated lazily by the caller; their blocks are checked by
        the caller's row function after bounding).
    groups : Dask array or in-memory array
        One label per row (:func:`check_dask_groups`).
    k : int
        The contribution bound ``max_rows_per_group``.
    rng : numpy.random.Generator
        The estimator's own stream for the choice: one 64-bit key is drawn from it.

    Returns
    -------
    (list, int)
        Lazy Dask arrays of the kept rows (``None`` stays ``None``; known chunks) and
        the number of rows kept.
    """
    key = int.from_bytes(rng.bytes(8), "little")
    present = [a for a in arrays if a is not None]
    frame = _frame(present, groups)
    shuffled = frame.shuffle(
        on=_LABEL,
        npartitions=frame.npartitions,
        ignore_index=True,
        shuffle_method=_shuffle_method(),
    )
    kept = shuffled.map_partitions(_keep_k, k, key, meta=frame._meta)
    with dask_errors("groups"):
        lengths = tuple(_frame_lengths(kept))
    out, i = [], 0
    for a in arrays:
        if a is None:
            out.append(None)
            continue
        columns = [c for c in frame.columns if c.startswith(f"a{i}_")]
        values = kept[columns].to_dask_array(lengths=lengths)
        out.append(values[:, 0] if a.ndim == 1 else values)
        i += 1
    return out, int(sum(lengths))
