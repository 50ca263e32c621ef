"""The training part of :meth:`DPFlowDensity.fit <skdp.density.DPFlowDensity.fit>`: the
flow built on the torch environment, the release plan, the copula base's two fixed layers
(``base="copula"``) and the DP-SGD steps of the trainable layers.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from skdp.density._flow_fit import flow_schedule
from skdp.density._plan import FlowDensityPlan

__all__ = ["numeric_coordinates", "train_flow"]


def numeric_coordinates(encoder, schema):
    """Boolean mask of the encoded coordinates of numeric (continuous and integer) columns."""
    mask = np.zeros(encoder.n_encoded_features_, dtype=bool)
    for c in schema:
        if c.is_numeric:
            mask[encoder.slices_[c.name].start] = True
    return mask


def _integer_dequantiser(encoder, schema, rng):
    """Numpy per-record map adding ``U(-1/2, 1/2)`` (original units) to the integer
    coordinates, drawn once from ``rng``: the copula base's statistics see the same
    dequantised density DP-SGD fits (its own noise, a per-record map)."""
    width = np.zeros(encoder.n_encoded_features_)
    for c in schema:
        if c.kind == "integer":
            width[encoder.slices_[c.name].start] = encoder.scale_[c.name]
    if not width.any():
        return None
    return lambda Z: Z + (rng.random(Z.shape) - 0.5) * width


def train_flow(est, env, Z, encoder, schema, hidden, budget, units, *, epochs, nll):
    """``(flow, FlowDensityPlan, result)`` of one fit of ``est`` on the encoded rows ``Z``.

    ``budget``: ``(epsilon, delta, bounds_estimated)``; ``units``: ``(codes, k)`` of a
    patient-level fit (``None`` per row). With ``base="copula"`` the two fixed layers
    are released first (:func:`skdp.density._copula_base.copula_layers`, at the plan's
    noise) and the trainable layers follow them; ``n_layers=0`` trains nothing.
    """
    from skdp.density._copula_base import copula_layers
    from skdp.flows import Flow, make_flow
    from skdp.training import RecordGroups

    groups = None if units is None else RecordGroups(*units)
    k = None if groups is None else groups.max_rows_per_group
    n = int(Z.shape[0]) if groups is None else groups.n_groups
    D = encoder.n_encoded_features_
    trainable = int(est.n_layers) > 0
    layers = []
    if trainable:
        layers = list(
            make_flow(
                est.flow,
                D,
                n_layers=int(est.n_layers),
                hidden_features=(hidden,),
                generator=env.generator("init", "cpu"),
                zero_init_output=True,
            ).transforms
        )
    numeric = numeric_coordinates(encoder, schema)
    n_params = max(1, sum(p.numel() for t in layers for p in t.parameters()))
    batch_size, n_iter = flow_schedule(
        est.batch_size, est.n_iter, n, n_params, epochs=epochs, rows_per_unit=k or 1
    )
    plan = FlowDensityPlan.build(
        n=n,
        epsilon=budget[0],
        delta=budget[1],
        bounds_estimated=budget[2],
        batch_size=batch_size,
        n_iter=n_iter if trainable else 0,
        noise_multiplier=est.noise_multiplier,
        accountant=est.accountant,
        max_rows_per_group=k,
        base=est.base,
        n_numeric=int(numeric.sum()),
        trainable=trainable,
    )
    if plan.base == "copula":
        rng = env.streams["base"]
        deq = _integer_dequantiser(encoder, schema, rng)
        layers = copula_layers(Z, numeric, plan, rng, dequantise=deq) + layers
    flow = env.to(Flow(layers, n_features=D))
    if not trainable:
        return flow, plan, SimpleNamespace(history={"step": [], "epsilon": []}, guarantee="exact")
    result = _dpsgd(est, env, flow, Z, encoder, schema, plan, groups, nll)
    return flow, plan, result


def default_learning_rate(learning_rate, base):
    """The given rate, or the default of ``base`` (a public rule): ``3e-4`` on the copula
    base, ``1e-3`` (the seed paper's) on ``N(0, I)``."""
    if learning_rate is not None:
        return float(learning_rate)
    return 3e-4 if base == "copula" else 1e-3


def _dpsgd(est, env, flow, Z, encoder, schema, plan, groups, nll):
    """The DP-SGD steps of ``plan`` on the trainable layers of ``flow``."""
    from skdp.flows import LogProbModule
    from skdp.training import train_dpsgd
    from skdp.utils._torch import n_parameters

    k = plan.max_rows_per_group
    env.set_threads(min(plan.batch_size, plan.n) * (k or 1) * n_parameters(flow))
    return train_dpsgd(
        LogProbModule(flow),
        nll,
        (env.tensor(Z),),
        epsilon=plan.epsilon - plan.eps_bounds - plan.eps_marginals - plan.eps_correlation,
        delta=plan.delta_dpsgd,
        n_iter=plan.n_iter,
        sample_rate=plan.sample_rate,
        noise_multiplier=plan.noise_multiplier if plan.private else None,
        max_grad_norm=float(est.max_grad_norm),
        optimizer="adam",
        learning_rate=default_learning_rate(est.learning_rate, plan.base),
        accountant=est.accountant,
        random_state=env.streams["training"],
        batch_transform=est._dequantiser(
            encoder, schema, env.streams["dequant"], env.device, env.dtype
        ),
        callback=functools.partial(est._progress, total=plan.n_iter),
        groups=groups,
    )
