"""The AUC re-identification attack of Lantz 2016 §7.3.1 (spec lantz.md §5.4, §5.6 item 9).

The adversary knows every (score, label) pair except the target's, and the released AUC
of the full data, but not the target's score. For every insertion position and each class
it computes the AUC the full data would have, and guesses the class whose AUC comes
closest to the released value (on ties: the most frequent class among the known rows).
It succeeds well above chance against the exact AUC on small N and falls to chance
against the DP AUC at epsilon = 0.1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from skdp.metrics import dp_roc_auc_score
from skdp.metrics._smooth import _exact_auc_ap


def attack(known_scores, known_labels, released):
    """Guess the hidden row's label from the other rows and the released AUC."""
    levels = np.unique(known_scores)
    # one candidate score per insertion position: below all, between neighbours, above all
    candidates = np.r_[levels[0] - 1.0, (levels[:-1] + levels[1:]) / 2, levels[-1] + 1.0]
    best = {}
    for label in (0, 1):
        dists = []
        for t in candidates:
            labels = np.r_[known_labels, label].astype(bool)
            auc = _exact_auc_ap(labels, np.r_[known_scores, t])[0]
            dists.append(abs(auc - released))
        best[label] = min(dists)
    if best[0] != best[1]:
        return int(best[1] < best[0])
    return int(np.mean(known_labels) > 0.5)  # most frequent known class (0 on a tie)


def run_attack(release, n_trials, N, seed):
    rng = np.random.default_rng(seed)
    wins = 0
    for trial in range(n_trials):
        y = rng.integers(0, 2, N)
        s = rng.normal(0.0, 1.0, N) + y  # positives score higher on average
        released = release(y, s, trial)
        wins += attack(s[1:], y[1:], released) == y[0]
    return wins


N_TRIALS = 600


def test_attack_succeeds_against_the_exact_auc():
    wins = run_attack(lambda y, s, t: dp_roc_auc_score(y, s, epsilon=math.inf), N_TRIALS, 8, 0)
    assert wins / N_TRIALS > 0.6
    assert binomtest(wins, N_TRIALS, 0.5, alternative="greater").pvalue < 1e-6


@pytest.mark.parametrize("delta", [0.0, 1e-3])
def test_attack_falls_to_chance_against_the_dp_auc(delta):
    """At epsilon = 0.1 no attack can beat e^0.1 / (1 + e^0.1) = 0.525 for a uniform prior."""

    def release(y, s, trial):
        return dp_roc_auc_score(y, s, epsilon=0.1, delta=delta, random_state=trial)

    wins = run_attack(release, N_TRIALS, 8, 0)
    bound = math.exp(0.1) / (1 + math.exp(0.1))
    # one-sided test at level 0.001 against the DP bound
    assert binomtest(wins, N_TRIALS, bound, alternative="greater").pvalue > 1e-3
    assert abs(wins / N_TRIALS - 0.5) < 0.08
