"""Brute force: the sensitivity of a histogram of per-patient L2-clipped count vectors
(:class:`~skdp.synthesis.DPMarginalSynthesizer` with ``contribution="clip"``).

A patient is any multiset of at most ``k`` rows over a small public domain of cells.
The clipped sum is a sum of per-patient terms, so adding or removing one patient changes
it by that patient's own clipped, rounded vector ``w`` (checked below on a data set of
other patients); the worst case over every patient is the sensitivity, which
:func:`skdp.mechanisms.sensitivity.clipped_histogram_sensitivity` (times the resolution
``R``) must bound and, up to the rounding down, attain.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from skdp.mechanisms.sensitivity import clipped_histogram_sensitivity
from skdp.synthesis._marginal_clip import RESOLUTION, clip_patient_counts

N_CELLS = 6


def _patients(k):
    """Every patient: a multiset of 1..k rows over the cells."""
    for r in range(1, k + 1):
        yield from itertools.combinations_with_replacement(range(N_CELLS), r)


def _others():
    """A fixed data set of other patients (codes 1..), none of them the canary (0)."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 6, size=12)
    cells = np.concatenate([rng.integers(0, N_CELLS, size=s) for s in sizes])
    codes = np.repeat(np.arange(1, 13), sizes)
    return cells, codes


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_clipped_sum_moves_by_at_most_the_stated_bound_and_attains_it(k):
    R = RESOLUTION
    cells0, codes0 = _others()
    base = clip_patient_counts(cells0, codes0, N_CELLS, k)
    worst_l2 = worst_l1 = 0.0
    for patient in _patients(k):
        cells = np.concatenate([cells0, patient])
        codes = np.concatenate([codes0, np.zeros(len(patient), dtype=np.int64)])
        diff = clip_patient_counts(cells, codes, N_CELLS, k) - base
        assert (diff >= 0).all()
        v = np.bincount(patient, minlength=N_CELLS)
        assert (diff <= R * v).all()  # never more than the patient's rows
        assert int(diff @ diff) <= R * R * k  # exact, on integers
        worst_l2 = max(worst_l2, math.sqrt(int(diff @ diff)))
        worst_l1 = max(worst_l1, float(diff.sum()))
    l2 = clipped_histogram_sensitivity(k)
    l1 = clipped_histogram_sensitivity(k, norm="l1")
    assert worst_l2 <= R * l2 * (1 + 1e-12) and worst_l1 <= R * l1
    # attained: k rows in k distinct cells (no clipping) for both when k <= N_CELLS,
    # and k rows in one cell for L2 up to the rounding down
    assert worst_l1 == R * l1
    assert worst_l2 >= R * l2 - math.sqrt(N_CELLS)


def test_unclipped_patients_enter_whole_and_clipped_ones_keep_their_shape():
    R = RESOLUTION
    # 4 rows in 4 cells: norm 2 = sqrt(4), whole
    assert (clip_patient_counts([0, 1, 2, 3], [0] * 4, 4, 4) == R).all()
    # 3 rows in one cell, 1 in another: (3, 1) scaled by 2 / sqrt(10)
    w = clip_patient_counts([0, 0, 0, 1], [0] * 4, 2, 4)
    assert w.tolist() == [math.floor(R * 3 * 2 / math.sqrt(10)), math.floor(R * 2 / math.sqrt(10))]
    assert clip_patient_counts([], [], 3, 2).tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    ("k", "clip_norm", "l2", "l1"),
    [(1, None, 1.0, 1.0), (4, None, 2.0, 4.0), (9, 1.0, 1.0, 3.0), (2, 5.0, 2.0, 2.0)],
)
def test_formula(k, clip_norm, l2, l1):
    assert clipped_histogram_sensitivity(k, clip_norm=clip_norm) == pytest.approx(l2)
    assert clipped_histogram_sensitivity(k, clip_norm=clip_norm, norm="l1") == pytest.approx(l1)


@pytest.mark.parametrize(
    "kwargs", [{"max_rows_per_group": 0}, {"max_rows_per_group": 2.5}, {"clip_norm": 0.0}]
)
def test_bad_arguments_are_refused_by_name(kwargs):
    args = {"max_rows_per_group": 3, **kwargs}
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        clipped_histogram_sensitivity(**args)
    with pytest.raises(ValueError, match="norm"):
        clipped_histogram_sensitivity(3, norm="l3")
