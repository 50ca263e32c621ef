"""Attack: one patient of K = 16 rows against ``DPMarginalSynthesizer(contribution="clip")``.

The game (as in ``test_attack_patient_level_synthesis.py``): D (patients with one row
each in the cells (a, p) and (b, p)) versus D plus one patient of K rows, released by the
2-way measurement of MST on two columns (``noisy_two_way_``, ``compress=False``) at
epsilon = 1, delta = 1e-5. The attack's score is the sum of the released cells the
patient's rows fall in. Two patients probe the two worst cases of the clipped
sensitivity (:func:`skdp.mechanisms.sensitivity.clipped_histogram_sensitivity`): K rows
in one cell (clipped to ``sqrt(K)``) and K rows in K distinct cells (L2 norm ``sqrt(K)``,
not clipped). With ``groups=`` and ``contribution="clip"`` the 2-way noise is ``sqrt(K)``
times the row's, and the empirical lower bound must stay at or below the claim; the
control, the per-row release of the same tables (noise of one row), proves more than
the claim for the one-cell patient (a shift of ``K`` rows in one cell). One-sided
Clopper-Pearson bound at 95 % confidence (:func:`skdp.auditing.threshold_audit`); the
seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from skdp.auditing import threshold_audit
from skdp.synthesis import DPMarginalSynthesizer

K = 16
EPSILON, DELTA = 1.0, 1e-5
N = 60
CATS = {"u": list("abcdefgh"), "v": ["p", "q"]}
PATIENTS = {
    "one-cell": [("c", "p")] * K,
    "spread": [(u, v) for u in CATS["u"] for v in CATS["v"]],  # 16 distinct cells
}


def _worlds(patient):
    rng = np.random.default_rng(0)
    X0 = pd.DataFrame({"u": rng.choice(["a", "b"], N), "v": ["p"] * N})
    X1 = pd.concat([X0, pd.DataFrame(PATIENTS[patient], columns=["u", "v"])], ignore_index=True)
    return (X0, np.arange(N)), (X1, np.r_[np.arange(N), [N] * K])


def _score(est, patient):
    y = est.noisy_two_way_[("u", "v")]
    cells = {(CATS["u"].index(a), CATS["v"].index(b)) for a, b in PATIENTS[patient]}
    return float(sum(y[c] for c in cells))


def _audit(patient, grouped, n_trials=1000, seed=1):
    worlds = _worlds(patient)
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, g = worlds[label]
        est = DPMarginalSynthesizer(
            epsilon=EPSILON, delta=DELTA, categories=CATS, selection="mst", compress=False,
            max_rows_per_group=K if grouped else None, contribution="clip",
            random_state=int(rng.integers(2**31)),
        )  # fmt: skip
        est.fit(X, groups=g if grouped else None)
        scores[t] = _score(est, patient)
    return threshold_audit(scores, labels, delta=DELTA, epsilon=EPSILON)


@pytest.mark.slow
def test_row_level_release_breaks_its_promise_for_the_one_cell_patient():
    """Control: the audit has the power to see a per-row release's shift of ``K``."""
    res = _audit("one-cell", grouped=False)
    assert res.epsilon_lb > EPSILON, res


@pytest.mark.slow
@pytest.mark.parametrize("patient", sorted(PATIENTS))
def test_clipped_patient_level_release_keeps_its_promise(patient):
    res = _audit(patient, grouped=True)
    assert res.epsilon_lb <= EPSILON, res
