"""DP-SGD for one binary problem of :class:`DPLogisticRegression` (``mechanism="dpsgd"``):
the linear module, the per-record logistic loss and the progress records; the steps are
the training engine's (``skdp.training.train_dpsgd``)."""

from __future__ import annotations

import functools

import numpy as np

from skdp.utils._logging import get_logger, log_step_progress

__all__ = ["fit_binary_dpsgd"]

_logger = get_logger(__name__)


def fit_binary_dpsgd(
    est, U, positive, epsilon, delta, rng, progress=(0, 1, 0.0, True), groups=None
):
    """One binary problem by DP-SGD; ``(weights on U, TrainingResult)``.

    ``progress = (problem index, number of problems, epsilon spent before it,
    private)`` for the progress records. ``groups = (codes, k)``: patient-level DP-SGD
    (:mod:`skdp.training._patients`: patients of at most ``k`` rows, already bounded,
    sampled at ``batch_size / n_patients``, each patient's gradient sum over ``k``
    clipped to ``max_grad_norm``); ``(epsilon, delta)`` then hold per patient.
    """
    # linear_model imports no torch: the module, loss and tensors come from the
    # torch boundary (utils._torch), the steps from the training engine
    from skdp.training import RecordGroups, train_dpsgd
    from skdp.utils._torch import logistic_record_loss, to_numpy, to_tensor, zero_linear

    module = zero_linear(U.shape[1], dtype="float64")
    data = (
        to_tensor(U, dtype="float64"),
        to_tensor(positive.astype(np.float64), dtype="float64"),
    )
    result = train_dpsgd(
        module,
        logistic_record_loss,
        data,
        epsilon=epsilon,
        delta=delta,
        n_iter=int(est.n_iter),
        batch_size=float(est.batch_size),
        max_grad_norm=float(est.max_grad_norm),
        optimizer="adam",
        learning_rate=float(est.learning_rate),
        accountant=est.accountant,
        random_state=int(rng.integers(2**32)),
        callback=functools.partial(_progress, est, progress=progress),
        groups=None if groups is None else RecordGroups(*groups),
    )
    return to_numpy(module.weight.detach()).ravel().copy(), result


def _progress(est, step, trainer, history, *, progress):
    """One DP-SGD progress record: steps and epsilon of the public schedule only; the
    batch loss only for a non-private fit (:func:`skdp.utils.log_progress`)."""
    k, n_problems, done, private = progress
    n_iter = int(est.n_iter)
    log_step_progress(
        _logger,
        estimator="DPLogisticRegression",
        phase="dpsgd",
        step=k * n_iter + int(step),
        total=n_problems * n_iter,
        epsilons=history["epsilon"],
        losses=history.get("loss"),
        private=private,
        spent_before=done,
    )
