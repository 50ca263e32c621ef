"""The dispatch layer (skdp.utils._rowsum) and the chunk-invariant data digest."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from sklearn.linear_model import LinearRegression  # noqa: E402

from skdp.utils._random import fit_streams, release_rng  # noqa: E402
from skdp.utils._rowsum import (  # noqa: E402
    FRACTION_BITS,
    add_partials,
    fixed_point_gram,
    fixed_point_to_float,
    is_dask_collection,
    n_rows,
    row_sum,
)


def test_import_skdp_does_not_import_dask():
    code = (
        "import sys, skdp\n"
        "print(sorted(m for m in sys.modules if m == 'dask' or m.startswith('dask.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_numpy_fits_never_import_dask(monkeypatch):
    # ``None`` in sys.modules makes every ``import dask...`` raise ImportError
    for name in [m for m in sys.modules if m == "dask" or m.startswith("dask.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "dask", None)
    from skdp.linear_model import DPLinearRegression
    from skdp.metrics import dp_accuracy_score

    X = np.random.default_rng(0).uniform(size=(50, 2))
    DPLinearRegression(bounds_X=(0, 1), bounds_y=(0, 2), random_state=0).fit(X, X.sum(1))
    dp_accuracy_score([0, 1] * 5, [0, 0] * 5, epsilon=1.0, random_state=0)


def test_is_dask_collection():
    x = np.zeros((4, 2))
    assert not is_dask_collection(x)
    assert not is_dask_collection(pd.DataFrame(x))
    assert is_dask_collection(da.from_array(x))
    assert is_dask_collection(dd.from_pandas(pd.DataFrame(x), npartitions=2))


def test_n_rows_numpy_and_dask(sync_scheduler):
    x = np.zeros((37, 3))
    assert n_rows(x) == 37
    assert n_rows(da.from_array(x, chunks=(10, 3))) == 37
    assert n_rows(dd.from_pandas(pd.DataFrame(x), npartitions=4)) == 37
    unknown = da.from_array(x, chunks=(10, 3))[da.from_array(np.arange(37) % 2 == 0)]
    assert n_rows(unknown) == 19


def test_fixed_point_gram_is_exact_and_close_to_float():
    Z = np.random.default_rng(0).uniform(-1, 1, size=(3001, 4))
    Z[0] = 1.0
    Z[1] = -1.0
    S = fixed_point_gram(Z)
    q = [[int(v) for v in row] for row in np.rint(Z * 2.0**FRACTION_BITS).astype(np.int64)]
    exact = [[sum(r[i] * r[j] for r in q) for j in range(4)] for i in range(4)]
    assert S.tolist() == exact  # Python-integer reference
    G = fixed_point_to_float(S)
    np.testing.assert_allclose(G, Z.T @ Z, rtol=0, atol=Z.shape[0] * 2.0**-FRACTION_BITS)


def test_float_partials_are_refused():
    with pytest.raises(TypeError, match="chunking"):
        add_partials(np.ones(2), np.ones(2))


@pytest.mark.parametrize("chunk_rows", [1, 7, 1000])
def test_row_sum_numpy_is_chunk_invariant(chunk_rows):
    Z = np.random.default_rng(1).uniform(-1, 1, size=(500, 3))
    assert (row_sum(fixed_point_gram, Z, chunk_rows=chunk_rows) == fixed_point_gram(Z)).all()


def _gram_two(a, b):
    return fixed_point_gram(np.column_stack([np.asarray(a, dtype=float), b]))


@pytest.mark.parametrize("chunks", [50, 333, 2000])
def test_row_sum_dask_equals_numpy(sync_scheduler, chunks):
    rng = np.random.default_rng(2)
    Z = rng.uniform(-1, 1, size=(2000, 3))
    ref = fixed_point_gram(Z)
    assert (row_sum(fixed_point_gram, da.from_array(Z, chunks=(chunks, 2))) == ref).all()
    # a Dask array and an in-memory array, and a Dask DataFrame beside a Dask array
    got = row_sum(_gram_two, da.from_array(Z[:, :2], chunks=(chunks, 1)), Z[:, 2])
    assert (got == ref).all()
    frame = dd.from_pandas(pd.DataFrame(Z[:, :2]), npartitions=max(1, 2000 // chunks))
    got = row_sum(_gram_two, frame, da.from_array(Z[:, 2], chunks=97))
    assert (got == ref).all()


def test_row_sum_inconsistent_lengths(sync_scheduler):
    with pytest.raises(ValueError, match="inconsistent numbers of rows"):
        row_sum(_gram_two, np.zeros((5, 1)), np.zeros(4))


def _digest(X, y=None, seed=0):
    streams = fit_streams(seed, ["n"], estimator=LinearRegression(), X=X, y=y, order_invariant=True)
    return streams["n"].integers(2**63)


@pytest.mark.parametrize("chunks", [100, 1234, 5000])
def test_digest_numpy_equals_dask(sync_scheduler, chunks):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 3))
    y = rng.integers(0, 3, 5000)
    ref = _digest(X, y)
    assert _digest(da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=777)) == ref
    assert _digest(da.from_array(X, chunks=(chunks, 3)), y) == ref
    # a different data set gets a different seed
    assert _digest(da.from_array(X[:-1], chunks=(chunks, 3)), y[:-1]) != ref


@pytest.mark.parametrize("npartitions", [1, 3, 8])
def test_digest_dataframe_equals_dask_dataframe(sync_scheduler, npartitions):
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {
            "a": rng.normal(size=900),
            "b": rng.choice(["u", "v", "w"], 900),
            "c": pd.Categorical(rng.choice(["p", "q"], 900)),
            "d": rng.integers(0, 5, 900),
        }
    )
    target = pd.Series(rng.integers(0, 2, 900), name="t")
    ref = _digest(df, target)
    got = _digest(
        dd.from_pandas(df, npartitions=npartitions),
        dd.from_pandas(target, npartitions=npartitions),
    )
    assert got == ref
    a = release_rng(0, tag="t", params={}, data=(df["d"].to_numpy(),), order_invariant=True)
    b = release_rng(
        0,
        tag="t",
        params={},
        data=(da.from_array(df["d"].to_numpy(), chunks=100),),
        order_invariant=True,
    )
    assert a.random() == b.random()


def test_ordered_digest_refuses_dask(sync_scheduler):
    with pytest.raises(TypeError, match="multiset of rows"):
        fit_streams(0, ["n"], estimator=LinearRegression(), X=da.zeros((10, 2)))


@pytest.mark.slow  # tests/dask/test_cluster.py covers the cluster by default
def test_row_sum_on_local_cluster(dask_client):
    Z = np.random.default_rng(5).uniform(-1, 1, size=(4000, 3))
    got = row_sum(fixed_point_gram, da.from_array(Z, chunks=(700, 3)))
    assert (got == fixed_point_gram(Z)).all()
    X = da.from_array(Z, chunks=(900, 3))
    assert _digest(X) == _digest(Z)
