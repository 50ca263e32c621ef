"""Brute-force and property tests of the AUC / AP sensitivity formulas (spec lantz.md §5.3, §5.6).

The metrics are re-implemented here straight from their definitions (spec §5.1, negatives
ranked first on ties) so that the tests do not depend on ``skdp.metrics``.
Neighbouring relation: replace one row (its label and/or its score), N public.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.mechanisms.sensitivity import (
    ap_local_sensitivity,
    ap_smooth_sensitivity,
    auc_local_sensitivity,
    auc_smooth_sensitivity,
    count_smooth_sensitivity,
)

BETA_LAP = 1.0 / (2.0 * math.log(200.0))  # epsilon=1, delta=0.01
BETA_CAUCHY = 1.0 / 6.0  # epsilon=1, gamma=2


def auc_oracle(scores, labels):
    """(7.1): fraction of (negative, positive) pairs with x < y; 0.5 if a class is empty."""
    pos = [s for s, lab in zip(scores, labels, strict=True) if lab]
    neg = [s for s, lab in zip(scores, labels, strict=True) if not lab]
    if not pos or not neg:
        return 0.5
    return sum(x < y for x in neg for y in pos) / (len(pos) * len(neg))


def ap_oracle(scores, labels):
    """(7.2) with s_j = #{i: x_i >= y_j}; 0 without positives."""
    pos = sorted((s for s, lab in zip(scores, labels, strict=True) if lab), reverse=True)
    neg = [s for s, lab in zip(scores, labels, strict=True) if not lab]
    if not pos:
        return 0.0
    return sum(j / (j + sum(x >= y for x in neg)) for j, y in enumerate(pos, start=1)) / len(pos)


# ----------------------------------------------------------------------------- worked values


@pytest.mark.parametrize(
    ("n", "N", "beta", "expected"),
    [
        (500, 1000, BETA_LAP, 0.002),
        (100, 1000, BETA_LAP, 0.01),
        (10, 1000, BETA_LAP, 0.427703),
        (100, 200, BETA_LAP, 0.01),
        (1000, 2000, BETA_LAP, 0.001),
        (500, 1000, BETA_CAUCHY, 0.002),
        (100, 1000, BETA_CAUCHY, 0.01),
        (10, 1000, BETA_CAUCHY, 0.22313),
    ],
)
def test_auc_smooth_sensitivity_worked_values(n, N, beta, expected):
    """Spec §5.5 worked-values table (AUC rows)."""
    assert auc_smooth_sensitivity(n, N, beta) == pytest.approx(expected, rel=2e-5)


@pytest.mark.parametrize(
    ("n", "N", "beta", "expected"),
    [
        (100, 200, BETA_LAP, 0.0923024),
        (1000, 2000, BETA_LAP, 0.0138175),
        (100, 200, BETA_CAUCHY, 0.0923024),
    ],
)
def test_ap_smooth_sensitivity_worked_values(n, N, beta, expected):
    """Spec §5.5 worked-values table (AP rows, log form, capped)."""
    assert ap_smooth_sensitivity(n, N, beta, form="log") == pytest.approx(expected, rel=2e-5)


def test_worked_noise_scales():
    """Noise scales of the table: 2 S / eps (Laplace) and 6 S / eps (Cauchy), eps = 1."""
    assert 2 * auc_smooth_sensitivity(10, 1000, BETA_LAP) == pytest.approx(0.855406, rel=2e-6)
    assert 6 * auc_smooth_sensitivity(10, 1000, BETA_CAUCHY) == pytest.approx(1.33878, rel=2e-6)
    assert 6 * ap_smooth_sensitivity(100, 200, BETA_CAUCHY, form="log") == pytest.approx(
        0.553814, rel=2e-6
    )


@pytest.mark.parametrize(
    ("n", "log_form", "harmonic_form"),
    [
        (2, 3.46164, 3.4375),
        (3, 2.05319, 2.00694),
        (10, 0.593599, 0.574029),
        (100, 0.0923024, 0.0839456),
        (1000, 0.0138175, 0.0129729),
    ],
)
def test_ap_local_sensitivity_table(n, log_form, harmonic_form):
    """Spec §5.5 LS_AP table (uncapped), and the cap at 1."""
    assert ap_local_sensitivity(n, form="log", cap=False) == pytest.approx(log_form, rel=1e-5)
    assert ap_local_sensitivity(n, cap=False) == pytest.approx(harmonic_form, rel=1e-5)
    assert ap_local_sensitivity(n) == min(1.0, ap_local_sensitivity(n, cap=False))
    assert ap_local_sensitivity(n) <= ap_local_sensitivity(n, form="log")


def test_local_sensitivity_degenerate_and_vectorised():
    assert auc_local_sensitivity(0, 5) == 1.0
    assert auc_local_sensitivity(5, 0) == 1.0
    assert auc_local_sensitivity(3, 7) == pytest.approx(1 / 3)
    assert ap_local_sensitivity(0) == 1.0
    assert ap_local_sensitivity(1) == 1.0
    assert ap_local_sensitivity(5, form="log", cap=False) == pytest.approx(1.17962, rel=1e-5)
    n = np.arange(50)
    np.testing.assert_allclose(
        ap_local_sensitivity(n), [ap_local_sensitivity(int(k)) for k in n], rtol=1e-12
    )
    with pytest.raises(ValueError, match="form"):
        ap_local_sensitivity(3, form="bogus")


def test_smooth_sensitivity_limits():
    """beta = 0 gives the global sensitivity 1, beta = inf the local sensitivity (Fig. 7.3)."""
    assert auc_smooth_sensitivity(500, 1000, 0.0) == 1.0
    assert auc_smooth_sensitivity(300, 1000, math.inf) == pytest.approx(1 / 300)
    assert ap_smooth_sensitivity(300, 1000, math.inf) == pytest.approx(ap_local_sensitivity(300))
    with pytest.raises(ValueError):
        count_smooth_sensitivity([1.0, 0.5], 2, 0.1)
    with pytest.raises(ValueError):
        count_smooth_sensitivity([1.0, 0.5], 0, -0.1)


# ----------------------------------------------------------------------- exhaustive checks


def _strict_rankings(N):
    """Every dataset of N rows with distinct scores, as labels in increasing-score order."""
    return itertools.product((0, 1), repeat=N)


def _neighbours_of_ranking(labels):
    """Every replace-one neighbour: remove row k, insert a row with any label at any rank.

    Scores are half-integers so that the new row can sit strictly between, or tie with,
    any remaining row (ties cover "score unchanged, label changed" and equal scores).
    """
    N = len(labels)
    for k in range(N):
        rest = [(float(i), lab) for i, lab in enumerate(labels) if i != k]
        for new_score in np.arange(-0.5, N, 0.5):
            for new_label in (0, 1):
                rows = rest + [(float(new_score), new_label)]
                yield [s for s, _ in rows], [lab for _, lab in rows]


@pytest.mark.parametrize("N", range(1, 9))
def test_exhaustive_local_sensitivity_bounds(N):
    """|f(D) - f(D')| <= LS(D) for every ranking of N <= 8 rows and every neighbour.

    Ties are included: the inserted row may tie with any existing score. The AUC bound is
    attained for every N >= 2; the AP bound (capped, both forms) is never exceeded.
    """
    worst_auc_gap = 0.0
    for labels in _strict_rankings(N):
        scores = list(range(N))
        n = sum(labels)
        auc0, ap0 = auc_oracle(scores, labels), ap_oracle(scores, labels)
        ls_auc = auc_local_sensitivity(n, N - n)
        ls_ap_h, ls_ap_log = ap_local_sensitivity(n), ap_local_sensitivity(n, form="log")
        for s2, l2 in _neighbours_of_ranking(labels):
            d_auc = abs(auc_oracle(s2, l2) - auc0)
            d_ap = abs(ap_oracle(s2, l2) - ap0)
            assert d_auc <= ls_auc + 1e-12, (labels, s2, l2)
            assert d_ap <= ls_ap_h + 1e-12, (labels, s2, l2)
            assert d_ap <= ls_ap_log + 1e-12
            worst_auc_gap = max(worst_auc_gap, d_auc / ls_auc)
    if N >= 2:
        assert worst_auc_gap == pytest.approx(1.0)  # Thm 7.5 is tight


def test_exhaustive_tied_grid_small():
    """Spec README S8: N <= 5, 4 score levels with ties, every single-row change."""
    cells = [(s, lab) for s in range(4) for lab in (0, 1)]
    for N in range(1, 6):
        for data in itertools.combinations_with_replacement(cells, N):
            scores = [s for s, _ in data]
            labels = [lab for _, lab in data]
            n = sum(labels)
            auc0, ap0 = auc_oracle(scores, labels), ap_oracle(scores, labels)
            for k in range(N):
                for new in cells:
                    s2 = scores[:k] + [new[0]] + scores[k + 1 :]
                    l2 = labels[:k] + [new[1]] + labels[k + 1 :]
                    assert abs(auc_oracle(s2, l2) - auc0) <= auc_local_sensitivity(n, N - n) + 1e-12
                    assert abs(ap_oracle(s2, l2) - ap0) <= ap_local_sensitivity(n) + 1e-12


# ------------------------------------------------------------------ hypothesis properties


@st.composite
def neighbouring_pairs(draw):
    """A random dataset with many ties and a neighbour (label and/or score of one row changed)."""
    N = draw(st.integers(1, 40))
    levels = draw(st.integers(1, 6))
    scores = draw(st.lists(st.integers(0, levels), min_size=N, max_size=N))
    labels = draw(st.lists(st.integers(0, 1), min_size=N, max_size=N))
    k = draw(st.integers(0, N - 1))
    change = draw(st.sampled_from(["label", "score", "both"]))
    s2, l2 = list(scores), list(labels)
    if change in ("label", "both"):
        l2[k] = 1 - l2[k]
    if change in ("score", "both"):
        s2[k] = draw(st.integers(0, levels))
    return scores, labels, s2, l2


@given(neighbouring_pairs())
def test_random_neighbours_respect_local_sensitivity(pair):
    scores, labels, s2, l2 = pair
    N, n = len(labels), sum(labels)
    assert (
        abs(auc_oracle(s2, l2) - auc_oracle(scores, labels))
        <= auc_local_sensitivity(n, N - n) + 1e-12
    )
    d_ap = abs(ap_oracle(s2, l2) - ap_oracle(scores, labels))
    assert d_ap <= ap_local_sensitivity(n) + 1e-12
    assert d_ap <= ap_local_sensitivity(n, form="log") + 1e-12


@given(
    N=st.integers(1, 300),
    frac=st.floats(0, 1),
    beta=st.floats(1e-4, 3.0),
    form=st.sampled_from(["harmonic", "log"]),
)
def test_smooth_sensitivity_is_smooth_upper_bound(N, frac, beta, form):
    """S*(D) >= LS(D) and S*(D) <= e^beta S*(D') whenever the counts differ by one (Def 7.3)."""
    n = int(round(frac * N))
    s_auc = auc_smooth_sensitivity(n, N, beta)
    s_ap = ap_smooth_sensitivity(n, N, beta, form=form)
    assert s_auc >= auc_local_sensitivity(n, N - n) - 1e-15
    assert s_ap >= ap_local_sensitivity(n, form=form) - 1e-15
    assert s_auc <= 1.0 and s_ap <= 1.0
    for n2 in (n - 1, n + 1):
        if 0 <= n2 <= N:
            assert s_auc <= math.exp(beta) * auc_smooth_sensitivity(n2, N, beta) * (1 + 1e-12)
            assert s_ap <= math.exp(beta) * ap_smooth_sensitivity(n2, N, beta, form=form) * (
                1 + 1e-12
            )


def test_smooth_sensitivity_matches_direct_maximum():
    """The vectorised maximum equals a direct loop over i = 0..N."""
    N, beta = 57, 0.13
    for n in range(N + 1):
        direct = max(
            auc_local_sensitivity(i, N - i) * math.exp(-beta * abs(i - n)) for i in range(N + 1)
        )
        assert auc_smooth_sensitivity(n, N, beta) == pytest.approx(direct, rel=1e-12)
        direct_ap = max(
            ap_local_sensitivity(i) * math.exp(-beta * abs(i - n)) for i in range(N + 1)
        )
        assert ap_smooth_sensitivity(n, N, beta) == pytest.approx(direct_ap, rel=1e-12)
