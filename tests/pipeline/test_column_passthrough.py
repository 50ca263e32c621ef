"""A ColumnTransformer's "passthrough" stays public after the fit (issue 31 item 8).

scikit-learn fits a declared ``remainder="passthrough"`` (or a listed ``"passthrough"``) as
an identity ``FunctionTransformer``; the pipeline checker used to see only that fitted
clone and refused the pipeline after ``fit`` as one whose step "may compute a statistic of
the batch". Restricting a DP imputer to the columns with missing values is the documented
way to keep its noise down, so this must work.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import FunctionTransformer

from skdp.linear_model import DPLinearRegression
from skdp.pipeline import DPPipeline, check_pipeline_privacy
from skdp.preprocessing import DPSimpleImputer


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    y = X[:, 1].copy()
    X[:20, 0] = np.nan
    return X, y


def _pipe(ct):
    reg = DPLinearRegression(epsilon=0.9, bounds_X=(0, 1), bounds_y=(0, 1), random_state=0)
    return DPPipeline([("ct", ct), ("reg", reg)])


@pytest.mark.parametrize("listed", [False, True])
def test_passthrough_is_public_before_and_after_fit(listed):
    imp = DPSimpleImputer(epsilon=0.1, bounds=(0, 1), random_state=0)
    if listed:
        ct = ColumnTransformer([("imp", imp, [0]), ("rest", "passthrough", [1, 2])])
    else:
        ct = ColumnTransformer([("imp", imp, [0])], remainder="passthrough")
    pipe = _pipe(ct).fit(*_data())
    assert pipe.epsilon_spent_ == pytest.approx(1.0)
    verdict = check_pipeline_privacy(pipe)
    assert verdict.epsilon == pytest.approx(1.0)


def test_a_real_function_transformer_is_still_refused():
    imp = DPSimpleImputer(epsilon=0.1, bounds=(0, 1), random_state=0)
    centre = FunctionTransformer(lambda A: A - A.mean(0))
    ct = ColumnTransformer([("imp", imp, [0])], remainder=centre)
    with pytest.raises(ValueError, match="RowwiseFunctionTransformer"):
        _pipe(ct).fit(*_data())
