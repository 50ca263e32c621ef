"""A DP search or cross-validation of a survival model is refused before any row is
read, with the reason (no DP concordance scorer), whatever the scoring."""

from __future__ import annotations

import numpy as np
import pytest

from skdp.metrics import make_dp_scorer
from skdp.model_selection import DPGridSearchCV, dp_cross_validate
from skdp.pipeline import make_dp_pipeline
from skdp.preprocessing import PublicBoundsScaler
from skdp.survival import DPCoxPH, make_survival_target


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 2))
    t = rng.exponential(1.0, 200)
    return X, make_survival_target(t < 3, np.minimum(t, 3))


@pytest.mark.parametrize("scoring", [None, "r2"])
def test_grid_search_of_a_cox_model_is_refused_with_the_reason(scoring):
    X, y = _data()
    if scoring is not None:
        scoring = make_dp_scorer(scoring, epsilon=0.5, bounds_y=(0, 3))
    search = DPGridSearchCV(
        DPCoxPH(bounds_X=(-1, 1), max_time=3), {"n_iter": [4, 8]}, epsilon=2.0, scoring=scoring
    )
    with pytest.raises(TypeError, match="no DP concordance scorer"):
        search.fit(X, y)


def test_cross_validation_of_a_pipeline_ending_in_cox_is_refused():
    X, y = _data()
    pipe = make_dp_pipeline(
        PublicBoundsScaler(bounds=(-1, 1)), DPCoxPH(bounds_X=(-1, 1), max_time=3)
    )
    scoring = make_dp_scorer("r2", epsilon=0.5, bounds_y=(0, 3))
    with pytest.raises(TypeError, match="DPCoxPH cannot be selected"):
        dp_cross_validate(pipe, X, y, scoring=scoring, cv=2)
