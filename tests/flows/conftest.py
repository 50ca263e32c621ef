"""Shared helpers for the flow tests (float64, CPU, seeded)."""

from __future__ import annotations

import pytest
import torch

from skdp.flows import make_flow


def build(kind: str, d: int, *, seed: int = 0, dtype=torch.float64, **kwargs):
    """A small randomly initialised flow of the given kind, in ``dtype``."""
    g = torch.Generator().manual_seed(seed)
    kwargs.setdefault("n_layers", 2)
    kwargs.setdefault("hidden_features", (max(8, d),))
    return make_flow(kind, d, generator=g, **kwargs).to(dtype)


@pytest.fixture
def tgen():
    """A seeded torch Generator."""
    return torch.Generator().manual_seed(1234)


@pytest.fixture(autouse=True)
def _single_torch_thread(one_torch_thread):
    """Tiny tensors: one intra-op thread is faster and avoids oversubscribing a shared CPU."""
