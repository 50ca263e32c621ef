"""DPHistogramSynthesizer and DPMarginalSynthesizer on Dask DataFrames/arrays: the same
released counts and samples as in memory, schema from dtypes only, rows never collected."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer  # noqa: E402

from ._guard import no_full_compute  # noqa: E402

KW = dict(
    bounds={"age": (20, 80), "visits": (0, 4)},
    categories={"sex": ["f", "m"], "site": ["x", "y", "z"]},
    epsilon=1.0,
    random_state=0,
)


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.uniform(20, 80, n),
            "sex": rng.choice(["f", "m"], n),
            "visits": rng.integers(0, 5, n),
            "site": rng.choice(["x", "y", "z"], n),
        }
    )


def _same_samples(a, b):
    sa, sb = a.sample(60, random_state=1), b.sample(60, random_state=1)
    assert list(sa.columns) == list(sb.columns)
    np.testing.assert_array_equal(sa.astype(object).to_numpy(), sb.astype(object).to_numpy())


@pytest.mark.parametrize("npartitions", [1, 3, 7])
@pytest.mark.parametrize("mechanism", ["geometric", "laplace"])
def test_histogram_dask_dataframe_bit_identical(sync_scheduler, npartitions, mechanism):
    df = _table()
    ref = DPHistogramSynthesizer(mechanism=mechanism, **KW).fit(df)
    with no_full_compute(max_rows=ref.n_bins_["age"] * 2 * 5 * 3):
        got = DPHistogramSynthesizer(mechanism=mechanism, **KW).fit(
            dd.from_pandas(df, npartitions=npartitions)
        )
    for h, g in zip(ref.histograms_, got.histograms_, strict=True):
        np.testing.assert_array_equal(h["cells"], g["cells"])
        np.testing.assert_array_equal(h["counts"], g["counts"])
    _same_samples(ref, got)


def test_histogram_sparse_path_and_projections(sync_scheduler):
    df = _table(n=1500, seed=2)
    kw = dict(KW, projections=[["age", "sex"], ["visits", "site"]], max_cells=4)
    ref = DPHistogramSynthesizer(**kw).fit(df)
    got = DPHistogramSynthesizer(**kw).fit(dd.from_pandas(df, npartitions=5))
    assert ref.histograms_[0]["sparse"]
    for h, g in zip(ref.histograms_, got.histograms_, strict=True):
        np.testing.assert_array_equal(h["cells"], g["cells"])
        np.testing.assert_array_equal(h["counts"], g["counts"])


def test_histogram_dask_array(sync_scheduler):
    X = np.random.default_rng(3).uniform(0, 1, size=(1000, 2))
    kw = dict(bounds=(0.0, 1.0), random_state=5)
    ref = DPHistogramSynthesizer(**kw).fit(X)
    got = DPHistogramSynthesizer(**kw).fit(da.from_array(X, chunks=(300, 1)))
    np.testing.assert_array_equal(ref.histograms_[0]["counts"], got.histograms_[0]["counts"])
    np.testing.assert_array_equal(ref.sample(20, random_state=0), got.sample(20, random_state=0))


@pytest.mark.parametrize("npartitions", [1, 4])
@pytest.mark.parametrize("delta", [0.0, 1e-6])  # pure (Laplace) and zCDP (Gaussian) noise
def test_marginal_dask_dataframe_bit_identical(sync_scheduler, npartitions, delta):
    df = _table(seed=1)
    kw = dict(KW, delta=delta, selection="mst")
    ref = DPMarginalSynthesizer(**kw).fit(df)
    with no_full_compute(max_rows=4 * 64 * 64):
        got = DPMarginalSynthesizer(**kw).fit(dd.from_pandas(df, npartitions=npartitions))
    assert got.tree_ == ref.tree_
    for c in ref.noisy_one_way_:
        np.testing.assert_array_equal(ref.noisy_one_way_[c], got.noisy_one_way_[c])
    for e in ref.noisy_two_way_:
        np.testing.assert_array_equal(ref.noisy_two_way_[e], got.noisy_two_way_[e])
    _same_samples(ref, got)


@pytest.mark.parametrize("npartitions", [1, 4])
@pytest.mark.parametrize("delta", [0.0, 1e-6])  # pure (Laplace) and zCDP (Gaussian) noise
def test_aim_dask_dataframe_bit_identical(sync_scheduler, npartitions, delta):
    # the default on Dask input is AIM too: the candidates' counts are summed on the
    # workers in one pass, and the release equals the in-memory one
    df = _table(n=600, seed=2)
    kw = dict(KW, delta=delta)
    ref = DPMarginalSynthesizer(**kw).fit(df)
    with no_full_compute(max_rows=4 * 64 * 64):
        got = DPMarginalSynthesizer(**kw).fit(dd.from_pandas(df, npartitions=npartitions))
    assert (ref.selection_, got.selection_) == ("aim", "aim")
    assert got.cliques_ == ref.cliques_ and got.rounds_ == ref.rounds_
    for c in ref.noisy_one_way_:
        np.testing.assert_array_equal(ref.noisy_one_way_[c], got.noisy_one_way_[c])
    assert got.noisy_marginals_.keys() == ref.noisy_marginals_.keys()
    for key, ys in ref.noisy_marginals_.items():
        for a, b in zip(ys, got.noisy_marginals_[key], strict=True):
            np.testing.assert_array_equal(a, b)
    _same_samples(ref, got)


def test_aim_dask_array(sync_scheduler):
    X = np.random.default_rng(3).uniform(0, 1, size=(800, 3))
    kw = dict(bounds=(0.0, 1.0), n_bins=6, random_state=5)
    ref = DPMarginalSynthesizer(**kw).fit(X)
    got = DPMarginalSynthesizer(**kw).fit(da.from_array(X, chunks=(300, 3)))
    assert got.selection_ == "aim" and got.cliques_ == ref.cliques_
    np.testing.assert_array_equal(ref.sample(20, random_state=0), got.sample(20, random_state=0))


def test_dask_needs_declared_metadata(sync_scheduler):
    ddf = dd.from_pandas(_table(n=100), npartitions=2)
    with pytest.raises(ValueError, match="bounds of column.*Dask input needs declared bounds"):
        DPHistogramSynthesizer(categories=KW["categories"]).fit(ddf)
    with pytest.raises(ValueError, match='categories="data" is not supported for Dask'):
        DPMarginalSynthesizer(bounds=KW["bounds"], categories="data").fit(ddf)
    with pytest.raises(ValueError, match="no declared categories"):
        DPMarginalSynthesizer(bounds=KW["bounds"]).fit(ddf)


def test_dask_bad_category_raises_from_the_partition(sync_scheduler):
    df = _table(n=200)
    df.loc[150, "site"] = "w"
    with pytest.raises(ValueError, match="site"):
        DPHistogramSynthesizer(**KW).fit(dd.from_pandas(df, npartitions=3))


@pytest.mark.slow  # tests/dask/test_cluster.py covers the cluster by default
def test_synthesizers_on_local_cluster(dask_client):
    df = _table(n=6000, seed=4)
    ddf = dd.from_pandas(df, npartitions=6)
    ref = DPHistogramSynthesizer(**KW).fit(df)
    got = DPHistogramSynthesizer(**KW).fit(ddf)
    np.testing.assert_array_equal(ref.histograms_[0]["counts"], got.histograms_[0]["counts"])
    ref = DPMarginalSynthesizer(selection="mst", **KW).fit(df)
    got = DPMarginalSynthesizer(selection="mst", **KW).fit(ddf)
    for e in ref.noisy_two_way_:
        np.testing.assert_array_equal(ref.noisy_two_way_[e], got.noisy_two_way_[e])


def test_aim_dask_counts_in_several_passes(sync_scheduler, monkeypatch):
    # the candidates' counts come in groups of bounded cells (worker memory); the release
    # does not depend on the grouping
    import skdp.synthesis._marginal_counts as M

    df = _table(n=500, seed=6)
    ref = DPMarginalSynthesizer(**KW).fit(df)
    passes = []
    real = M.row_sum

    def counting(func, *a, **k):
        passes.append(len(getattr(func, "keywords", {}).get("cands", ())))
        return real(func, *a, **k)

    monkeypatch.setattr(M, "row_sum", counting)
    monkeypatch.setattr(M, "_DASK_PASS_CELLS", 40)
    got = DPMarginalSynthesizer(**KW).fit(dd.from_pandas(df, npartitions=3))
    assert sum(p > 0 for p in passes) > 2  # the candidates were split over passes
    assert got.cliques_ == ref.cliques_
    for key, ys in ref.noisy_marginals_.items():
        for a, b in zip(ys, got.noisy_marginals_[key], strict=True):
            np.testing.assert_array_equal(a, b)
    assert M._cell_groups([(0, 1), (1, 2), (0, 1, 2)], [4, 5, 3], 25) == [
        [(0, 1)],
        [(1, 2)],
        [(0, 1, 2)],
    ]
    assert M._cell_groups([(0, 1), (1, 2)], [2, 2, 2], 8) == [[(0, 1), (1, 2)]]
