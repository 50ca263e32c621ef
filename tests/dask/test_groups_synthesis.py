"""DPHistogramSynthesizer and DPMarginalSynthesizer with groups on Dask input: the rows
encoded and each patient bounded to k rows on the workers, only counts (and one row
count per partition) collected on the client."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer  # noqa: E402

from ._guard import no_full_compute  # noqa: E402

META = {
    "bounds": {"a": (0, 4), "c": (0.0, 1.0)},
    "column_types": {"a": "integer"},
    "categories": {"b": ["x", "y"]},
}


def _table(n_patients=1000, rows=3, seed=0):
    rng = np.random.default_rng(seed)
    n = n_patients * rows
    X = pd.DataFrame(
        {"a": rng.integers(0, 5, n), "b": rng.choice(["x", "y"], n), "c": rng.uniform(0, 1, n)}
    )
    groups = np.repeat(np.arange(n_patients), rows)
    rng.shuffle(groups)
    return X, groups


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPHistogramSynthesizer(epsilon=1.0, max_rows_per_group=2, random_state=0, **META),
        lambda: DPMarginalSynthesizer(
            epsilon=1.0, selection="mst", max_rows_per_group=2, random_state=0, **META
        ),
        lambda: DPMarginalSynthesizer(
            epsilon=1.0, selection="aim", max_rows_per_group=2, random_state=0, **META
        ),
    ],
    ids=["histogram", "mst", "aim"],
)
def test_rows_never_reach_the_client(sync_scheduler, make):
    X, groups = _table()
    dx = dd.from_pandas(X, npartitions=4)
    dg = da.from_array(groups, chunks=len(X) // 4)
    with no_full_compute(max_rows=500):  # counts of at most a few hundred cells
        est = make().fit(dx, groups=dg)
    assert est.privacy_unit_ == "group" and est.epsilon_spent_ == 1.0
