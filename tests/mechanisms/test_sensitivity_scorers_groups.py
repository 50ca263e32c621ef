"""Brute-force tests of the patient-level AUC / AP sensitivities.

Neighbouring relation: add or remove one patient of at most ``k`` rows (each patient
already bounded to ``k`` rows). Every small data set (a multiset of (score, label) rows
on a 3-score domain) and every patient of at most ``k`` rows added to it is enumerated;
the change of the metric must stay within the local bound of both data sets (the add
bound of the smaller, the remove bound of the larger), and the smooth bound must be
``exp(beta)``-smooth between them. The metrics are re-implemented here from their
definitions, both tie conventions.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy.special import digamma

from skdp.mechanisms.sensitivity import (
    ap_group_local_sensitivity,
    auc_group_local_sensitivity,
    auc_local_sensitivity,
    group_count_smooth_sensitivity,
)

ROWS = [(s, lab) for s in (0, 1, 2) for lab in (0, 1)]  # the row domain
TIES = ("sklearn", "pessimistic")


def auc(rows, ties):
    pos = [s for s, lab in rows if lab]
    neg = [s for s, lab in rows if not lab]
    if not pos or not neg:
        return 0.5
    half = 0.5 if ties == "sklearn" else 0.0
    return sum((x < y) + half * (x == y) for x in neg for y in pos) / (len(pos) * len(neg))


def ap(rows, ties):
    pos = sorted((s for s, lab in rows if lab), reverse=True)
    neg = [s for s, lab in rows if not lab]
    if not pos:
        return 0.0
    if ties == "sklearn":
        return sum(sum(p >= y for p in pos) / sum(s >= y for s, _ in rows) for y in pos) / len(pos)
    return sum(j / (j + sum(x >= y for x in neg)) for j, y in enumerate(pos, start=1)) / len(pos)


def multisets(max_size):
    for size in range(max_size + 1):
        yield from itertools.combinations_with_replacement(ROWS, size)


def counts(rows):
    n = sum(lab for _, lab in rows)
    return n, len(rows) - n


def _pairs(k, max_size):
    """Every (D, D + patient) with |D| <= max_size and a patient of 1..k rows."""
    patients = [p for p in multisets(k) if p]
    for d in multisets(max_size):
        for p in patients:
            yield d, d + p


@pytest.mark.parametrize("k", [1, 2, 3])
def test_auc_group_bound_brute_force(k):
    for d, dp in _pairs(k, 6 - k):
        (n, m), (n2, m2) = counts(d), counts(dp)
        bound = min(auc_group_local_sensitivity(n, m, k), auc_group_local_sensitivity(n2, m2, k))
        for ties in TIES:
            change = abs(auc(dp, ties) - auc(d, ties))
            assert change <= bound + 1e-12, (d, dp, ties)


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("n", [6, 8, 13])
def test_auc_group_bound_is_attained(k, n):
    """Removing k positives scored below every negative from n positives above them:
    the AUC moves from (n - k) / n to 1, by k / n, the remove bound at s = n <= m."""
    m = n + 1
    small = [(2, 1)] * (n - k) + [(1, 0)] * m
    big = small + [(0, 1)] * k
    for ties in TIES:
        change = abs(auc(big, ties) - auc(small, ties))
        assert change == pytest.approx(auc_group_local_sensitivity(n, m, k))


def test_auc_group_bound_is_the_row_bound_at_k_1():
    n = np.arange(0, 50)
    m = 50 - n
    np.testing.assert_array_equal(auc_group_local_sensitivity(n, m, 1), auc_local_sensitivity(n, m))


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("form", ["harmonic", "log"])
def test_ap_group_bound_brute_force(k, form):
    for d, dp in _pairs(k, 6 - k):
        n, n2 = counts(d)[0], counts(dp)[0]
        bound = min(
            ap_group_local_sensitivity(n, k, form=form),
            ap_group_local_sensitivity(n2, k, form=form),
        )
        for ties in TIES:
            assert abs(ap(dp, ties) - ap(d, ties)) <= bound + 1e-12, (d, dp, ties)


def _harmonic(j):
    return float(digamma(j + 1.0) + np.euler_gamma)


def test_ap_one_row_steps_on_larger_sets():
    """The one-row bound G(j) on data sets too large to enumerate: random data sets
    with j positives (many ties), every kind of added row, both conventions."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        size = int(rng.integers(8, 30))
        scores = rng.integers(0, 5, size)
        labels = rng.integers(0, 2, size)
        rows = tuple(zip(scores.tolist(), labels.tolist(), strict=True))
        j = int(labels.sum())
        if j == 0:
            continue
        g = max((_harmonic(j + 1) - 1) / j, (4 + _harmonic(j)) / (4 * (j + 1)))
        assert ap_group_local_sensitivity(j + 1, 1) == pytest.approx(min(1.0, g))
        for s in range(5):
            for lab in (0, 1):
                for ties in TIES:
                    change = abs(ap(rows + ((s, lab),), ties) - ap(rows, ties))
                    assert change <= g + 1e-12


@pytest.mark.parametrize("k", [1, 3, 20])
def test_local_bounds_are_non_increasing_and_capped(k):
    c = np.arange(0, 5000)
    for values in (
        auc_group_local_sensitivity(c, c, k),
        ap_group_local_sensitivity(c, k),
        ap_group_local_sensitivity(c, k, form="log"),
    ):
        assert np.all(np.diff(values) <= 0)
        assert values.max() <= 1.0 and values.min() > 0
    assert np.all(ap_group_local_sensitivity(c, k) <= ap_group_local_sensitivity(c, k, form="log"))


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("beta", [0.05, 0.3, 2.0])
def test_group_smooth_bound_is_smooth_between_neighbours(k, beta):
    """S*(D) >= LS(D) and S*(D') <= exp(beta) S*(D) for every enumerated pair, AUC and AP.

    The bounds are functions of the counts alone: each is computed once per count (the
    same pairs and assertions, without recomputing a bound for every pair it is in)."""

    @functools.cache
    def auc_c(n, m):
        return group_count_smooth_sensitivity(
            lambda s: auc_group_local_sensitivity(s, s, k), min(n, m), k, beta
        )

    @functools.cache
    def ap_c(n):
        return group_count_smooth_sensitivity(
            lambda c: ap_group_local_sensitivity(c, k), n, k, beta
        )

    def auc_s(rows):
        return auc_c(*counts(rows))

    def ap_s(rows):
        return ap_c(counts(rows)[0])

    for d, dp in _pairs(k, 5 - k):
        for smooth in (auc_s, ap_s):
            a, b = smooth(d), smooth(dp)
            assert a <= math.exp(beta) * b * (1 + 1e-12)
            assert b <= math.exp(beta) * a * (1 + 1e-12)
        n, m = counts(d)
        assert auc_s(d) >= auc_group_local_sensitivity(n, m, k)
        assert ap_s(d) >= ap_group_local_sensitivity(n, k)


def test_group_smooth_bound_on_counts_matches_the_full_scan():
    """The truncated scan equals max over every t of exp(-beta t) L(max(0, c - t k))."""
    for k in (1, 4, 20):
        for c in (0, 1, 7, 150, 3000):
            for beta in (0.0, 0.01, 0.2, 3.0):

                def local(x, k=k):
                    return auc_group_local_sensitivity(x, x, k)

                t = np.arange(0, c // k + 3)
                full = np.max(local(np.maximum(c - t * k, 0)) * np.exp(-beta * t))
                assert group_count_smooth_sensitivity(local, c, k, beta) == pytest.approx(
                    full, rel=1e-12
                )
    assert group_count_smooth_sensitivity(
        lambda x: auc_group_local_sensitivity(x, x, 3), 30, 3, math.inf
    ) == pytest.approx(0.1)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="max_rows_per_group"):
        auc_group_local_sensitivity(3, 3, 0)
    with pytest.raises(TypeError, match="max_rows_per_group"):
        ap_group_local_sensitivity(3, "2")
    with pytest.raises(ValueError, match="form"):
        ap_group_local_sensitivity(3, 2, form="bogus")
    with pytest.raises(ValueError, match="beta"):
        group_count_smooth_sensitivity(lambda c: c * 0 + 1.0, 3, 2, -1.0)
    with pytest.raises(ValueError, match="count"):
        group_count_smooth_sensitivity(lambda c: c * 0 + 1.0, -1, 2, 1.0)
