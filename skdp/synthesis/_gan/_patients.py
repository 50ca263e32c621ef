"""Patient-level fits of :class:`~skdp.synthesis.DPGANSynthesizer` (``groups=``).

Neighbouring relation: add or remove **one patient with all their rows** (:doc:`/patients`).
Every part of a fit that reads real rows is made per patient here or in the budget plan
(:class:`~skdp.synthesis._gan._budget.GANPlan`):

* rows beyond the public bound ``k = max_rows_per_group`` are dropped uniformly at random
  with the fit's own ``"groups"`` stream (:func:`skdp.utils._groups.bound_contributions`);
* the DP-SGD steps (autoencoder and critic) Poisson-sample patients at rate ``q`` and clip
  one term per sampled patient to ``C`` (:mod:`skdp.training._patients`). The autoencoder
  uses the engine's term ``(1/k) sum_{i in p} g_i``; the critic uses the **per-patient
  mean** ``(1/|p|) sum_{i in p} g_i`` (:func:`per_patient_mean`): its objective compares
  the real term with a mean over fake rows, so the real term must be a mean too (with
  ``1/k`` it would be scaled by the private mean rows per patient over ``k`` and the
  WGAN objective, whose critic head has no bias, would no longer compare two
  distributions). The mean reads only patient ``p``'s rows and is clipped as one vector,
  so the sum over patients keeps sensitivity ``C``; each patient then weighs equally in
  the real distribution the critic sees;
* the class counts of the DP prior and the checkpoint utilities (counts of rows) have
  sensitivity ``k`` (the plan);
* a private bound estimate (per row) is refused: numeric bounds must be declared.
"""

from __future__ import annotations

import numpy as np

from skdp.utils._groups import schema_patient_codes

__all__ = ["gan_patient_codes", "per_patient_mean", "per_patient_weights"]


gan_patient_codes = schema_patient_codes  # the one check, in skdp.utils._groups


def per_patient_weights(codes, k):
    """``k / |p|`` for each (kept) row of patient ``p``: with the engine's ``1 / k`` the
    patient's term becomes the mean of their row gradients, ``(1/|p|) sum_{i in p} g_i``.

    A function of each patient's own rows only (their count); it is never released.
    """
    codes = np.asarray(codes)
    _, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
    return float(k) / counts[inverse].astype(float)


def per_patient_mean(loss):
    """``loss`` with a trailing per-row weight target: ``w * loss(out, *targets)``.

    With the weights of :func:`per_patient_weights` the DP-SGD engine's per-patient term
    ``(1/k) sum_{i in p} w_i g_i`` is patient ``p``'s mean row gradient.
    """

    def weighted(out, *targets):
        *targets, w = targets
        return w * loss(out, *targets)

    return weighted
