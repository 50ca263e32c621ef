"""The torch boundary: device and dtype resolution, numpy <-> torch conversion, generators,
thread counts.

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

import contextlib
import os
from collections.abc import Iterator
from numbers import Integral

import numpy as np
import torch

from skdp.utils._data_free import as_float_array
from skdp.utils._random import draw_seed

__all__ = [
    "resolve_device",
    "resolve_dtype",
    "to_tensor",
    "to_numpy",
    "torch_generator",
    "resolve_n_threads",
    "torch_threads",
    "n_parameters",
    "zero_linear",
    "logistic_record_loss",
]

#: ``n_jobs=None`` runs a CPU fit on one thread when ``batch_size * n_parameters`` (the
#: size of the per-sample gradients of one step) is at most this: such steps are many tiny
#: ops, where an OpenMP pool costs more than it saves and collapses on a shared machine
SMALL_STEP_WORK = 2**24

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
    machine without CUDA, or for ``"cuda:k"`` beyond the visible devices, raises
    ``ValueError``.
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
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        # torch itself fails later with an IndexError from deep inside its device table
        raise ValueError(
            f"device={str(dev)!r} was requested but only {torch.cuda.device_count()} CUDA "
            "device(s) are visible"
        )
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
    return dev


def resolve_dtype(dtype="float32") -> torch.dtype:
    """``"float32"`` / ``"float64"`` (or the torch/numpy dtype) -> ``torch.dtype``."""
    try:
        return _DTYPES[dtype]
    except (KeyError, TypeError):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}") from None


def to_tensor(X, *, device="cpu", dtype="float32", name="X") -> torch.Tensor:
    """Copy a numpy array (or array-like) to a contiguous tensor on ``device``.

    A value that is not a number (a string cell, e.g. a categorical column) raises a
    ``ValueError`` naming ``name`` and the column, never the value
    (:func:`skdp.utils.validation.as_float_array`).
    """
    dev = resolve_device(device) if not isinstance(device, torch.device) else device
    arr = np.ascontiguousarray(as_float_array(X, name=name))
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


def _n_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def resolve_n_threads(n_jobs=None, *, step_work=None, device="cpu") -> int | None:
    """Torch intra-op thread count for one fit, or ``None`` to leave torch's setting.

    Parameters
    ----------
    n_jobs : None or int
        ``None``: one thread for a small model on the CPU (``step_work`` at most
        :data:`SMALL_STEP_WORK`), else leave the current setting (torch's default, or
        what the user set with :func:`torch.set_num_threads`). A positive int: that many
        threads. A negative int counts back from the CPUs available to the process, as
        in scikit-learn: ``-1`` all of them, ``-2`` all but one.
    step_work : int or None
        ``batch_size * n_parameters`` of one training step (``None``: unknown, never
        small).
    device : torch.device or str
        On CUDA, ``n_jobs=None`` leaves the setting alone (the CPU only feeds the GPU).

    Returns
    -------
    int or None
    """
    if n_jobs is None:
        dev = torch.device(device) if not isinstance(device, torch.device) else device
        if dev.type == "cpu" and step_work is not None and step_work <= SMALL_STEP_WORK:
            return 1
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero int, got {n_jobs!r}")
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, _n_cpus() + 1 + int(n_jobs))


@contextlib.contextmanager
def torch_threads(n_threads=None) -> Iterator:
    """Scope for torch's intra-op thread count: whatever is set inside is undone on exit.

    Sets ``torch.set_num_threads(n_threads)`` on entry (``None``: no change) and yields a
    function ``set_threads(n)`` that changes it again inside the block (for a count that
    depends on a model built inside it; ``None``: no change). On exit -- normal or by an
    exception -- the count in effect before the block is restored in a ``finally``
    clause, so a fit never leaks a changed global.

    Examples
    --------
    >>> import torch
    >>> from skdp.utils._torch import torch_threads
    >>> before = torch.get_num_threads()
    >>> with torch_threads(1) as set_threads:
    ...     inside = torch.get_num_threads()
    >>> inside, torch.get_num_threads() == before
    (1, True)
    """
    old = torch.get_num_threads()

    def set_threads(n):
        if n is not None and int(n) != torch.get_num_threads():
            torch.set_num_threads(int(n))

    try:
        set_threads(n_threads)
        yield set_threads
    finally:
        if torch.get_num_threads() != old:
            torch.set_num_threads(old)


def n_parameters(*modules) -> int:
    """Total number of parameters of torch modules (``None`` entries count 0)."""
    return sum(p.numel() for m in modules if m is not None for p in m.parameters())


def zero_linear(n_features, *, dtype="float64") -> torch.nn.Module:
    """A bias-free linear map ``R^n_features -> R`` with zero weights (a linear logit).

    Used by :class:`skdp.linear_model.DPLogisticRegression` (``mechanism="dpsgd"``),
    whose package imports no torch itself; the intercept is a constant input column.

    Examples
    --------
    >>> from skdp.utils._torch import zero_linear
    >>> float(zero_linear(3).weight.abs().sum())
    0.0
    """
    module = torch.nn.Linear(int(n_features), 1, bias=False).to(resolve_dtype(dtype))
    with torch.no_grad():
        module.weight.zero_()
    return module


def logistic_record_loss(out, target):
    """Logistic loss of one record: logit ``out`` (one element), label ``target`` in {0, 1}.

    Examples
    --------
    >>> import torch
    >>> from skdp.utils._torch import logistic_record_loss
    >>> round(float(logistic_record_loss(torch.zeros(1), torch.ones(()))), 4)
    0.6931
    """
    return torch.nn.functional.binary_cross_entropy_with_logits(out.reshape(()), target.reshape(()))
