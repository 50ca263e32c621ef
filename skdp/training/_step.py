"""The DP-SGD step: one accounted noisy gradient, applied to any ``torch.optim.Optimizer``.

:class:`DPStep` composes a :class:`~skdp.training.PoissonSampler`, a caller's clipped-sum
function, the :class:`~skdp.training.GaussianPrivatizer` and an accountant. It is the one
place where a DP-SGD step is released and accounted in skdp, and :func:`make_dp_step` the
one way to build it (as opacus's ``PrivacyEngine.make_private`` wires the optimizer, the
sampler and the accountant in one place): :class:`DPSGDTrainer` (hence
:func:`train_dpsgd`) and the estimators that need their own per-record gradients
(:class:`~skdp.sampling.DPFlowVI`) all step through a step it built.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import torch

from skdp.accounting import get_accountant
from skdp.training._privatizer import GaussianPrivatizer
from skdp.training._sampler import PoissonSampler
from skdp.utils._torch import torch_generator

__all__ = ["DPStep", "make_dp_step"]

#: ``grad_sum(indices) -> (summed, n_nonfinite)``.
GradSum = Callable[[np.ndarray], tuple[Mapping[str, torch.Tensor], int]]
#: ``hook() -> {name: tensor}``: a term added to ``g_hat`` after the noise.
GradHook = Callable[[], Mapping[str, torch.Tensor]]


class DPStep:
    """One DP-SGD step: Poisson batch, clipped sum, noise once, ``/ B``, accountant, optimizer.

    A step (Abadi et al. 2016, with Poisson sampling as analysed by Mironov, Talwar &
    Zhang 2019):

    1. ``idx = sampler.sample()`` (an empty batch is a legal step);
    2. ``summed, n_bad = grad_sum(idx)``: the caller's sum over the sampled records of
       their per-record gradients, each clipped to ``max_grad_norm`` (use
       :meth:`GaussianPrivatizer.clip_and_sum`, :func:`ghost_clip_and_sum`, ...);
    3. ``g_hat = privatizer.privatize(summed)``: ``N(0, sigma^2 C^2 I)`` added once, divided
       by the expected batch size ``B``;
    4. one accountant step ``(sigma, q)`` (private mode);
    5. the hooks, post-processing terms added to ``g_hat`` as they are (they must not read
       the private records): ``data_free_grad``, the exact gradient of a term that does not
       touch the data (the entropy and prior part of a variational free energy), and
       ``extra_grad``, any other public term (a GAN critic's gradient on fake rows);
    6. :meth:`apply`: ``g_hat`` written to ``.grad``, ``optimizer.step()``, the learning-rate
       scheduler's step.

    Steps 1-5 are :meth:`noisy_gradient`; :meth:`step` is steps 1-6.

    Parameters
    ----------
    params : mapping {name: torch.nn.Parameter}
        The trainable parameters; ``grad_sum`` and the hooks return one tensor per name.
    optimizer : torch.optim.Optimizer
        Any optimizer over (at least) these parameters.
    sampler : PoissonSampler
    privatizer : GaussianPrivatizer
        Its ``expected_batch_size`` must be the sampler's.
    accountant : skdp.accounting.Accountant or None
        Stepped once per released gradient; required when the privatizer is private.
    lr_scheduler : torch.optim.lr_scheduler.LRScheduler, optional
        Stepped after every optimizer step.

    Attributes
    ----------
    n_steps : int
        Released gradients (each :meth:`noisy_gradient` call is one).
    n_nonfinite_grads : int
        Records whose per-record gradient was not finite (replaced by 0). A count over
        private records: diagnostics only, never release it.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from skdp.accounting import get_accountant
    >>> from skdp.training import DPStep, GaussianPrivatizer, PoissonSampler
    >>> from skdp.training import per_sample_gradients
    >>> gen = torch.Generator().manual_seed(0)
    >>> X = torch.randn(100, 2, generator=gen, dtype=torch.float64)
    >>> y = X.sum(1)
    >>> model = torch.nn.Linear(2, 1).double()
    >>> privatizer = GaussianPrivatizer(noise_multiplier=1.0, max_grad_norm=1.0,
    ...                                 expected_batch_size=10.0, generator=gen)
    >>> step = DPStep(dict(model.named_parameters()),
    ...               torch.optim.SGD(model.parameters(), lr=0.1),
    ...               sampler=PoissonSampler(100, 0.1, np.random.default_rng(1)),
    ...               privatizer=privatizer, accountant=get_accountant("rdp"))
    >>> def grad_sum(idx):
    ...     per = per_sample_gradients(model, lambda out, t: (out[0] - t) ** 2, X[idx], y[idx])
    ...     return privatizer.clip_and_sum(per)
    >>> for _ in range(5):
    ...     step.step(grad_sum)
    >>> step.n_steps, step.accountant.n_steps
    (5, 5)
    """

    def __init__(
        self,
        params: Mapping[str, torch.Tensor],
        optimizer: torch.optim.Optimizer,
        *,
        sampler: PoissonSampler,
        privatizer: GaussianPrivatizer,
        accountant=None,
        lr_scheduler=None,
    ):
        self.params = dict(params)
        if not self.params:
            raise ValueError("no trainable parameters")
        if not isinstance(sampler, PoissonSampler):
            raise TypeError("sampler must be a PoissonSampler")
        if not isinstance(privatizer, GaussianPrivatizer):
            raise TypeError("privatizer must be a GaussianPrivatizer")
        if not math.isclose(
            privatizer.expected_batch_size, sampler.expected_batch_size, rel_tol=1e-12
        ):
            raise ValueError("the privatizer must divide by the sampler's expected batch size")
        if privatizer.private and accountant is None:
            raise ValueError("a private step needs an accountant")
        self.sampler = sampler
        self.privatizer = privatizer
        self.accountant = accountant
        self.lr_scheduler = lr_scheduler
        self.optimizer = optimizer
        self.n_steps = 0
        self.n_nonfinite_grads = 0

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """The optimizer the released gradients are applied with (replaceable)."""
        return self._optimizer

    @optimizer.setter
    def optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("optimizer must be a torch.optim.Optimizer")
        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
        if any(id(p) not in held for p in self.params.values()):
            raise ValueError("the optimizer must hold every trainable parameter of the step")
        self._optimizer = optimizer

    @property
    def private(self) -> bool:
        """Whether the step clips, adds noise and steps the accountant."""
        return self.privatizer.private

    # ------------------------------------------------------------------ the step
    def _release(
        self,
        grad_sum: GradSum,
        *,
        data_free_grad: GradHook | None = None,
        extra_grad: GradHook | None = None,
        idx: np.ndarray | None = None,
    ) -> tuple[dict[str, torch.Tensor], int]:
        """``(g_hat, realised batch size)`` without accounting (white-box tests only).

        ``idx`` replaces the Poisson batch, which the accountant's analysis assumes: never
        release a gradient computed from a given ``idx``.
        """
        if idx is None:
            idx = self.sampler.sample()
        summed, n_bad = grad_sum(idx)
        missing = set(self.params) - set(summed)
        if missing or len(summed) != len(self.params):
            raise ValueError("grad_sum must return one tensor per trainable parameter")
        self.n_nonfinite_grads += int(n_bad)
        # fixed (parameter) order: the noise is reproducible whatever grad_sum's order
        g_hat = self.privatizer.privatize({k: summed[k] for k in self.params})
        for hook in (data_free_grad, extra_grad):
            if hook is not None:
                term = hook()
                g_hat = {k: g + term[k] for k, g in g_hat.items()}
        return g_hat, len(idx)

    def noisy_gradient(
        self,
        grad_sum: GradSum,
        *,
        data_free_grad: GradHook | None = None,
        extra_grad: GradHook | None = None,
    ) -> dict[str, torch.Tensor]:
        """Release one privatised gradient ``g_hat`` and account for it (steps 1-5).

        Parameters
        ----------
        grad_sum : callable ``(indices) -> (summed, n_nonfinite)``
            Called once with the Poisson batch's record indices; returns the sum of the
            sampled records' clipped per-record gradients ``{name: tensor}`` and the count
            of non-finite per-record gradients it replaced by 0. In non-private mode the
            plain sum.
        data_free_grad, extra_grad : callable ``() -> {name: tensor}``, optional
            Terms added to ``g_hat`` after the noise, unclipped and un-noised: they must not
            depend on the private records (post-processing).

        Returns
        -------
        g_hat : dict {name: torch.Tensor}
            The realised batch size is private and is not returned.
        """
        g_hat, _ = self._release(grad_sum, data_free_grad=data_free_grad, extra_grad=extra_grad)
        if self.private:
            self.accountant.step(
                noise_multiplier=self.privatizer.noise_multiplier,
                sample_rate=self.sampler.sample_rate,
            )
        self.n_steps += 1
        return g_hat

    def apply(self, g_hat: Mapping[str, torch.Tensor]) -> None:
        """Optimizer step on ``g_hat`` (post-processing), then the scheduler's step."""
        for k, p in self.params.items():
            p.grad = g_hat[k].detach()
        self._optimizer.step()
        self._optimizer.zero_grad(set_to_none=True)
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()

    def step(
        self,
        grad_sum: GradSum,
        *,
        data_free_grad: GradHook | None = None,
        extra_grad: GradHook | None = None,
    ) -> None:
        """:meth:`noisy_gradient` then :meth:`apply`: one full accounted DP-SGD step."""
        self.apply(
            self.noisy_gradient(grad_sum, data_free_grad=data_free_grad, extra_grad=extra_grad)
        )


def make_dp_step(
    params: Mapping[str, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    n_samples: int,
    sample_rate: float,
    noise_multiplier: float,
    max_grad_norm: float | None,
    private: bool,
    accountant,
    sampling_rng: np.random.Generator,
    noise_rng: np.random.Generator,
    device,
    lr_scheduler=None,
) -> DPStep:
    """A :class:`DPStep` wired from plain values: the one way into the DP-SGD engine.

    Poisson sampling of ``n_samples`` records at rate ``sample_rate`` from
    ``sampling_rng``; the Gaussian privatizer (noise ``sigma C`` once on the clipped sum,
    division by the sampler's expected batch size ``q n``) drawing from a
    ``torch.Generator`` on ``device`` seeded from ``noise_rng``; the accountant (a registry
    key, an :class:`~skdp.accounting.Accountant` or ``None``, which only a non-private step
    may have); the optimizer and its learning-rate scheduler.
    """
    sampler = PoissonSampler(n_samples, sample_rate, sampling_rng)
    privatizer = GaussianPrivatizer(
        noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm,
        expected_batch_size=sampler.expected_batch_size,
        generator=torch_generator(noise_rng, device),
        private=private,
    )
    if isinstance(accountant, str):
        accountant = get_accountant(accountant)
    return DPStep(
        params,
        optimizer,
        sampler=sampler,
        privatizer=privatizer,
        accountant=accountant,
        lr_scheduler=lr_scheduler,
    )
