"""Meta-estimators plan a total from each step's ``_planned_privacy_spend``."""

from __future__ import annotations

import math

from skdp.linear_model import DPLinearRegression
from skdp.pipeline import check_pipeline_privacy, make_dp_pipeline
from skdp.preprocessing import DPSimpleImputer


def test_constant_imputer_plans_no_spend_and_mean_imputer_its_epsilon():
    free = DPSimpleImputer(strategy="constant", fill_value=0.0, epsilon=1.0)
    charged = DPSimpleImputer(strategy="mean", epsilon=0.3, bounds=(0.0, 1.0))
    assert free._planned_privacy_spend() == (0.0, 0.0)
    assert charged._planned_privacy_spend() == (0.3, 0.0)
    model = DPLinearRegression(epsilon=0.5)
    for imputer, total in ((free, 0.5), (charged, 0.8)):
        report = check_pipeline_privacy(make_dp_pipeline(imputer, model))
        assert math.isclose(report.epsilon, total)
