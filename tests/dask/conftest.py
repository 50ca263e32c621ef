"""Dask fixtures: a two-worker LocalCluster on loopback (processes), shared by the module
tests that need one, and the synchronous scheduler for the fast bit-identity checks."""

from __future__ import annotations

import pytest

dask = pytest.importorskip("dask")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture
def sync_scheduler():
    """Dask's single-threaded scheduler (no cluster) for the duration of a test."""
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="session")
def dask_client():
    """A ``distributed.Client`` on a two-worker, one-thread-each local process cluster."""
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "20s"}),
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            host="127.0.0.1",
            # loopback and a free port: ``None`` still starts the dashboard on :8787
            dashboard_address="127.0.0.1:0",
            memory_limit="1GiB",
        ) as cluster,
        distributed.Client(cluster, timeout="30s") as client,
    ):
        yield client
