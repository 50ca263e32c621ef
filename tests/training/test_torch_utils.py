"""Tests of skdp.utils._torch (the numpy <-> torch boundary)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skdp.utils._torch import resolve_device, resolve_dtype, to_numpy, to_tensor, torch_generator


def test_resolve_device():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError):
        resolve_device("tpu")
    with pytest.raises(ValueError):
        resolve_device(3)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            resolve_device("cuda")


def test_resolve_device_refuses_a_cuda_index_beyond_the_visible_devices(monkeypatch):
    # seen on a one-GPU machine: device="cuda:1" passed and torch raised IndexError later
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda:0")
    assert resolve_device("cuda") == torch.device("cuda")
    with pytest.raises(ValueError, match="cuda:1.*only 1 CUDA device"):
        resolve_device("cuda:1")
    with pytest.raises(ValueError, match="cuda:3"):
        resolve_device(torch.device("cuda:3"))


def test_resolve_dtype():
    assert resolve_dtype("float32") is torch.float32
    assert resolve_dtype("float64") is torch.float64
    with pytest.raises(ValueError):
        resolve_dtype("float16")


def test_round_trip():
    X = np.arange(6.0).reshape(2, 3)
    t = to_tensor(X, device="cpu", dtype="float64")
    assert t.dtype == torch.float64
    np.testing.assert_array_equal(to_numpy(t), X)
    assert to_tensor(X, dtype="float32").dtype == torch.float32


def test_generator_is_reproducible_from_the_numpy_stream():
    a = torch_generator(np.random.default_rng(1))
    b = torch_generator(np.random.default_rng(1))
    c = torch_generator(np.random.default_rng(2))
    ra, rb, rc = (torch.randn(5, generator=g) for g in (a, b, c))
    assert torch.equal(ra, rb)
    assert not torch.equal(ra, rc)
