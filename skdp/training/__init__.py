"""Torch DP-SGD engine, generic over any ``nn.Module`` and per-record loss (layer L3).

Composable pieces, each used by every DP-SGD estimator of skdp:

* :class:`PoissonSampler`: the Poisson batch of a step;
* :func:`per_sample_gradients` (vmap or loop), :func:`ghost_clip_and_sum` (the exact clipped
  sum for linear / masked-linear modules without per-sample gradients),
  :func:`check_per_record_module`;
* :func:`clip_and_sum` and :class:`GaussianPrivatizer`: flat clipping, and the one place the
  noise ``N(0, sigma^2 C^2 I)`` is drawn once on the sum and divided by the expected batch
  size;
* :class:`DPStep`: samples, privatises, steps the accountant and applies the result to any
  ``torch.optim.Optimizer``, with hooks for an exact data-free term and a public extra term;
  :func:`make_dp_step` wires one (sampler, privatizer, accountant, optimizer) from plain
  values: the one way into the engine;
* :class:`RecordGroups`, :func:`group_clip_and_sum` and :func:`ghost_group_clip_and_sum`:
  patient-level DP-SGD (patients sampled, each patient's gradient sum clipped once,
  :mod:`skdp.training._patients`);
* :class:`DPSGDTrainer` (a module and a per-record loss on a :class:`DPStep`) and
  :func:`train_dpsgd` (calibration and the loop).

Knows nothing of flows: estimators combine it with :mod:`skdp.flows`.
"""

from skdp.training._ghost import GhostClippingUnsupported, ghost_clip_and_sum, linear_layers
from skdp.training._patients import (
    RecordGroups,
    ghost_group_clip_and_sum,
    group_clip_and_sum,
    segment_sum,
)
from skdp.training._per_sample import check_per_record_module, per_sample_gradients
from skdp.training._privatizer import GaussianPrivatizer, clip_and_sum
from skdp.training._sampler import PoissonSampler
from skdp.training._step import DPStep, make_dp_step
from skdp.training._train import TrainingResult, train_dpsgd
from skdp.training._trainer import DPSGDTrainer

__all__ = [
    "DPSGDTrainer",
    "DPStep",
    "GaussianPrivatizer",
    "GhostClippingUnsupported",
    "PoissonSampler",
    "RecordGroups",
    "TrainingResult",
    "check_per_record_module",
    "clip_and_sum",
    "ghost_clip_and_sum",
    "ghost_group_clip_and_sum",
    "group_clip_and_sum",
    "linear_layers",
    "make_dp_step",
    "per_sample_gradients",
    "segment_sum",
    "train_dpsgd",
]
