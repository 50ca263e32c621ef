"""Attacks through pipeline steps the checker took for public (issue: hardening,
privacy items 5 and 6).

* A ``FunctionTransformer`` is stateless, but its ``func`` receives the whole batch:
  ``lambda A: A - A.mean(0)`` centres every row by the private mean, with no noise.
  Before the fix :func:`~skdp.pipeline.check_pipeline_privacy` accepted it as public and
  a :class:`~skdp.pipeline.DPPipeline` reported ε = 1, "exact": the transformed rows
  of two neighbouring data sets differ by the shift of the mean, in every row.
  Now a plain ``FunctionTransformer`` learns without a guarantee; a function the user
  declares row-wise goes in :class:`~skdp.preprocessing.RowwiseFunctionTransformer`.
* scikit-learn's ``OneHotEncoder(handle_unknown="error")`` was refused while
  :class:`~skdp.preprocessing.PublicOneHotEncoder` with the same behaviour was
  accepted. Both refuse an undeclared level; the one rule (the input-domain rule) is
  that such a refusal names the column and never the value, as every skdp estimator's
  does. scikit-learn's prints the value, so it stays refused, for that reason.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skdp.exceptions import PrivacyLeakWarning
from skdp.linear_model import DPLogisticRegression
from skdp.pipeline import DPPipeline, check_pipeline_privacy
from skdp.preprocessing import PublicOneHotEncoder, RowwiseFunctionTransformer
from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer

RARE = "porphyria"


def _model():
    return DPLogisticRegression(
        epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], mechanism="objective", random_state=0
    )


def _rows(n=50, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, 2))
    X[-1] += shift
    return X, (X[:, 0] > 0).astype(int)


def test_batch_statistic_in_a_function_transformer_is_not_public():
    centre = FunctionTransformer(lambda A: A - A.mean(0))
    # the leak: one row moves every transformed row, with no noise
    X, _ = _rows()
    X2, _ = _rows(shift=0.4)
    moved = centre.fit_transform(X)[:-1] - centre.fit_transform(X2)[:-1]
    assert np.abs(moved).max() > 1e-3
    report = check_pipeline_privacy(DPPipeline([("centre", centre), ("model", _model())]))
    assert report.steps[0].status == "learns_without_guarantee"
    assert "RowwiseFunctionTransformer" in report.steps[0].reason
    with pytest.raises(ValueError, match="learns from the rows without a privacy"):
        DPPipeline([("centre", centre), ("model", _model())]).fit(*_rows())


def test_declared_rowwise_function_is_public_and_reported():
    pipe = DPPipeline([("log", RowwiseFunctionTransformer(func=np.tanh)), ("model", _model())]).fit(
        *_rows()
    )
    assert pipe.epsilon_spent_ == 1.0 and pipe.privacy_guarantee_ == "exact"
    step = pipe.named_steps["log"]
    assert step.epsilon_spent_ == 0.0 and step.privacy_guarantee_ == "exact"
    checked = RowwiseFunctionTransformer(func=np.tanh, inverse_func=np.arctanh, check_inverse=True)
    with pytest.warns(PrivacyLeakWarning, match="check_inverse"):
        checked.fit(_rows()[0])
    assert checked.epsilon_spent_ == np.inf and checked.privacy_guarantee_ == "none"


# ----------------------------------------------------------- the input-domain rule
def _levels(rare):
    dx = np.array([["flu"], ["asthma"]] * 10, dtype=object)
    if rare:
        dx[-1, 0] = RARE
    return dx, np.arange(20) % 2


def test_undeclared_level_refusals_name_no_value():
    """Every refusal of an undeclared level by a step or estimator skdp accepts names the
    column only (the neighbouring relation's domain is the declared one)."""
    X, y = _levels(rare=True)
    cats = [["flu", "asthma"]]
    refusals = []
    public = PublicOneHotEncoder(categories=cats, handle_unknown="error")
    pipe = DPPipeline([("onehot", public), ("model", _model())])
    assert check_pipeline_privacy(pipe).steps[0].status == "public"
    df = pd.DataFrame({"dx": X[:, 0]})
    for fit in (
        lambda: pipe.fit(X, y),
        lambda: DPMarginalSynthesizer(epsilon=1.0, categories={"dx": cats[0]}).fit(df),
        lambda: DPHistogramSynthesizer(epsilon=1.0, categories={"dx": cats[0]}).fit(df),
    ):
        with pytest.raises(ValueError) as info:
            fit()
        refusals.append(str(info.value))
    assert all(RARE not in message for message in refusals), refusals
    # the same data without the rare level fits
    pipe.fit(*_levels(rare=False))


def test_sklearn_onehot_error_prints_the_value_so_it_is_refused():
    X, y = _levels(rare=True)
    sk = OneHotEncoder(categories=[["flu", "asthma"]], handle_unknown="error")
    with pytest.raises(ValueError, match=RARE):
        sk.fit(X)
    step = check_pipeline_privacy(DPPipeline([("onehot", sk), ("model", _model())])).steps[0]
    assert step.status == "learns_without_guarantee"
    assert "error message" in step.reason
