"""One :class:`~skdp.sampling.DPFlowVI` fit: its public plan, then its training.

:func:`plan_vi_fit` computes every public quantity of a fit from the parameters and ``n``
before any record is read: the sampling rate, the step count, the noise multiplier
calibrated to the budget, the Monte Carlo draws per step and whether the fit starts from
the non-private Gaussian. :func:`train_vi` builds the variational flow in the fit's
:func:`~skdp.training._fit_context.torch_fit` context and runs the shared training loop
(:func:`~skdp.training._loop.run_steps`) with the VI's step hook: the step's Monte Carlo
draws, then the per-record free-energy terms handed to the one DP-SGD step
(:func:`~skdp.training.make_dp_step`; Poisson batch, clipping, noise once on the sum,
division by the expected batch size, accountant).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from skdp.sampling._free_energy import _FreeEnergyGradients, check_log_lik
from skdp.sampling._vi_flow import (
    build_vi_flow,
    default_n_iter,
    default_n_mc,
    gaussian_start_final_rate,
    gaussian_start_log_scale,
    make_vi_optimizer,
)
from skdp.utils._patient_facts import PlanUnitMixin

__all__ = ["VIPlan", "VIRun", "plan_vi_fit", "train_vi"]

_OPTIMIZERS = {"adam": "Adam", "sgd": "SGD", "rmsprop": "RMSprop"}


@dataclass(frozen=True)
class VIPlan(PlanUnitMixin):
    """The public quantities of one fit (functions of the parameters and ``n`` only)."""

    n: int
    n_params: int
    sample_rate: float
    n_iter: int
    noise_multiplier: float
    n_mc: int
    private: bool
    delta: float
    #: ``privatize="per_record_full"``: the whole term of a record is clipped and noised
    full: bool
    #: a non-private fit starts from a Gaussian at the public ``1/sqrt(n)`` scale and
    #: trains its affine layer first (:func:`make_vi_optimizer`); a private fit does not
    gaussian: bool
    #: the contribution bound of a patient-level fit (``n`` then counts patients; each
    #: patient's likelihood terms are summed over their rows and clipped once); ``None``
    #: per row
    max_rows_per_group: int | None = None

    @property
    def expected_batch_size(self) -> float:
        return self.sample_rate * self.n


@dataclass
class VIRun:
    """What :func:`train_vi` returns: the trained flow, its DP-SGD step (for the steps
    and the accountant), the logged history, the loss of every step (``epsilon=inf``
    only) and the training ELBO (``nan`` for a private fit)."""

    flow: object
    step: object
    history: dict = field(default_factory=dict)
    loss_curve: list = field(default_factory=list)
    elbo: float = math.nan


def plan_vi_fit(est, n, n_params, epsilon, delta, max_rows_per_group=None) -> VIPlan:
    """The plan of a fit of ``est`` on ``n`` records, or patients with
    ``max_rows_per_group`` (``epsilon``, ``delta``: the checked budget). The noise
    multiplier is the smallest that meets the budget, or the given
    one (``ValueError`` when it spends more; :func:`skdp.accounting.resolve_noise_multiplier`)."""
    from skdp.accounting import resolve_noise_multiplier

    private = math.isfinite(est.epsilon)
    q = min(1.0, float(est.batch_size) / n)
    T = default_n_iter(est.n_iter, n, est.batch_size)
    sigma = 0.0
    if private:
        sigma, _ = resolve_noise_multiplier(
            epsilon=epsilon,
            delta=delta,
            sample_rate=q,
            steps=T,
            noise_multiplier=est.noise_multiplier,
            accountant=est.accountant,
        )
    return VIPlan(
        n=n,
        n_params=n_params,
        sample_rate=q,
        n_iter=T,
        noise_multiplier=sigma,
        n_mc=default_n_mc(est.n_mc, private),
        private=private,
        delta=delta,
        full=est.privatize == "per_record_full",
        gaussian=not private and est.normalization == "affine",
        max_rows_per_group=max_rows_per_group,
    )


def _dp_step(est, env, plan, grads, flow):
    """The fit's DP-SGD step over the flow's parameters: its optimizer (and the Gaussian
    start's schedule), wired by :func:`skdp.training.make_dp_step`."""
    import torch

    from skdp.training import make_dp_step

    optimizer, scheduler = make_vi_optimizer(
        getattr(torch.optim, _OPTIMIZERS[est.optimizer]),
        grads.params.values(),
        flow,
        learning_rate=est.learning_rate,
        decay=float(est.learning_rate_decay),
        n_iter=plan.n_iter,
        gaussian=plan.gaussian,
        final_rate=gaussian_start_final_rate(plan.n),
    )
    return make_dp_step(
        grads.params,
        optimizer,
        n_samples=plan.n,
        sample_rate=plan.sample_rate,
        noise_multiplier=plan.noise_multiplier,
        max_grad_norm=float(est.max_grad_norm) if plan.private else None,
        private=plan.private,
        accountant=est.accountant if plan.private else None,
        sampling_rng=env.streams["sampling"],
        noise_rng=env.streams["noise"],
        device=env.device,
        lr_scheduler=scheduler,
    )


def train_vi(est, env, plan, X, log_lik, groups=None) -> VIRun:
    """Build the variational flow on ``env`` and train it for ``plan.n_iter`` steps
    (``groups``: the :class:`~skdp.training.RecordGroups` of a patient-level fit)."""
    import torch

    from skdp.training import check_per_record_module
    from skdp.training._loop import run_steps
    from skdp.utils._torch import n_parameters

    n, p, m = plan.n, plan.n_params, plan.n_mc
    flow = build_vi_flow(
        est.flow,
        p,
        n_layers=est.n_layers,
        hidden_size=est.hidden_size,
        normalization=est.normalization,
        generator=env.generator("init", "cpu"),
        log_scale=gaussian_start_log_scale(n) if plan.gaussian else 0.0,
        full=plan.gaussian,
    )
    flow = check_per_record_module(env.to(flow))
    B = plan.expected_batch_size
    env.set_threads(max(1, round(B)) * (n_parameters(flow) + m * p))
    grads = _FreeEnergyGradients(flow, log_lik, est.log_prior, n, est._grad_method)
    Xt = env.tensor(X)
    mc_gen = env.generator("mc")
    # MC draws shared by a step's records (data-independent)
    draw = functools.partial(torch.randn, (m, p), generator=mc_gen, device=env.device,
                             dtype=env.dtype)  # fmt: skip
    grads.module.z = draw()
    check_log_lik(grads.module, Xt, m)
    run = VIRun(flow, _dp_step(est, env, plan, grads, flow), {"step": [], "epsilon": []})

    def vi_step(t):  # the VI's hook: the step's MC draws, then its free-energy terms
        grads.module.z = draw()
        if plan.private:
            grad_sum, hook = grads.private_terms(
                Xt, run.step.privatizer, full=plan.full, groups=groups
            )
            run.step.step(grad_sum, data_free_grad=hook)
        else:
            grad_sum, hook, loss = grads.plain_terms(Xt, B, groups=groups)
            run.step.step(grad_sum, data_free_grad=hook)
            run.loss_curve.append(loss())

    def epsilon():
        return float(run.step.accountant.get_epsilon(plan.delta))

    flow.train()
    run_steps(
        vi_step,
        plan.n_iter,
        epsilon=epsilon if plan.private else None,
        history=run.history,
        progress=lambda t: est._progress(t, plan.n_iter, run.history, run.loss_curve, plan.private),
    )
    if not plan.private:
        run.elbo = est._elbo(flow, log_lik, Xt, min(m, 256), mc_gen, env.dtype)
    return run
