"""Pieces of :meth:`DPFlowDensity.fit <skdp.density.DPFlowDensity.fit>`: the patient-level
input checks and row bounding, the public schedule and the dequantisation map.

All three are functions of public inputs (the estimator's parameters, the declared schema,
the public counts) or per-record maps; none keeps a statistic of the data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._rowsum import is_dask_collection

__all__ = ["bound_patients", "dequantiser", "flow_patient_codes", "flow_schedule"]

#: Encoded numeric range: declared bounds map onto [-2, 2] (about the N(0, 1) base's range).
NUMERIC_RANGE = (-2.0, 2.0)
#: Gaussian dequantisation SD of one-hot/binary coordinates, in units of the {0, 1} code
#: (skdp's default tau = 0.15); on the [-2, 2] encoding it is 0.15 * 4.
CATEGORICAL_TAU = 0.15


def flow_patient_codes(est, X, groups, n):
    """``(codes, k)`` of a patient-level fit (``(None, None)`` without ``groups``).

    Refused before any row is read by a mechanism: Dask input, ``groups`` without
    ``max_rows_per_group``, bad labels (:func:`skdp.utils._groups.patient_codes`), and a
    private fit whose declared schema leaves numeric bounds to the private estimate
    (a per-row mechanism; not implemented per patient).
    """
    codes, k = patient_codes(est, groups, n, dask_input=is_dask_collection(X))
    if codes is None or not math.isfinite(est.epsilon):
        return codes, k
    with warnings.catch_warnings():  # _prepare_table warns again, once, for the fit
        warnings.simplefilter("ignore")
        missing = est._build_schema(X).missing_bounds()
    if missing:
        raise ValueError(
            f"bounds of column(s) {list(missing)} are missing: with groups= every numeric "
            "column needs declared bounds (a private bound estimate per patient is not "
            "implemented; doc/choosing_bounds.rst)"
        )
    return codes, k


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
