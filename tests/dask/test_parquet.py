"""Dask DataFrames read from Parquet: a column subset whose partitions dask-expr fuses
when the graph is lowered (FusedParquetIO) still gives the in-memory release."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

from skdp.linear_model import DPLinearRegression  # noqa: E402
from skdp.metrics import dp_roc_auc_score  # noqa: E402


@pytest.mark.slow  # writes 2 x 10^6 x 21 values (about 5 s)
def test_fused_parquet_column_subset(sync_scheduler, tmp_path):
    # 4 files of 84 MB uncompressed; reading 3 of the 21 columns fuses them in pairs
    X = da.random.default_rng(0).uniform(-1, 1, size=(2_000_000, 21), chunks=(500_000, 21))
    cols = [f"x{j}" for j in range(21)]
    dd.from_dask_array(X, columns=cols).to_parquet(tmp_path, write_index=False)
    frame = dd.read_parquet(tmp_path)
    kw = dict(bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    got = DPLinearRegression(**kw).fit(frame[["x0", "x1", "x2"]], frame["x20"])
    mem = frame.compute()
    ref = DPLinearRegression(**kw).fit(mem[["x0", "x1", "x2"]].to_numpy(), mem["x20"].to_numpy())
    np.testing.assert_array_equal(got.coef_, ref.coef_)
    y = (mem["x0"].to_numpy() > 0).astype(int)
    assert dp_roc_auc_score(y, frame["x1"], epsilon=1.0, random_state=1) == dp_roc_auc_score(
        y, mem["x1"].to_numpy(), epsilon=1.0, random_state=1
    )
