"""Contribution bounding on Dask input (skdp.utils._groups_dask): each patient keeps at
most k of its rows, chosen uniformly at random on the workers after Dask's shuffle by
patient; the kept rows do not depend on the order or the partitioning of the rows."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.utils._groups import check_dask_groups  # noqa: E402
from skdp.utils._groups_dask import _LABEL, _keep_k, bound_dask_rows  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _patients(n_patients=40, max_rows=6, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_rows + 1, size=n_patients)
    labels = np.repeat(np.arange(n_patients), sizes)
    X = rng.normal(size=(labels.size, 2))
    return X, labels


def _kept(X, labels, k, seed, *, chunks=17, label_chunks=23):
    (Xb, gb), n = bound_dask_rows(
        [da.from_array(X, chunks=(chunks, 2)), da.from_array(labels.astype(float), chunks=31)],
        da.from_array(labels, chunks=label_chunks),
        k,
        np.random.default_rng(seed),
    )
    Xb, gb = Xb.compute(), gb.compute()
    assert Xb.shape[0] == gb.shape[0] == n
    return Xb, gb.astype(int)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_each_patient_keeps_min_of_its_rows_and_k(sync_scheduler, k):
    X, labels = _patients()
    Xb, gb = _kept(X, labels, k, seed=1)
    want = np.minimum(np.bincount(labels), k)
    np.testing.assert_array_equal(np.bincount(gb, minlength=want.size), want)
    for row, label in zip(Xb, gb, strict=True):  # every kept row is one of its patient's
        assert np.any((X[labels == label] == row).all(axis=1))


def test_the_columns_stay_aligned_when_computed_apart(sync_scheduler):
    X, labels = _patients()
    y = X[:, 0] * 3.0 + labels
    (Xb, yb), _ = bound_dask_rows(
        [da.from_array(X, chunks=(13, 2)), da.from_array(y, chunks=29)],
        da.from_array(labels, chunks=41),
        2,
        np.random.default_rng(5),
    )
    Xb, yb = Xb.compute(), yb.compute()  # two computes: two shuffles
    rows = {tuple(r): i for i, r in enumerate(X)}
    np.testing.assert_array_equal(yb, y[[rows[tuple(r)] for r in Xb]])


def test_the_rows_kept_do_not_depend_on_order_or_partitions(sync_scheduler):
    X, labels = _patients(seed=3)
    perm = np.random.default_rng(0).permutation(labels.size)
    a = _kept(X, labels, 2, seed=7)
    b = _kept(X[perm], labels[perm], 2, seed=7, chunks=50, label_chunks=9)
    key = lambda kept: sorted(map(tuple, np.column_stack(kept)))  # noqa: E731
    assert key(a) == key(b)
    c = _kept(X, labels, 2, seed=8)  # another key: other rows
    assert key(a) != key(c)


def test_the_choice_is_uniform_per_patient_duplicates_included():
    # 3000 patients with rows a, b, c, c; k = 1: a and b 1/4 each, c 1/2 (both copies);
    # the patients' priorities are independent (the label enters the hash)
    m = 3000
    part = pd.DataFrame(
        {"a0_0": np.tile([1.0, 2.0, 3.0, 3.0], m), _LABEL: np.repeat(np.arange(m), 4)}
    )
    kept = _keep_k(part, 1, 12345)
    assert kept[_LABEL].nunique() == m == len(kept)
    counts = kept["a0_0"].value_counts()
    for value, p in [(1.0, 0.25), (2.0, 0.25), (3.0, 0.5)]:
        assert abs(counts[value] / m - p) < 4 * np.sqrt(p * (1 - p) / m)
    # k = 2 of 3 distinct rows: every pair equally likely
    part = pd.DataFrame({"a0_0": np.tile([1.0, 2.0, 3.0], m), _LABEL: np.repeat(np.arange(m), 3)})
    kept = _keep_k(part, 2, 777)
    pairs = collections.Counter(
        tuple(v) for v in kept.sort_values("a0_0").groupby(_LABEL)["a0_0"].agg(tuple)
    )
    assert len(pairs) == 3
    assert all(abs(c / m - 1 / 3) < 4 * np.sqrt(2 / 9 / m) for c in pairs.values())


def test_nothing_but_counts_comes_back_to_the_client(sync_scheduler):
    X, labels = _patients()
    with no_full_compute(max_rows=0):  # only one length per partition
        (Xb,), n = bound_dask_rows(
            [da.from_array(X, chunks=(17, 2))],
            check_dask_groups(
                dd.from_pandas(pd.Series(labels.astype(str)), npartitions=4), labels.size
            ),
            3,
            np.random.default_rng(0),
        )
    assert n == int(np.minimum(np.bincount(labels), 3).sum())
    assert Xb.shape == (n, 2)


def test_bad_dask_groups_are_refused_by_name(sync_scheduler):
    X, labels = _patients()
    with pytest.raises(ValueError, match="groups has 10 labels for"):
        check_dask_groups(da.from_array(labels[:10]), labels.size)
    with pytest.raises(ValueError, match="groups must be 1-d"):
        check_dask_groups(da.from_array(np.c_[labels, labels]), labels.size)
    bad = labels.astype(float)
    bad[3] = np.nan
    with pytest.raises(ValueError, match="groups has missing or non-finite labels"):
        bound_dask_rows(
            [da.from_array(X, chunks=(17, 2))],
            da.from_array(bad, chunks=20),
            2,
            np.random.default_rng(0),
        )


def test_the_shuffle_runs_on_the_scheduler_in_use(sync_scheduler):
    import dask

    from skdp.utils._groups_dask import _shuffle_method

    assert _shuffle_method() == "tasks"  # local: not Dask's on-disk default, not p2p
    with dask.config.set({"dataframe.shuffle.method": "disk"}):
        assert _shuffle_method() is None  # the user's configured method


@pytest.mark.slow
def test_p2p_on_a_distributed_client(dask_client):
    from skdp.utils._groups_dask import _shuffle_method

    assert _shuffle_method() is None  # Dask's own choice on the cluster
    X, labels = _patients()
    Xb, gb = _kept(X, labels, 2, seed=1)
    want = np.minimum(np.bincount(labels), 2)
    np.testing.assert_array_equal(np.bincount(gb, minlength=want.size), want)


def test_two_patients_whose_label_hashes_collide_keep_k_rows_each(monkeypatch):
    """Attack: the label hash is public, so an adversary can give an added patient a
    label that collides with the target's. Patients must be told apart by their exact
    label: with every hash forced equal, each patient still keeps its own k rows, and
    the target's kept rows do not change when the colliding patient is added (before the
    fix both shared one bound of k rows, so adding B removed rows of A)."""
    import skdp.utils._groups_dask as gd

    real = gd._cell_keys

    def colliding(values):  # the label column hashes to one value; data stay distinct
        keys = real(values)
        if values.dtype == object or values.dtype.kind in "iu":
            return np.zeros_like(keys)
        return keys

    monkeypatch.setattr(gd, "_cell_keys", colliding)
    a = pd.DataFrame({"a0_0": [1.0, 2.0, 3.0, 4.0], _LABEL: ["A"] * 4})
    b = pd.DataFrame({"a0_0": [5.0, 6.0, 7.0], _LABEL: ["B"] * 3})
    alone = _keep_k(a, 2, 99)
    both = _keep_k(pd.concat([a, b], ignore_index=True), 2, 99)
    assert (both[_LABEL] == "A").sum() == 2 and (both[_LABEL] == "B").sum() == 2
    assert sorted(both.loc[both[_LABEL] == "A", "a0_0"]) == sorted(alone["a0_0"])
