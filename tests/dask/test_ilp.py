"""DPILPClassifier on Dask input: per-level satisfy-counts summed per partition, the
same release as in memory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.ilp import DPILPClassifier  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 5))
    y = (X[:, 0] & X[:, 1]) | (X[:, 2] & X[:, 3] & (rng.random(n) < 0.9))
    return X, y.astype(int)


def _release(est):
    return est.clause_indices_, est.clause_noisy_coverage_.tolist(), est.search_levels_


@pytest.mark.parametrize("search", ["smart", "naive"])
@pytest.mark.parametrize("chunks", [250, 3000])
def test_bit_identical_release(sync_scheduler, search, chunks):
    X, y = _data()
    kw = dict(epsilon=2.0, n_clauses=2, max_clause_length=2, search=search, random_state=3)
    ref = DPILPClassifier(**kw).fit(X, y)
    with no_full_compute(max_rows=25):  # counts of at most C(5, 2) + 5 + 1 clauses
        got = DPILPClassifier(**kw).fit(
            da.from_array(X, chunks=(chunks, 5)), da.from_array(y, chunks=chunks)
        )
    assert _release(got) == _release(ref)
    assert len(ref.clause_indices_) == 2  # cover removal was exercised
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))


def test_dataframe_binarize_and_errors(sync_scheduler):
    rng = np.random.default_rng(1)
    Xf = pd.DataFrame(rng.normal(size=(1000, 3)), columns=["a", "b", "c"])
    y = ((Xf["a"] > 0) & (Xf["b"] > 0)).astype(int).to_numpy()
    kw = dict(epsilon=1.0, max_clause_length=2, binarize=0.0, random_state=0)
    ref = DPILPClassifier(**kw).fit(Xf, y)
    got = DPILPClassifier(**kw).fit(dd.from_pandas(Xf, npartitions=4), y)
    assert got.clauses_ == ref.clauses_ and got.clause_indices_ == ref.clause_indices_
    assert list(got.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="binary"):
        DPILPClassifier().fit(da.from_array(Xf.to_numpy(), chunks=(300, 3)), y)
    with pytest.raises(ValueError, match="label"):
        DPILPClassifier(binarize=0.0).fit(da.from_array(Xf.to_numpy(), chunks=(300, 3)), y + 1)
