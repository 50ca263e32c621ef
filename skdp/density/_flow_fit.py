"""Pieces of :meth:`DPFlowDensity.fit <skdp.density.DPFlowDensity.fit>`: the patient-level
input checks and row bounding, the public schedule and the dequantisation map.

All three are functions of public inputs (the estimator's parameters, the declared schema,
the public counts) or per-record maps; none keeps a statistic of the data.
"""

from __future__ import annotations

import numpy as np

from skdp.utils._groups import bound_contributions, schema_patient_codes

__all__ = ["bound_patients", "dequantiser", "flow_patient_codes", "flow_schedule"]

#: Encoded numeric range: declared bounds map onto [-2, 2] (about the N(0, 1) base's range).
NUMERIC_RANGE = (-2.0, 2.0)
#: Gaussian dequantisation SD of one-hot/binary coordinates, in units of the {0, 1} code
#: (skdp's default tau = 0.15); on the [-2, 2] encoding it is 0.15 * 4.
CATEGORICAL_TAU = 0.15


flow_patient_codes = schema_patient_codes  # the one check, in skdp.utils._groups


def bound_patients(X, codes, k, rng):
    """``(X, codes)`` restricted to at most ``k`` rows per patient, chosen uniformly at
    random with ``rng`` (:func:`skdp.utils._groups.bound_contributions`)."""
    keep = bound_contributions(codes, k, rng)
    rows = X.iloc[keep] if hasattr(X, "iloc") else X[keep]
    return rows, codes[keep]


def flow_schedule(batch_size, n_iter, n_units, n_params, *, epochs, rows_per_unit=1):
    """``(batch_size, n_iter)``: the given values, or the public rule of
    :class:`~skdp.density.DPFlowDensity` over ``n_units`` sampled units (rows, or
    patients of at most ``rows_per_unit = k`` rows each, whose per-step work counts
    ``k`` rows)."""
    from skdp.accounting._schedule import default_batch_size, default_n_iter

    batch_size = int(batch_size) if batch_size is not None else default_batch_size(n_units)
    if n_iter is not None:
        return batch_size, int(n_iter)
    n_iter = default_n_iter(
        n_units, batch_size, epochs=epochs, n_parameters=n_params, step_cost=rows_per_unit
    )
    return batch_size, n_iter


def dequantiser(encoder, schema, rng, device, dtype):
    """Per-record dequantisation noise, drawn outside vmap from the ``dequant`` stream."""
    import torch

    from skdp.utils._torch import torch_generator

    D = encoder.n_encoded_features_
    uni = np.zeros(D)
    gau = np.zeros(D)
    a, b = NUMERIC_RANGE
    for c in schema:
        sl = encoder.slices_[c.name]
        if c.kind == "integer":
            uni[sl] = encoder.scale_[c.name]  # U(-1/2, 1/2) in original units
        elif c.kind in ("binary", "categorical"):
            gau[sl] = CATEGORICAL_TAU * (b - a)
    if not (uni.any() or gau.any()):
        return None
    gen = torch_generator(rng, device)
    uni_t = torch.as_tensor(uni, device=device, dtype=dtype)
    gau_t = torch.as_tensor(gau, device=device, dtype=dtype)

    def dequantise(batch):
        x = batch[0]
        u = torch.rand(x.shape, generator=gen, device=device, dtype=dtype) - 0.5
        g = torch.randn(x.shape, generator=gen, device=device, dtype=dtype)
        return [x + u * uni_t + g * gau_t, *batch[1:]]

    return dequantise
