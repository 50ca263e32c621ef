"""The torch boundary: device and dtype resolution, numpy <-> torch conversion, generators.

This is the only module of layer 0 that imports torch, and the only numpy <-> torch
converter of the library (:doc:`architecture`). It is imported lazily by the layers
that need torch (``training``, ``density``, ...), never by ``import skdp``.

Examples
--------
>>> import numpy as np
>>> from skdp.utils._torch import resolve_device, to_numpy, to_tensor, torch_generator
>>> device = resolve_device("cpu")
>>> t = to_tensor(np.ones((2, 3)), device=device, dtype="float64")
>>> t.dtype, tuple(t.shape)
(torch.float64, (2, 3))
>>> to_numpy(t).sum()
np.float64(6.0)
>>> g = torch_generator(np.random.default_rng(0), device)
>>> isinstance(g.initial_seed(), int)
True
"""

from __future__ import annotations

import numpy as np
import torch

from skdp.utils._random import draw_seed

__all__ = ["resolve_device", "resolve_dtype", "to_tensor", "to_numpy", "torch_generator"]

_DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    torch.float32: torch.float32,
    torch.float64: torch.float64,
    np.float32: torch.float32,
    np.float64: torch.float64,
}


def resolve_device(device="auto") -> torch.device:
    """Turn ``"auto"``, ``"cpu"``, ``"cuda"`` (or ``"cuda:k"``, a ``torch.device``) into a device.

    ``"auto"`` picks CUDA when it is available, else the CPU. Asking for ``"cuda"`` on a
    machine without CUDA raises ``ValueError``.
    """
    if isinstance(device, torch.device):
        dev = device
    elif isinstance(device, str):
        if device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(device)
        except RuntimeError:
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}") from None
    else:
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but CUDA is not available")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
    return dev


def resolve_dtype(dtype="float32") -> torch.dtype:
    """``"float32"`` / ``"float64"`` (or the torch/numpy dtype) -> ``torch.dtype``."""
    try:
        return _DTYPES[dtype]
    except (KeyError, TypeError):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}") from None


def to_tensor(X, *, device="cpu", dtype="float32") -> torch.Tensor:
    """Copy a numpy array (or array-like) to a contiguous tensor on ``device``."""
    dev = resolve_device(device) if not isinstance(device, torch.device) else device
    arr = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    return torch.as_tensor(arr, device=dev).to(resolve_dtype(dtype))


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """Detach ``t``, move it to the CPU and return a float64 numpy array."""
    return t.detach().to(device="cpu", dtype=torch.float64).numpy()


def torch_generator(rng: np.random.Generator, device="cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` seeded with a draw from the numpy stream ``rng``.

    Use one per named stream (:func:`skdp.utils._random.spawn_streams`) so torch
    randomness is reproducible from ``random_state`` and never touches torch's global
    generator.
    """
    dev = resolve_device(device) if not isinstance(device, torch.device) else device
    gen = torch.Generator(device=dev)
    gen.manual_seed(draw_seed(rng))
    return gen
