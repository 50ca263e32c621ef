"""DP AUC / AP on Dask input: a distributed sort gives the same release as in memory."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.metrics import dp_average_precision_score, dp_roc_auc_score  # noqa: E402
from skdp.metrics._rank_counts import block_stats, count_table, fraction_bits  # noqa: E402

from ._guard import no_full_compute  # noqa: E402

METRICS = [dp_roc_auc_score, dp_average_precision_score]


def _data(n=3000, seed=0, decimals=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.normal(size=n) + y
    if decimals is not None:  # many ties, within and across partitions
        s = np.round(s, decimals)
    return y, s


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("ties", ["sklearn", "pessimistic"])
@pytest.mark.parametrize("chunks", [97, 1000, 3000])
@pytest.mark.parametrize("decimals", [None, 1])
def test_bit_identical_release(sync_scheduler, metric, ties, chunks, decimals):
    y, s = _data(decimals=decimals)
    kw = dict(epsilon=1.0, delta=1e-6, random_state=3, ties=ties)
    ref = metric(y, s, **kw)
    exact = metric(y, s, epsilon=math.inf, ties=ties)
    # statistics: 4 integers; the checks: 3 labels; the digest: (rows, two lanes)
    with no_full_compute(max_rows=4):
        got = metric(da.from_array(y, chunks=chunks), da.from_array(s, chunks=chunks), **kw)
        got_exact = metric(
            da.from_array(y, chunks=chunks),
            da.from_array(s, chunks=chunks // 2 + 1),
            epsilon=math.inf,
            ties=ties,
        )
    assert got == ref
    assert got_exact == exact


@pytest.mark.filterwarnings("ignore:Dask currently has limited support:UserWarning")
def test_pure_dp_and_series_inputs(sync_scheduler):
    y, s = _data(n=900, decimals=2)
    labels = np.where(y == 1, "yes", "no")
    for metric in METRICS:
        ref = metric(labels, s, epsilon=0.5, random_state=7, pos_label="yes")
        ys = dd.from_pandas(pd.Series(labels, name="y"), npartitions=4)
        ss = dd.from_pandas(pd.DataFrame({"score": s}), npartitions=4)
        assert metric(ys, ss, epsilon=0.5, random_state=7, pos_label="yes") == ref
        # one input in memory, the other on Dask
        assert (
            metric(
                labels, da.from_array(s, chunks=250), epsilon=0.5, random_state=7, pos_label="yes"
            )
            == ref
        )


def test_single_class_and_tiny(sync_scheduler):
    for y, s in [([1, 1, 1], [0.1, 0.2, 0.3]), ([0], [0.5]), ([0, 1, 0, 1], [0.2] * 4)]:
        y, s = np.asarray(y), np.asarray(s)
        for metric in METRICS:
            for eps in (math.inf, 1.0):
                ref = metric(y, s, epsilon=eps, random_state=0)
                got = metric(
                    da.from_array(y, chunks=2),
                    da.from_array(s, chunks=1),
                    epsilon=eps,
                    random_state=0,
                )
                assert got == ref


def test_block_decomposition_is_exact():
    """Any cut of the score table into blocks, with offsets, gives the same integers."""
    y, s = _data(n=500, decimals=1)
    table = count_table(y == 1, s)
    n, m = int(table[1].sum()), int(table[2].sum())
    bits = fraction_bits(500)
    for ties in ("sklearn", "pessimistic"):
        whole = block_stats(table, (0, 0), (n, m), ties, bits)
        rng = np.random.default_rng(1)
        cuts = np.sort(rng.choice(np.arange(1, table[0].shape[0]), 5, replace=False))
        u = ap = 0
        below = (0, 0)
        for a, b in zip(np.r_[0, cuts], np.r_[cuts, table[0].shape[0]], strict=True):
            part = tuple(t[a:b] for t in table)
            du, dap = block_stats(part, below, (n, m), ties, bits)
            u, ap = u + du, ap + dap
            below = (below[0] + int(part[1].sum()), below[1] + int(part[2].sum()))
        assert (u, ap) == whole


def test_errors_name_the_argument(sync_scheduler):
    y, s = _data(n=200)
    bad = s.copy()
    bad[77] = np.nan
    with pytest.raises(ValueError, match="y_score"):
        dp_roc_auc_score(da.from_array(y, chunks=50), da.from_array(bad, chunks=50), epsilon=1)
    with pytest.raises(ValueError, match="binary"):
        dp_roc_auc_score(da.from_array(y + (s > 1.5), chunks=50), s, epsilon=1.0)
    with pytest.raises(ValueError, match="inconsistent"):
        dp_roc_auc_score(da.from_array(y, chunks=50), s[:-1], epsilon=1.0)
    with pytest.raises(ValueError, match="pos_label"):
        dp_roc_auc_score(da.from_array(np.where(y == 1, "a", "b"), chunks=50), s, epsilon=1.0)


@pytest.mark.slow  # about 10 s with the cluster's start; tests/dask/test_cluster.py is fast
def test_on_cluster(dask_client):
    y, s = _data(n=20_000, decimals=2)
    for metric in METRICS:
        ref = metric(y, s, epsilon=1.0, delta=1e-5, random_state=11)
        got = metric(
            da.from_array(y, chunks=3000),
            da.from_array(s, chunks=3000),
            epsilon=1.0,
            delta=1e-5,
            random_state=11,
        )
        assert got == ref
