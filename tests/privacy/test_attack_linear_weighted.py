"""Attack: one patient with many extreme rows against DPLinearRegression's weighted
contribution bounding (``groups`` with ``contribution="weight"``: every row of a patient
with ``n_p`` rows weighted by ``min(1, k / n_p)``).

The game of ``test_attack_patient_level.py``: D versus D plus one patient whose rows
all sit at the corner of the box, scored by the prediction at that corner. With
``max_rows_per_group=k`` the empirical lower bound (one-sided Clopper-Pearson at 95 %,
:func:`skdp.auditing.threshold_audit`) must stay at or below the claim however many
rows the canary has, whether the other patients have one row or several (their weights
must not move when the canary comes or goes). A correct mechanism fails each test with
probability at most about 5 %; the seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.privacy.test_attack_patient_level import EPSILON, _audit, _linear

pytestmark = pytest.mark.slow


def _worlds(canary_rows, background_rows=1, n=200, seed=0, background=(-0.2, 0.2)):
    """D: ``n`` patients of ``background_rows`` rows each, values in ``background``;
    D': D plus one patient of ``canary_rows`` rows at the corner ``x = 1, y = 1``."""
    rng = np.random.default_rng(seed)
    size = n * background_rows
    X0 = rng.uniform(*background, (size, 1))
    y0 = rng.uniform(*background, size)
    g0 = np.repeat(np.arange(n), background_rows)
    X1 = np.vstack([X0, np.ones((canary_rows, 1))])
    y1 = np.r_[y0, np.ones(canary_rows)]
    g1 = np.r_[g0, np.full(canary_rows, n)]
    return (X0, y0, g0), (X1, y1, g1)


@pytest.mark.parametrize(("k", "canary_rows"), [(5, 5), (2, 5), (5, 15)])
def test_weighted_patient_level_release_keeps_its_promise(k, canary_rows):
    res = _audit(_linear(max_rows_per_group=k), use_groups=True, worlds=_worlds(canary_rows))
    assert res.epsilon_lb <= EPSILON, res


def _background_game():
    # background patients of 3 rows each near the corner, k = 2: their weights are 2/3
    # in both worlds; a weight read off the whole table (``k / max_p n_p``) would drop
    # to 1/6 when the canary of 12 rows comes and move the slope far beyond the canary
    return _worlds(12, background_rows=3, n=70, background=(0.8, 1.0))


def test_weights_of_the_other_patients_do_not_depend_on_the_canary():
    res = _audit(_linear(max_rows_per_group=2), True, worlds=_background_game(), n_trials=400)
    assert res.epsilon_lb <= EPSILON, res


def test_control_a_weight_read_off_the_whole_table_breaks_the_claim(monkeypatch):
    """Power of the game above: weights ``k / max_p n_p`` for every row (each patient's
    total weight still at most ``k``, but every weight depends on the largest patient)."""
    import skdp.linear_model._functional_groups as groups_module
    from skdp.linear_model._functional_weights import patient_weights

    def global_weights(X, y, codes, k, dask_input):
        X, y, sizes, _ = patient_weights(X, y, codes, k, dask_input)
        largest = int(sizes.max())
        return X, y, np.full_like(sizes, largest), int(len(sizes) * min(1.0, k / largest))

    monkeypatch.setattr(groups_module, "patient_weights", global_weights)
    res = _audit(_linear(max_rows_per_group=2), True, worlds=_background_game(), n_trials=400)
    assert res.epsilon_lb > EPSILON, res


def test_control_the_same_canary_at_row_level_breaks_the_claim():
    """Power: the audit tells the worlds apart beyond the claim when the canary's rows
    are protected per row (no groups)."""
    res = _audit(_linear(), use_groups=False, worlds=_worlds(5), n_trials=400)
    assert res.epsilon_lb > EPSILON, res
