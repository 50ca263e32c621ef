"""One pass over the estimators on a real two-worker process cluster (loopback): the
releases equal the in-memory ones bit for bit. The finer checks use the synchronous
scheduler (the other modules); their cluster variants are marked slow."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.linear_model import DPLinearRegression  # noqa: E402
from skdp.metrics import dp_accuracy_score  # noqa: E402
from skdp.synthesis import DPHistogramSynthesizer  # noqa: E402


def test_releases_on_local_cluster_equal_in_memory(dask_client):
    assert len(dask_client.scheduler_info()["workers"]) == 2
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(8000, 3))
    y = X @ np.array([0.5, -0.2, 0.1]) + 0.1 * rng.normal(size=8000)
    kw = dict(bounds_X=(-2, 2), bounds_y=(-3, 3), random_state=1)
    ref = DPLinearRegression(**kw).fit(X, y)
    got = DPLinearRegression(**kw).fit(
        da.from_array(X, chunks=(1000, 3)), da.from_array(y, chunks=3000)
    )
    np.testing.assert_array_equal(
        np.r_[got.coef_, got.intercept_], np.r_[ref.coef_, ref.intercept_]
    )

    labels = (X[:, 0] > 0).astype(int)
    pred = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    ref_acc = dp_accuracy_score(labels, pred, epsilon=1.0, random_state=2)
    got_acc = dp_accuracy_score(
        da.from_array(labels, chunks=1500),
        da.from_array(pred, chunks=2500),
        epsilon=1.0,
        random_state=2,
    )
    assert got_acc == ref_acc

    frame = pd.DataFrame({"x": X[:, 0], "g": np.where(X[:, 1] > 0, "a", "b")})
    hkw = dict(bounds={"x": (-2, 2)}, categories={"g": ["a", "b"]}, random_state=3)
    ref_h = DPHistogramSynthesizer(**hkw).fit(frame)
    got_h = DPHistogramSynthesizer(**hkw).fit(dd.from_pandas(frame, npartitions=5))
    np.testing.assert_array_equal(ref_h.histograms_[0]["counts"], got_h.histograms_[0]["counts"])

    # the default marginal synthesizer (AIM): candidate counts summed on the workers
    from skdp.synthesis import DPMarginalSynthesizer

    frame["z"] = np.round(X[:, 2] * 2).astype(int)
    mkw = dict(hkw, bounds={"x": (-2, 2), "z": (-4, 4)}, n_bins=6)
    ref_m = DPMarginalSynthesizer(**mkw).fit(frame)
    got_m = DPMarginalSynthesizer(**mkw).fit(dd.from_pandas(frame, npartitions=4))
    assert got_m.selection_ == ref_m.selection_ == "aim"
    assert got_m.cliques_ == ref_m.cliques_
    for key, ys in ref_m.noisy_marginals_.items():
        for a, b in zip(ys, got_m.noisy_marginals_[key], strict=True):
            np.testing.assert_array_equal(a, b)
