"""Tests of the torch boundary's thread-count helpers (issue 18, threads)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from skdp.utils._torch import (  # noqa: E402
    SMALL_STEP_WORK,
    n_parameters,
    resolve_n_threads,
    torch_threads,
)


def test_resolve_n_threads():
    assert resolve_n_threads(None, step_work=SMALL_STEP_WORK) == 1
    assert resolve_n_threads(None, step_work=SMALL_STEP_WORK + 1) is None
    assert resolve_n_threads(None) is None  # unknown size: leave torch alone
    assert resolve_n_threads(None, step_work=10, device="cpu") == 1
    assert resolve_n_threads(4, step_work=10) == 4
    assert resolve_n_threads(1, step_work=10**12) == 1
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    assert resolve_n_threads(-1) == cpus
    assert resolve_n_threads(-2) == max(1, cpus - 1)
    assert resolve_n_threads(-1000) == 1
    for bad in (0, True, 1.5, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            resolve_n_threads(bad)


def test_resolve_n_threads_leaves_cuda_alone():
    assert resolve_n_threads(None, step_work=10, device=torch.device("cuda")) is None
    assert resolve_n_threads(2, step_work=10, device="cuda") == 2


def test_torch_threads_restores_the_count(three_threads):
    with torch_threads(1) as set_threads:
        assert torch.get_num_threads() == 1
        set_threads(2)
        assert torch.get_num_threads() == 2
        set_threads(None)
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == 3
    with torch_threads() as set_threads:
        assert torch.get_num_threads() == 3
    assert torch.get_num_threads() == 3


def test_torch_threads_restores_the_count_after_an_exception(three_threads):
    with pytest.raises(RuntimeError, match="boom"):
        with torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError("boom")
    assert torch.get_num_threads() == 3
    with pytest.raises(KeyboardInterrupt):
        with torch_threads() as set_threads:
            set_threads(1)
            raise KeyboardInterrupt
    assert torch.get_num_threads() == 3


def test_n_parameters():
    lin = torch.nn.Linear(3, 2)
    assert n_parameters(lin) == 8
    assert n_parameters(lin, None, torch.nn.Linear(2, 1)) == 11
