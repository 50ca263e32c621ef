"""``clause_score="cautious"``: the noisy majority class unless a clause beats it clearly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.ilp import DPILPClassifier
from skdp.ilp._classifier import _acceptance_bar
from skdp.ilp._search import CAUTIOUS_LEVEL, NOISE_LEVEL, noise_penalty, score_penalty
from skdp.ilp._search import search_clause as _search


def _counts_with(empty, others):
    """A coverage statistic: the empty clause covers ``empty = (P, N)``, every longer
    clause ``others = (P, N)``."""

    def counts(clauses):
        P, N = empty if len(clauses[0]) == 0 else others
        return np.full(len(clauses), P, dtype=np.int64), np.full(len(clauses), N, dtype=np.int64)

    return counts


def _theories(score, counts, seeds=100, rows=10):
    """The theory (list of clauses) of each seed's two-round fit on ``counts`` with
    the noise of ``rows`` rows per patient at epsilon 1."""
    out = []
    for seed in range(seeds):
        learned = []
        for _ in range(2):
            best, cov, levels, _, _ = _search(
                None, None, range(9), epsilon=0.5, max_clause_length=2, min_pos=1,
                rng=np.random.default_rng(seed), counts=counts, max_rows_per_group=rows,
                clause_score=score,
            )  # fmt: skip
            if best is not None and cov > _acceptance_bar(score, best, levels):
                learned.append(best)
        out.append(learned)
    return out


def test_penalties_by_score():
    alpha, beta = 0.01, 9
    assert score_penalty("noisy", alpha, beta, 2) == 0.0
    assert score_penalty("noise_aware", alpha, beta, 2) == noise_penalty(alpha, beta)
    assert score_penalty("noise_aware", alpha, beta, 2, accept=True) == 0.0
    assert score_penalty("cautious", alpha, 1, 0) == 0.0  # the majority decision
    strict = noise_penalty(alpha, beta, CAUTIOUS_LEVEL)
    assert score_penalty("cautious", alpha, beta, 1) == strict
    assert score_penalty("cautious", alpha, beta, 1, accept=True) == noise_penalty(
        alpha, beta, NOISE_LEVEL
    )
    assert strict > noise_penalty(alpha, beta, NOISE_LEVEL)


@pytest.mark.slow
def test_a_well_measured_majority_is_not_displaced_by_noise():
    # positives are the majority (the empty clause covers 300 more positives than
    # negatives), no longer clause covers anything: the noise-aware rank lets the
    # largest noise of the longer levels (40 times the empty clause's) win often
    counts = _counts_with((900, 600), (0, 0))
    wins = {
        s: np.mean([t[:1] == [()] for t in _theories(s, counts)])
        for s in ("noise_aware", "cautious")
    }
    assert wins["cautious"] >= 0.9
    assert wins["noise_aware"] <= 0.8


@pytest.mark.slow
def test_with_nothing_to_learn_the_theory_is_mostly_empty():
    # negatives are the majority and every clause covers more negatives than
    # positives: the best theory is no clause (always predict 0)
    counts = _counts_with((300, 900), (40, 120))
    empty = {
        s: np.mean([t == [] for t in _theories(s, counts)]) for s in ("noise_aware", "cautious")
    }
    assert empty["cautious"] >= 0.7
    assert empty["cautious"] > empty["noise_aware"] + 0.2


def test_without_noise_cautious_finds_the_planted_rule():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(400, 6))
    y = X[:, 0] & X[:, 2]
    fit = DPILPClassifier(epsilon=math.inf, max_clause_length=2, clause_score="cautious")
    assert fit.fit(X, y).clauses_ == [("x0", "x2")]


def test_with_little_noise_cautious_finds_the_planted_rule():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(20000, 5))
    y = X[:, 0] & X[:, 1]
    est = DPILPClassifier(epsilon=1.0, max_clause_length=2, clause_score="cautious")
    assert est.set_params(random_state=0).fit(X, y).clauses_ == [("x0", "x1")]
    assert est.epsilon_spent_ == 1.0


def _majority_hits(score, positives, seeds=10):
    """Of ``seeds`` patient-level fits (100 patients of 10 rows, labels independent of
    the atoms, ``k = 10``: the deeper levels' noise is far above any coverage), how
    many predict the majority class on every row."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(1000, 8))
    y = (rng.random(1000) < positives).astype(int)
    groups = np.repeat(np.arange(100), 10)
    hits = 0
    for seed in range(seeds):
        est = DPILPClassifier(
            epsilon=1.0, n_clauses=2, max_clause_length=2, clause_score=score,
            max_rows_per_group=10, random_state=seed,
        )  # fmt: skip
        pred = est.fit(X, y, groups=groups).predict(X)
        hits += bool((pred == int(positives > 0.5)).all())
    return hits


@pytest.mark.parametrize("positives", [0.3, 0.7])
def test_patient_level_fit_without_signal_mostly_predicts_the_majority(positives):
    cautious = _majority_hits("cautious", positives)
    assert cautious >= 6
    aware = _majority_hits("noise_aware", positives)
    assert cautious > aware
