"""Torch DP-SGD engine, generic over any ``nn.Module`` and per-record loss (layer L3).

* :func:`train_dpsgd`: calibrate the noise from (epsilon, delta), run exactly ``n_iter``
  accounted DP-SGD steps, return a :class:`TrainingResult`;
* :class:`DPSGDTrainer`: the DP-SGD step (Abadi et al. 2016) one at a time;
* :func:`per_sample_gradients`, :func:`clip_and_sum`, :func:`check_per_record_module`;
* :func:`ghost_clip_and_sum`: the exact clipped sum for linear / masked-linear modules
  without per-sample gradients (the default ``method="auto"`` uses it when it applies,
  after checking it against per-sample gradients on a public probe).

Knows nothing of flows: estimators combine it with :mod:`skdp.flows`.
"""

from skdp.training._dpsgd import (
    DPSGDTrainer,
    GhostClippingUnsupported,
    TrainingResult,
    check_per_record_module,
    clip_and_sum,
    ghost_clip_and_sum,
    linear_layers,
    per_sample_gradients,
    train_dpsgd,
)

__all__ = [
    "DPSGDTrainer",
    "GhostClippingUnsupported",
    "TrainingResult",
    "check_per_record_module",
    "clip_and_sum",
    "ghost_clip_and_sum",
    "linear_layers",
    "per_sample_gradients",
    "train_dpsgd",
]
