"""SubsampledExpMedian on Dask input: the candidate costs are exact fixed-point sums per
partition, so the release equals the in-memory one bit for bit, for every chunking, and
the client receives only the cost vectors."""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.cluster import SubsampledExpMedian  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


@contextlib.contextmanager
def _nothing_computed():
    """Inside: any computation of a Dask graph on the client raises."""

    def refuse(*args, **kwargs):
        raise AssertionError("something was computed")

    with (
        mock.patch.object(dask, "compute", refuse),
        mock.patch.object(da.Array, "compute", refuse),
        mock.patch.object(da.Array, "__array__", refuse, create=True),
    ):
        yield


def _blobs(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.2, 0.25], [0.75, 0.7], [0.3, 0.8]])
    X = centres[rng.integers(3, size=n)] + rng.normal(0, 0.07, (n, 2))
    return np.clip(X, 0, 1)


def _release(est):
    return (
        est.cluster_centers_.tobytes(),
        None if est.center_indices_ is None else est.center_indices_.tolist(),
        est.n_candidates_,
        est.round_sensitivities_.tolist(),
    )


V = np.random.default_rng(1).uniform(0, 1, size=(40, 2))
CASES = {
    "box": dict(n_clusters=3, bounds=(0, 1), n_candidates=64, n_rounds=4, epsilon=2.0),
    "box-one-round": dict(n_clusters=3, bounds=(0, 1), n_rounds=1, n_candidates=64),
    "uniform": dict(n_clusters=3, candidates=V, epsilon=2.0),
    "kmeans++": dict(n_clusters=2, candidates=V, base="kmeans++", metric="manhattan"),
    "enumerate": dict(n_clusters=2, candidates=V[:12], n_candidates=None, epsilon=5.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bit_identical_release_across_chunkings(sync_scheduler, case):
    X = _blobs()
    kw = dict(CASES[case], random_state=3, chunk_size=20011)
    ref = SubsampledExpMedian(**kw).fit(X)
    frame = pd.DataFrame(X, columns=["a", "b"])
    inputs = [
        da.from_array(X, chunks=(5000, 2)),
        da.from_array(X, chunks=(313, 1)),  # row and column chunks
        dd.from_pandas(frame, npartitions=7),
    ]
    for Xd in inputs:
        # the statistic: one cost per candidate set, at most C(25, 3) = 2300 (round 1 of
        # the box search), fewer than the 5000 rows
        with no_full_compute(max_rows=2300):
            got = SubsampledExpMedian(**kw).fit(Xd)
        assert _release(got) == _release(ref)
    assert list(got.feature_names_in_) == ["a", "b"]
    # a permuted copy of the rows is the same multiset: the same seeded release
    perm = np.random.default_rng(0).permutation(len(X))
    assert _release(SubsampledExpMedian(**kw).fit(X[perm])) == _release(ref)


def test_predict_score_and_errors(sync_scheduler):
    X = _blobs(600, 2)
    Xd = da.from_array(X, chunks=(150, 2))
    est = SubsampledExpMedian(n_clusters=3, bounds=(0, 1), random_state=0).fit(Xd)
    with _nothing_computed():
        labels = est.predict(Xd)  # lazy
    assert isinstance(labels, da.Array) and labels.shape == (600,)
    np.testing.assert_array_equal(labels.compute(), est.predict(X))
    with no_full_compute(max_rows=1):  # the cost is summed on the workers
        score = est.score(Xd)
    assert score == pytest.approx(est.score(X), rel=1e-12)
    # public metadata must be declared: refused before any pass over the data
    with _nothing_computed(), pytest.raises(ValueError, match="public metadata"):
        SubsampledExpMedian().fit(Xd)
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SubsampledExpMedian(bounds=(0, 1), n_rounds=1).fit(da.from_array(bad, chunks=(100, 2)))
    with pytest.raises(TypeError, match="numeric"):
        SubsampledExpMedian(bounds=(0, 1)).fit(
            dd.from_pandas(pd.DataFrame({"a": ["x", "y"] * 10}), npartitions=2)
        )
    with pytest.raises(ValueError, match="at most the number of samples"):
        SubsampledExpMedian(n_clusters=3, bounds=(0, 1)).fit(da.from_array(X[:2], chunks=1))


def test_score_refuses_nan_in_one_partition_and_an_overflowing_cost(sync_scheduler):
    """Issue 30: a NaN in one partition gave a NaN score (numpy input raises), and a
    1e308 row gave -inf."""
    X = _blobs(400, 2)
    est = SubsampledExpMedian(n_clusters=2, bounds=(0, 1), random_state=0).fit(X)
    nan, big = X.copy(), X.copy()
    nan[390, 0] = np.nan  # in the last of four partitions only
    big[5, 1] = 1e308
    for arr in (da.from_array(nan, chunks=(100, 2)), dd.from_array(nan, chunksize=100)):
        with pytest.raises(ValueError, match="NaN"):
            est.score(arr)
    with pytest.raises(ValueError, match="NaN"):
        est.score(nan)
    for arr in (big, da.from_array(big, chunks=(100, 2))):
        with pytest.raises(ValueError, match="overflows"):
            est.score(arr)


@pytest.mark.slow  # tests/dask/test_cluster.py covers the cluster by default
def test_release_on_local_cluster_equals_in_memory(dask_client):
    X = _blobs(2000, 4)
    kw = dict(n_clusters=3, bounds=(0, 1), n_candidates=64, random_state=5)
    ref = SubsampledExpMedian(**kw).fit(X)
    got = SubsampledExpMedian(**kw).fit(dd.from_pandas(pd.DataFrame(X), npartitions=4))
    assert _release(got) == _release(ref)
