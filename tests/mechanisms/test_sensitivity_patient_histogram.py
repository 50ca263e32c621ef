"""Brute force: the sensitivity of histograms, marginals and the marginal synthesizer's
selection scores under add/remove (and replace) one patient with at most k rows.

Every table here is a multiset of rows over a tiny public domain; a patient is any
multiset of at most ``k`` rows. Adding or removing the patient changes a histogram by the
patient's own histogram, so the worst case over every patient (and, for the scores,
over several data sets and public reference tables) is the sensitivity, which
:func:`skdp.mechanisms.sensitivity.histogram_sensitivity` must bound and attain.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from skdp.mechanisms.sensitivity import histogram_sensitivity

LEVELS = (2, 3)  # a table of two columns: 6 cells
CELLS = list(itertools.product(*(range(m) for m in LEVELS)))


def _patients(k):
    """Every patient: a multiset of 1..k rows over the cells."""
    for r in range(1, k + 1):
        yield from itertools.combinations_with_replacement(range(len(CELLS)), r)


def _marginal(rows, cols):
    shape = [LEVELS[c] for c in cols]
    out = np.zeros(shape, dtype=np.int64)
    for i in rows:
        out[tuple(CELLS[i][c] for c in cols)] += 1
    return out.ravel()


MARGINALS = [(0,), (1,), (0, 1)]


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_add_remove_one_patient_moves_every_marginal_by_k_in_l1_and_l2(k):
    worst = {m: [0.0, 0.0] for m in MARGINALS}
    for p in _patients(k):
        for m in MARGINALS:
            v = _marginal(p, m)  # D + patient minus D, whatever D is
            worst[m][0] = max(worst[m][0], np.abs(v).sum())
            worst[m][1] = max(worst[m][1], math.sqrt((v * v).sum()))
    for m in MARGINALS:
        assert worst[m][0] == histogram_sensitivity(max_rows_per_group=k)  # attained
        assert worst[m][1] == pytest.approx(histogram_sensitivity(max_rows_per_group=k, norm="l2"))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_replace_one_patient(k):
    l1 = l2 = 0.0
    for p in _patients(k):
        for q in _patients(k):
            v = _marginal(q, (0, 1)) - _marginal(p, (0, 1))
            l1, l2 = max(l1, np.abs(v).sum()), max(l2, math.sqrt((v * v).sum()))
    assert l1 == histogram_sensitivity(replace_one=True, max_rows_per_group=k)
    assert l2 == pytest.approx(
        histogram_sensitivity(replace_one=True, max_rows_per_group=k, norm="l2")
    )


@pytest.mark.parametrize("k", [1, 2, 3])
def test_all_one_way_marginals_together(k):
    """The 1-way release of d columns at once (MST's and AIM's first step): L1 d k and
    L2 sqrt(d) k, which the plans' sigma_1 = k sqrt(d / (2 rho_1)) and b_1 = k d / eps_1
    use."""
    d = len(LEVELS)
    l1 = l2 = 0.0
    for p in _patients(k):
        v = np.concatenate([_marginal(p, (j,)) for j in range(d)])
        l1, l2 = max(l1, np.abs(v).sum()), max(l2, math.sqrt((v * v).sum()))
    assert l1 == d * histogram_sensitivity(max_rows_per_group=k)
    assert l2 == pytest.approx(
        math.sqrt(d) * histogram_sensitivity(max_rows_per_group=k, norm="l2")
    )


@pytest.mark.parametrize("k", [1, 2, 3])
def test_selection_scores_move_by_at_most_k(k):
    """MST's and AIM's scores ``||M(D) - q||_1 - c`` (``q``, ``c`` from earlier noisy
    releases: fixed here) move by at most k when a patient is added; attained."""
    rng = np.random.default_rng(0)
    bases = [rng.integers(0, 3, size=n) for n in (0, 3, 6)]
    worst = 0.0
    for base in bases:
        for m in MARGINALS:
            size = math.prod(LEVELS[c] for c in m)
            for q in (np.zeros(size), rng.uniform(0, 3, size)):
                s0 = np.abs(_marginal(base, m) - q).sum() - 0.7 * size
                for p in _patients(k):
                    s1 = np.abs(_marginal(tuple(base) + p, m) - q).sum() - 0.7 * size
                    worst = max(worst, abs(s1 - s0))
    assert worst == pytest.approx(histogram_sensitivity(max_rows_per_group=k))


def test_row_level_values_unchanged_and_bad_norm_refused():
    assert histogram_sensitivity() == 1.0
    assert histogram_sensitivity(replace_one=True) == 2.0
    assert histogram_sensitivity(norm="l2", replace_one=True) == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="norm"):
        histogram_sensitivity(norm="linf")
    with pytest.raises(ValueError, match="max_rows_per_group"):
        histogram_sensitivity(max_rows_per_group=0)
