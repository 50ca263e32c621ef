"""The torch fit scaffold: one context around the training part of every torch ``fit``.

In the spirit of scikit-learn's ``_fit_context``, :func:`torch_fit` does, once for every
torch estimator (:class:`~skdp.density.DPFlowDensity`, :class:`~skdp.sampling.DPFlowVI`,
:class:`~skdp.synthesis.DPGANSynthesizer`), what each ``fit`` wrote out for itself:

* resolves the estimator's ``device`` and ``dtype``;
* forks torch's global random state (``torch.random.fork_rng``, on the CUDA device in
  use), so a fit leaves the caller's stream as it found it; a fit that initialises its
  modules through torch's global generator seeds it from one of its own named streams;
* scopes torch's intra-op thread count (``n_jobs``, set once the step size is known,
  :func:`skdp.utils._torch.resolve_n_threads`) and restores it on exit, also when the
  fit raises;
* attaches the progress handler while ``verbose > 0``
  (:func:`skdp.utils._logging.verbose_handler`).

It yields a :class:`TorchFit` whose helpers put tensors, modules and generators on that
device and dtype; :func:`freeze` ends the fit on the released modules, and
:func:`record_dpsgd_fit` is the one place that writes the fitted DP-SGD facts and the
privacy spend of such a fit.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

from skdp.utils._logging import verbose_handler
from skdp.utils._torch import (
    resolve_device,
    resolve_dtype,
    resolve_n_threads,
    to_tensor,
    torch_generator,
    torch_threads,
)

__all__ = [
    "TorchFit",
    "check_noise_multiplier",
    "finite_parameters",
    "freeze",
    "record_dpsgd_fit",
    "torch_fit",
]

#: Bound of the seed drawn for torch's global generator (``seed=`` of :func:`torch_fit`).
_GLOBAL_SEED_BOUND = 2**62


@dataclass
class TorchFit:
    """What one torch ``fit`` runs on (yielded by :func:`torch_fit`).

    Attributes
    ----------
    device : torch.device
    dtype : torch.dtype
    streams : mapping {name: numpy.random.Generator}
        The fit's named random streams.
    n_jobs : int or None
        The estimator's ``n_jobs``.
    """

    device: torch.device
    dtype: torch.dtype
    streams: Mapping[str, np.random.Generator]
    n_jobs: int | None
    _set_threads: object = field(repr=False)

    def set_threads(self, step_work: int) -> None:
        """Torch's thread count for steps of ``step_work`` (expected batch size times the
        per-record work): ``n_jobs``, or one thread for a small CPU step
        (:func:`skdp.utils._torch.resolve_n_threads`); restored when the fit ends."""
        n = resolve_n_threads(self.n_jobs, step_work=step_work, device=self.device)
        self._set_threads(n)

    def generator(self, name: str, device=None) -> torch.Generator:
        """A ``torch.Generator`` seeded from the stream ``name`` (on the fit's device, or
        ``device``): every torch draw of a fit comes from one of its named streams."""
        return torch_generator(self.streams[name], self.device if device is None else device)

    def tensor(self, X) -> torch.Tensor:
        """``X`` as a tensor on the fit's device and dtype."""
        return to_tensor(X, device=self.device, dtype=self.dtype)

    def to(self, module: torch.nn.Module) -> torch.nn.Module:
        """``module`` moved to the fit's device and dtype."""
        return module.to(device=self.device, dtype=self.dtype)


def _setting(settings, name):
    if isinstance(settings, Mapping):
        return settings[name]
    return getattr(settings, name)


@contextlib.contextmanager
def torch_fit(settings, streams: Mapping, *, seed: str | None = None) -> Iterator[TorchFit]:
    """The context of the training part of a torch ``fit``.

    Parameters
    ----------
    settings : estimator or mapping
        Where ``device``, ``dtype``, ``n_jobs`` and ``verbose`` are read: the estimator, or
        its ``get_params()`` (plain values, for code that never sees the estimator).
    streams : mapping {name: numpy.random.Generator}
        The fit's named streams (:func:`skdp.utils._random.fit_streams`).
    seed : str or None, default=None
        The stream whose draw seeds torch's global generator inside the fork, for a fit
        that initialises its modules through it; ``None``: the global generator is not
        seeded (the fit draws only from generators of its streams, :meth:`TorchFit.generator`).

    Yields
    ------
    TorchFit

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from skdp.training._fit_context import torch_fit
    >>> settings = {"device": "cpu", "dtype": "float64", "n_jobs": 1, "verbose": 0}
    >>> before = torch.get_num_threads()
    >>> with torch_fit(settings, {"init": np.random.default_rng(0)}) as env:
    ...     env.set_threads(10)
    ...     w = torch.randn(2, generator=env.generator("init"), dtype=env.dtype)
    ...     inside = torch.get_num_threads()
    >>> inside, w.dtype, torch.get_num_threads() == before
    (1, torch.float64, True)
    """
    device = resolve_device(_setting(settings, "device"))
    dtype = resolve_dtype(_setting(settings, "dtype"))
    devices = [device.index or 0] if device.type == "cuda" else []
    with (
        torch.random.fork_rng(devices=devices),
        torch_threads() as set_threads,
        verbose_handler(_setting(settings, "verbose")),
    ):
        if seed is not None:
            torch.manual_seed(int(streams[seed].integers(0, _GLOBAL_SEED_BOUND)))
        yield TorchFit(device, dtype, streams, _setting(settings, "n_jobs"), set_threads)


def freeze(*modules, diverged: str | None = None) -> None:
    """The released modules in ``eval`` mode with their parameters frozen (``None`` skipped).

    ``diverged``: the message of the ``ValueError`` raised when a parameter is not finite
    (refusing a diverged release is post-processing: it reads the released parameters only).
    """
    for module in modules:
        if module is None:
            continue
        module.eval()
        for p in module.parameters():
            p.requires_grad_(False)
        if diverged is not None and not finite_parameters(module):
            raise ValueError(diverged)


def finite_parameters(module: torch.nn.Module) -> bool:
    """Whether every parameter of ``module`` is finite (refusing a diverged release is
    post-processing: it reads the released parameters only)."""
    return all(bool(torch.isfinite(p).all()) for p in module.parameters())


def check_noise_multiplier(epsilon: float, noise_multiplier) -> None:
    """``ValueError`` for a noise multiplier given to a non-private fit (``epsilon=inf``)."""
    if math.isinf(epsilon) and noise_multiplier is not None and noise_multiplier > 0:
        raise ValueError("noise_multiplier must be None when epsilon=inf (no privacy)")


def record_dpsgd_fit(
    estimator,
    *,
    noise_multiplier: float,
    sample_rate: float,
    n_iter: int,
    history: dict,
    device,
    breakdown: Mapping[str, float],
    delta: float,
    guarantee: str,
    private: bool,
    loss_curve=(),
    loss_reads_data: bool = True,
) -> None:
    """Write the fitted facts of a fit's DP-SGD steps and its privacy spend on ``estimator``.

    ``noise_multiplier_`` (0 for a non-private fit), ``sample_rate_``, ``n_iter_`` (the
    executed, accounted steps), ``history_`` (as given: the logged steps and the epsilon
    spent so far, no quantity of the data), ``loss_curve_`` and ``device_``; then
    ``privacy_breakdown_`` (``breakdown``: the epsilon of each part of the fit, DP-SGD
    among them) and ``epsilon_spent_`` (their sum), ``delta_spent_`` (``delta``, 0 for a
    non-private fit) and ``privacy_guarantee_`` (``DPEstimatorMixin._record_privacy_spent``).

    A loss that reads the training data is an un-noised statistic of it: a private fit
    stores an empty ``loss_curve_`` whatever it is given. ``loss_reads_data=False`` marks
    a loss of public rows only (a GAN critic's loss on fake rows), which is kept.
    """
    if private and loss_reads_data:
        loss_curve = ()
    estimator.noise_multiplier_ = float(noise_multiplier)
    estimator.sample_rate_ = float(sample_rate)
    estimator.n_iter_ = int(n_iter)
    estimator.history_ = history
    estimator.loss_curve_ = np.asarray(loss_curve, dtype=float)
    estimator.device_ = str(device)
    estimator._record_privacy_spent(
        sum(breakdown.values()),
        delta if private else 0.0,
        guarantee=guarantee if private else "exact",
        breakdown=breakdown,
    )
