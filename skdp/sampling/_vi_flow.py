"""DPFlowVI's public set-up: its default step count, its variational flow and, for a
non-private fit, the Gaussian start of its optimisation."""

from __future__ import annotations

import math

__all__ = [
    "GAUSSIAN_START_LR_FACTOR",
    "GAUSSIAN_START_MAX_LR",
    "build_vi_flow",
    "default_n_iter",
    "default_n_mc",
    "gaussian_start_final_rate",
    "gaussian_start_log_scale",
    "gaussian_start_rate",
    "make_vi_optimizer",
]

#: Learning rate of the Gaussian part of a non-private fit: ``learning_rate`` times
#: the factor, at most the cap (``learning_rate=0.05`` times 30 threw a nonlinear
#: model's location into another mode).
GAUSSIAN_START_LR_FACTOR = 30.0
GAUSSIAN_START_MAX_LR = 0.3
#: Final learning rate of a non-private fit, as a fraction of its start:
#: ``min(_NONPRIVATE_FINAL_LR, _NONPRIVATE_FINAL_LR_ROWS / n)``.
_NONPRIVATE_FINAL_LR = 0.1
_NONPRIVATE_FINAL_LR_ROWS = 50.0
#: the Gaussian rate ramps up over the first 1 / _RAMP_DIVISOR of the steps
_RAMP_DIVISOR = 10
#: fraction of the steps in which only the Gaussian part trains
_GAUSSIAN_PHASE = 0.5


def default_n_iter(n_iter, n, batch_size):
    """DP-SGD steps: ``n_iter``, or for ``None`` ``min(800, max(200, ceil(10 n / B)))``.

    A public rule: it reads the row count ``n`` (public under skdp's relation, and
    released by the sampling rate anyway) and the expected batch size ``B``.
    """
    if n_iter is None:
        return int(min(800, max(200, math.ceil(10 * n / batch_size))))
    return int(n_iter)


def default_n_mc(n_mc, private):
    """Monte Carlo draws per step: ``n_mc``, or for ``None`` 16 (private) or 100 (not).

    A public rule: it reads only whether the fit is private (``epsilon`` finite). A
    private step's cost is linear in the draws (the per-record chain rule) and its
    gradient noise is dominated by the DP noise; a non-private step costs about the same
    at any count, and the draws are its only noise besides the batch sampling.
    """
    if n_mc is None:
        return 16 if private else 100
    return int(n_mc)


def gaussian_start_final_rate(n):
    """Final learning rate of a non-private fit's schedule, as a fraction of
    ``learning_rate``: ``min(0.1, 50 / n)``.

    A public rule (it reads the row count). A non-private step's gradient is noisy (batch
    sampling and Monte Carlo draws), and an adaptive optimizer keeps the location
    jittering at a squared amplitude about proportional to its step size; the final rate
    falls as ``1 / n`` so that the jitter stays below the posterior's ``1 / sqrt(n)``
    scale.
    """
    return min(_NONPRIVATE_FINAL_LR, _NONPRIVATE_FINAL_LR_ROWS / max(int(n), 1))


def gaussian_start_rate(learning_rate):
    """Learning rate of the Gaussian part of a non-private fit:
    ``min(30 * learning_rate, 0.3)`` (0.3 at the default ``learning_rate=0.01``)."""
    return min(GAUSSIAN_START_LR_FACTOR * float(learning_rate), GAUSSIAN_START_MAX_LR)


def gaussian_start_log_scale(n):
    """Initial log-scale ``-log(n) / 2`` of the affine layer in a non-private fit.

    The flow starts at ``N(0, I / n)``: the ``1 / sqrt(n)`` contraction rate of a regular
    posterior with ``n`` records (exact for the default Gaussian location model); a
    public function of ``n``, never of the data.
    """
    return -0.5 * math.log(max(int(n), 1))


def make_vi_optimizer(
    optimizer_cls, params, flow, *, learning_rate, decay, n_iter, gaussian, final_rate=1.0
):
    """The optimizer and its learning-rate scheduler (or ``None``).

    ``gaussian=False`` (a private fit, or ``normalization="none"``): one group at
    ``learning_rate``, multiplied by ``decay`` every step (no scheduler when 1).

    ``gaussian=True`` (a non-private fit with the affine layer): the Gaussian part (the
    affine layer's location and log-scale and the unit lower-triangular map after it,
    :func:`build_vi_flow` with ``full=True``) at :func:`gaussian_start_rate`, trained
    alone for the first half of the steps (a full-covariance Gaussian variational fit),
    then with the rest of the flow at ``learning_rate``. Both
    rates follow a cosine from their start to ``final_rate`` times it over the ``n_iter``
    steps (:func:`gaussian_start_final_rate`; a cosine keeps the rate high longer than a
    geometric decay to the same end, so the location travels about twice as far), times
    ``decay ** t``; the Gaussian rate
    ramps up linearly over the first tenth of the steps (RMSprop's first steps, before
    its average of squared gradients fills, are up to ten times its rate). Adaptive
    optimizers move each parameter by about its learning rate per step: at
    ``learning_rate`` alone the location and the log-scale could travel only about
    ``n_iter * learning_rate`` (2 at the defaults for ``n <= 5,120``, against the
    ``log(sqrt(n))`` the scale needs from 1), while the flow's conditioner, with many
    parameters, took over the location and inflated the scale.
    """
    import torch

    params = list(params)
    lr = float(learning_rate)
    if not gaussian:
        opt = optimizer_cls(params, lr=lr)
        sched = None
        if decay < 1.0:
            sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=float(decay))
        return opt, sched
    head = [t for t in flow.transforms if getattr(t, "gaussian_head", False)]
    affine = {id(q) for t in head for q in t.parameters()}
    groups = [
        {"params": [q for q in params if id(q) in affine], "lr": gaussian_start_rate(lr)},
        {"params": [q for q in params if id(q) not in affine], "lr": lr},
    ]
    opt = optimizer_cls([g for g in groups if g["params"]], lr=lr)
    T = int(n_iter)
    r = float(final_rate)
    warm = int(T * _GAUSSIAN_PHASE)
    ramp = max(1, T // _RAMP_DIVISOR)

    def anneal(t):  # cosine from 1 to r over the run, times the user's decay
        return (r + (1.0 - r) * 0.5 * (1.0 + math.cos(math.pi * min(t, T) / T))) * decay**t

    def affine_rate(t):
        return min(1.0, (t + 1) / ramp) * anneal(t)

    def flow_rate(t):
        return 0.0 if t < warm else anneal(t)

    rates = [affine_rate, flow_rate][: len(opt.param_groups)]
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, rates)


def _unit_lower_triangular(p):
    """``x = (I + M) z`` with ``M`` strictly lower triangular (zero at the start):
    volume-preserving, row by row, so that ``loc + exp(log_scale) * (I + M) z`` is any
    Gaussian (``M`` is relative to the scales, so a correlation is an O(1) parameter)."""
    import torch
    from torch import nn

    from skdp.flows import Transform

    class UnitLowerTriangular(Transform):
        def __init__(self):
            super().__init__(p)
            self.lower = nn.Parameter(torch.zeros(p, p))
            self.register_buffer("_mask", torch.tril(torch.ones(p, p), diagonal=-1))

        def _matrix(self):
            return self.lower * self._mask + torch.eye(
                p, dtype=self.lower.dtype, device=self.lower.device
            )

        def inverse_and_ladj(self, z):
            return z @ self._matrix().T, torch.zeros(z.shape[:-1], dtype=z.dtype, device=z.device)

        def forward(self, x):
            A = self._matrix()
            r = x.unsqueeze(-1)
            z = torch.linalg.solve_triangular(
                A.expand(r.shape[:-2] + A.shape), r, upper=False, unitriangular=True
            )
            return z.squeeze(-1), torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)

    return UnitLowerTriangular()


def build_vi_flow(
    flow_kind, p, *, n_layers, hidden_size, normalization, generator, log_scale=0.0, full=False
):
    """The variational flow over ``p`` parameters (DPFlowVI's ``flow``, ``n_layers``,
    ``hidden_size`` and ``normalization`` parameters); no data is read. ``log_scale``:
    the affine layer's initial log-scale (a public constant); ``full``: a unit
    lower-triangular map after it (sampling direction ``theta = loc + exp(log_scale) *
    (I + M) F(z)``), so that the affine part is a full-covariance Gaussian."""
    from skdp.flows import Affine, Flow, make_flow

    if flow_kind == "planar":
        flow = make_flow("planar", p, n_layers=int(n_layers), generator=generator)
    else:
        hidden = hidden_size if hidden_size is not None else max(10, p)
        if flow_kind in ("iaf", "maf") and p > 1 and hidden < p - 1:
            raise ValueError(
                f"hidden_size={hidden} is too small for n_params={p}: an autoregressive "
                f"flow needs hidden_size >= {p - 1}"
            )
        flow = make_flow(
            flow_kind,
            p,
            n_layers=int(n_layers),
            hidden_features=(int(hidden),),
            generator=generator,
            zero_init_output=True,
        )
    if normalization == "affine":
        # first in the data -> latent order = last step of the sampling direction:
        # theta = loc + exp(log_scale) * F(z). (An affine placed inside an IAF would be
        # inverted, theta = (u - loc) exp(-log_scale), which couples location and scale
        # and makes small posterior scales unreachable at usual learning rates.)
        head = [Affine(p, log_scale=float(log_scale))]
        if full and p > 1:
            head.append(_unit_lower_triangular(p))
        for t in head:  # the Gaussian part (make_vi_optimizer's first group)
            t.gaussian_head = True
        flow = Flow([*head, *flow.transforms], n_features=p)
    return flow
