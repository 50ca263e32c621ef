"""Per-patient L2 clipping of the Gaussian measurements of
:class:`~skdp.synthesis.DPMarginalSynthesizer` (``contribution="clip"``).

Each measured marginal is the sum over patients of their count vectors ``v`` (at most
``k`` rows each), each clipped to L2 norm ``C = sqrt(k)``: ``s v`` with ``s = min(1, C /
||v||_2)``, so the marginal's L2 sensitivity is ``C`` instead of ``k``
(:func:`~skdp.mechanisms.sensitivity.clipped_histogram_sensitivity`). To keep the
discrete Gaussian (exact, integer) the clipped vectors are scaled by the public
resolution :data:`RESOLUTION` and rounded down cell by cell (which only shrinks them),
and every patient's squared norm is then checked on integers against ``R^2 C^2 = R^2 k``;
the noise is drawn at ``R`` times the count-unit scale and the sum divided by ``R``.

A patient with several rows in one cell is weighted by ``s < 1``, so a clipped marginal
sums to less than the rows kept; :func:`measure_clipped` brings its noisy counts back
to the model's total (post-processing): the factor ``n_hat / total`` is clamped to
``[1, sqrt(k)]``, the range that ``s >= C / k`` allows.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.utils._groups import patient_codes

__all__ = [
    "RESOLUTION",
    "ClippedCounts",
    "clip_patient_counts",
    "clipped_statistic",
    "measure_clipped",
]

#: public resolution of the clipped counts (a clipped cell is rounded down to 1 / R)
RESOLUTION = 1 << 10


def clip_patient_counts(cells, patients, n_cells, k, resolution=RESOLUTION):
    """``R`` times the sum over patients of their count vectors clipped to L2 norm
    ``sqrt(k)``, each cell rounded down (int64, length ``n_cells``).

    ``cells``: the flat cell of every (kept) row; ``patients``: its patient code.
    Every patient's rounded vector ``w`` satisfies ``sum(w^2) <= R^2 k`` exactly (on
    integers) and ``0 <= w <= R v``."""
    cells = np.asarray(cells, dtype=np.int64)
    patients = np.asarray(patients, dtype=np.int64)
    if cells.size == 0:
        return np.zeros(n_cells, dtype=np.int64)
    pairs, v = np.unique(patients * n_cells + cells, return_counts=True)
    who, cell = np.divmod(pairs, n_cells)
    _, pid = np.unique(who, return_inverse=True)
    v = v.astype(np.int64)
    norm_sq = np.bincount(pid, weights=v.astype(float) ** 2).astype(np.int64)  # exact
    bound = resolution**2 * k
    clipped = (norm_sq > k)[pid]  # the others enter whole: R v exactly
    shrink = np.sqrt(k / norm_sq)[pid] * (1.0 - 2.0**-40)  # rounding errs downward
    w = np.where(clipped, np.floor(resolution * v * shrink).astype(np.int64), resolution * v)
    while True:  # integer check of every patient's norm (float rounding cannot pass)
        sq = np.zeros(norm_sq.size, dtype=np.int64)
        np.add.at(sq, pid, w * w)
        over = sq > bound
        if not over.any():
            break
        w = np.where(over[pid], np.maximum(w - 1, 0), w)
    out = np.zeros(n_cells, dtype=np.int64)
    np.add.at(out, cell, w)
    return out


class ClippedCounts:
    """The clipped marginals of the kept rows' public-grid bins ``bins`` (n_kept x d)
    of patients ``patients``, each patient of at most ``k`` rows."""

    def __init__(self, bins, patients, k):
        self.bins = bins
        self.patients = np.asarray(patients)
        self.k = int(k)

    def marginals(self, sets, maps, csizes):
        """``R`` times each column set's clipped marginal over the compressed domains
        (flattened int64), as :meth:`RowCounts.marginals` gives the exact ones."""
        Bc = np.column_stack([maps[j][self.bins[:, j]] for j in range(self.bins.shape[1])])
        out = []
        for c in sets:
            shape = [csizes[j] for j in c]
            flat = np.ravel_multi_index(tuple(Bc[:, j] for j in c), shape)
            n_cells = math.prod(shape)
            out.append(clip_patient_counts(flat, self.patients, n_cells, self.k))
        return out


def measure_clipped(scaled, scale, plan, rng, n_hat):
    """The noisy clipped marginal in count units, brought to the total ``n_hat``, and
    the factor applied: ``scaled`` (``R`` times the clipped counts) plus discrete
    Gaussian noise of ``R scale``, divided by ``R``, times ``clamp(n_hat / total, 1,
    sqrt(k))`` (post-processing of the noisy counts and the public ``k``)."""
    R = RESOLUTION
    noisy = (scaled + plan.noise(scaled.size, scale * R, rng)) / R
    top = math.sqrt(plan.max_rows_per_group)
    total = float(noisy.sum())
    factor = top if total <= 0 else min(max(n_hat / total, 1.0), top)
    return noisy * factor, factor


def clipped_statistic(est, groups, n, kept, stats, plan):
    """The :class:`ClippedCounts` of a ``contribution="clip"`` fit (``None`` where the
    plan clips nothing: per row, or under pure DP): the kept rows' bins of ``stats``
    and their patients' codes. Refuses Dask input, naming the parameter. Warns where a
    patient-level fit asked for ``"clip"`` under pure DP, which has no L2 measurement."""
    if plan.clip_norm is None:
        if est.contribution == "clip" and plan.max_rows_per_group is not None:
            warnings.warn(
                "contribution='clip' applies to zCDP fits (delta > 0) only; with delta=0 "
                "the measurements are discrete Laplace and each patient's rows are "
                "bounded by max_rows_per_group as with contribution='sample'",
                UserWarning,
                stacklevel=5,
            )
        return None
    if kept.index is None:
        raise ValueError(
            "contribution='clip' is implemented for in-memory input only; use "
            "contribution='sample' with Dask input"
        )
    codes, k = patient_codes(est, groups, n)
    return ClippedCounts(stats.bins, codes[kept.index], k)
