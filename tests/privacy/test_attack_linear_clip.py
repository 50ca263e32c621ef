"""Attack: one patient with many extreme rows against DPLinearRegression's norm clipping
of each patient's summed statistics (``groups`` with ``contribution="clip"``; the count
released with the statistics' noise).

The game of ``test_attack_patient_level.py``: D versus D plus one patient whose rows
all sit at the corner of the box, scored by the prediction at that corner. With
``max_rows_per_group=k`` the empirical lower bound (one-sided Clopper-Pearson at 95 %,
:func:`skdp.auditing.threshold_audit`) must stay at or below the claim however many
rows the canary has, with or without the intercept (whose count is then released), and
whatever the other patients look like (their clip factors must not move when the canary
comes or goes). A correct mechanism fails each test with probability at most about 5 %;
the seeds are fixed. The control without clipping shows the game's power.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.privacy.test_attack_linear_weighted import _worlds
from tests.privacy.test_attack_patient_level import EPSILON, _audit, _linear

pytestmark = pytest.mark.slow


def _clip(max_rows_per_group, fit_intercept=False):
    """The game's estimator of ``test_attack_patient_level`` (no intercept: the whole
    budget on the statistics, a fixed ridge) with ``contribution="clip"``; with an
    intercept the default release, centre and eigenvalue included, and the count
    released."""
    base = _linear(max_rows_per_group)

    def make(seed):
        est = base(seed).set_params(contribution="clip")
        if fit_intercept:
            est.set_params(fit_intercept=True, regularization="adaptive")
        return est

    return make


@pytest.mark.parametrize(("k", "canary_rows"), [(5, 5), (2, 5), (2, 40)])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_clipped_patient_level_release_keeps_its_promise(k, canary_rows, fit_intercept):
    res = _audit(_clip(k, fit_intercept), use_groups=True, worlds=_worlds(canary_rows))
    assert res.epsilon_lb <= EPSILON, res


def test_clip_factors_of_the_other_patients_do_not_depend_on_the_canary():
    # background patients of 3 rows near the corner, k = 2: each is clipped on its own
    # sums in both worlds; the canary of 12 rows adds its own clipped term only
    worlds = _worlds(12, background_rows=3, n=70, background=(0.8, 1.0))
    res = _audit(_clip(2), True, worlds=worlds, n_trials=400)
    assert res.epsilon_lb <= EPSILON, res


def test_control_without_clipping_the_canary_breaks_the_claim(monkeypatch):
    """Power: every patient's sums entering whole (``c_p = 1``) with the noise of the
    clip norm: the canary of 40 rows moves the release by 20 times that norm."""
    import skdp.linear_model._functional_clip as clip_module

    monkeypatch.setattr(clip_module, "_clip_factors", lambda sums, n_p, *args: np.ones(n_p.size))
    res = _audit(_clip(2), True, worlds=_worlds(40), n_trials=400)
    assert res.epsilon_lb > EPSILON, res
