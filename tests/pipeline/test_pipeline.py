"""DPPipeline, make_dp_pipeline and check_pipeline_privacy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.accounting import PrivacyLedger
from skdp.base import DPEstimatorMixin
from skdp.exceptions import BudgetExceededError, PrivacyLeakWarning
from skdp.linear_model import DPLinearRegression
from skdp.pipeline import (
    DPPipeline,
    PipelinePrivacyReport,
    check_pipeline_privacy,
    make_dp_pipeline,
)
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler, RowwiseFunctionTransformer


class FakeDPTransformer(DPEstimatorMixin, TransformerMixin, BaseEstimator):
    """A DP transformer whose spend is set by its parameters (test double)."""

    def __init__(self, epsilon=1.0, delta=0.0, spent=None, guarantee="exact", bounds=None):
        self.epsilon = epsilon
        self.delta = delta
        self.spent = spent
        self.guarantee = guarantee
        self.bounds = bounds

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        eps = self.epsilon if self.spent is None else self.spent
        return self._record_privacy_spent(eps, self.delta, guarantee=self.guarantee)

    def transform(self, X):
        return X


class FakeDPClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A DP classifier predicting the first class (test double)."""

    def __init__(self, epsilon=1.0, delta=0.0, guarantee="exact"):
        self.epsilon = epsilon
        self.delta = delta
        self.guarantee = guarantee

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = X.shape[1]
        return self._record_privacy_spent(self.epsilon, self.delta, guarantee=self.guarantee)

    def predict(self, X):
        return np.zeros(len(X), dtype=int)

    def fit_predict(self, X, y):
        return self.fit(X, y).predict(X)


class PublicMarked(FakeDPTransformer):
    _skdp_public_transform = True

    def __init__(self, bounds=None):
        self.bounds = bounds

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self._record_privacy_spent(0.0, 0.0)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(200, 3))
    y = (X[:, 0] > 5).astype(int)
    return X, y


# ------------------------------------------------------------------ composition
def test_sequential_composition_of_the_steps(data):
    X, y = data
    pipe = DPPipeline(
        [
            ("a", FakeDPTransformer(epsilon=0.25, delta=1e-6)),
            ("b", FakeDPTransformer(epsilon=0.5, delta=2e-6)),
            ("clf", FakeDPClassifier(epsilon=1.0, delta=0.0)),
        ]
    ).fit(X, y)
    assert pipe.epsilon_spent_ == pytest.approx(1.75)
    assert pipe.delta_spent_ == pytest.approx(3e-6)
    assert pipe.privacy_guarantee_ == "exact"
    assert pipe.nonprivate_options_ == []
    assert isinstance(pipe.privacy_report_, PipelinePrivacyReport)
    assert [s.name for s in pipe.privacy_report_.steps] == ["a", "b", "clf"]
    assert all(s.fitted for s in pipe.privacy_report_.steps)
    ledger = PrivacyLedger(epsilon_budget=2.0, delta_budget=1e-5)
    ledger.spend_fitted(pipe)
    assert ledger.epsilon_spent == pytest.approx(1.75)


def test_total_uses_the_fitted_spend_not_the_declared_budget(data):
    X, y = data
    pipe = DPPipeline([("a", FakeDPTransformer(epsilon=1.0, spent=0.0)), ("c", FakeDPClassifier())])
    assert check_pipeline_privacy(pipe).epsilon == 2.0  # declared, before fit
    assert pipe.fit(X, y).epsilon_spent_ == 1.0


def test_weakest_guarantee(data):
    X, y = data
    pipe = DPPipeline(
        [("a", FakeDPTransformer(guarantee="approximate")), ("c", FakeDPClassifier())]
    ).fit(X, y)
    assert pipe.privacy_guarantee_ == "approximate"


def test_real_private_pipeline(data):
    X, _ = data
    y = X @ [0.5, -0.2, 0.1]
    pipe = make_dp_pipeline(
        PublicBoundsScaler(bounds=(0, 10)),
        DPStandardScaler(epsilon=0.5, bounds=(0, 1), random_state=0),
        DPLinearRegression(epsilon=1.0, bounds_X=(-3, 3), bounds_y=(-5, 10), random_state=0),
    ).fit(X, y)
    steps = pipe.named_steps
    expected = sum(s.epsilon_spent_ for s in steps.values())
    assert pipe.epsilon_spent_ == pytest.approx(expected) == pytest.approx(1.5)
    assert pipe.privacy_guarantee_ == "exact"
    assert pipe.predict(X).shape == (200,)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    "step",
    [
        StandardScaler(),
        MinMaxScaler(),
        SimpleImputer(),
        OrdinalEncoder(),
        OneHotEncoder(),  # categories="auto"
        OneHotEncoder(categories=[[0, 1]] * 3),  # handle_unknown="error"
        OneHotEncoder(categories=[[0, 1]] * 3, handle_unknown="warn"),
        OneHotEncoder(categories=[[0, 1]] * 3, handle_unknown="ignore", drop="first"),
        OneHotEncoder(categories=[[0, 1]] * 3, handle_unknown="ignore", min_frequency=5),
        MissingIndicator(),  # features="missing-only"
        FunctionTransformer(np.log1p, np.expm1),  # check_inverse=True runs both on the rows
        FunctionTransformer(),  # not declared row-wise: func may read across rows
        FunctionTransformer(lambda A: A - A.mean(0)),  # centres by the private batch mean
        RowwiseFunctionTransformer(func=np.log1p, inverse_func=np.expm1, check_inverse=True),
        FakeDPTransformer(bounds="data"),
        FakeDPTransformer(epsilon=math.inf),
        Pipeline([("inner", StandardScaler())]),
    ],
    ids=lambda s: type(s).__name__,
)
def test_a_step_that_learns_without_guarantee_is_refused(step, data):
    X, y = data
    pipe = DPPipeline([("prep", step), ("clf", FakeDPClassifier())])
    with pytest.raises(ValueError, match="'prep.*' .*learns from the rows without a privacy"):
        pipe.fit(X, y)
    assert not hasattr(pipe, "epsilon_spent_")


def test_refusal_message_names_the_step_and_class(data):
    X, y = data
    with pytest.raises(ValueError, match=r"step 'standardscaler' \(StandardScaler\)"):
        make_dp_pipeline(StandardScaler(), FakeDPClassifier()).fit(X, y)


def test_non_dp_final_estimator_is_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="'logisticregression'"):
        make_dp_pipeline(PublicBoundsScaler(bounds=(0, 10)), LogisticRegression()).fit(X, y)


def test_several_leaking_steps_are_all_named(data):
    X, y = data
    pipe = make_dp_pipeline(StandardScaler(), SimpleImputer(), FakeDPClassifier())
    with pytest.raises(ValueError, match="'standardscaler'.*'simpleimputer'"):
        pipe.fit(X, y)


def test_allow_nonprivate_warns_and_reports_inf(data):
    X, y = data
    pipe = make_dp_pipeline(StandardScaler(), FakeDPClassifier(), allow_nonprivate=True)
    with pytest.warns(PrivacyLeakWarning, match="standardscaler"):
        pipe.fit(X, y)
    assert pipe.epsilon_spent_ == math.inf
    assert pipe.privacy_guarantee_ == "none"
    assert pipe.nonprivate_options_ == ["standardscaler"]
    with pytest.raises(BudgetExceededError, match="without differential privacy"):
        PrivacyLedger(epsilon_budget=10.0).spend_fitted(pipe)


def test_allow_nonprivate_must_be_a_bool(data):
    X, y = data
    with pytest.raises(InvalidParameterError):
        DPPipeline([("c", FakeDPClassifier())], allow_nonprivate="yes").fit(X, y)


# ------------------------------------------------------------------ public steps
@pytest.mark.parametrize(
    "step",
    [
        "passthrough",
        None,
        RowwiseFunctionTransformer(),
        RowwiseFunctionTransformer(func=np.log1p),
        RowwiseFunctionTransformer(func=np.log1p, inverse_func=np.expm1),
        OneHotEncoder(categories=[[0.0, 1.0]] * 3, handle_unknown="ignore"),
        OneHotEncoder(categories=[[0.0, 1.0]] * 3, handle_unknown="infrequent_if_exist"),
        MissingIndicator(features="all"),
        PublicMarked(),
    ],
    ids=lambda s: s if s is None or isinstance(s, str) else type(s).__name__,
)
def test_public_steps_are_accepted_and_spend_nothing(step, data):
    X, y = data
    pipe = DPPipeline([("prep", step), ("clf", FakeDPClassifier(epsilon=0.5))]).fit(X, y)
    assert pipe.epsilon_spent_ == 0.5
    assert pipe.privacy_report_.steps[0].status == "public"


def test_public_marker_with_a_nonzero_spend_counts_as_private(data):
    X, y = data

    class Marked(FakeDPTransformer):
        _skdp_public_transform = True

    report = check_pipeline_privacy(DPPipeline([("m", Marked(epsilon=0.3))]).fit(X, y))
    assert report.steps[0].status == "private"
    assert report.epsilon == pytest.approx(0.3)


# ------------------------------------------------------------------ nested meta-estimators
def _frame():
    rng = np.random.default_rng(1)
    n = 120
    return pd.DataFrame(
        {
            "age": rng.uniform(18, 90, n),
            "bmi": rng.uniform(15, 45, n),
            "sbp": rng.uniform(90, 200, n),
            "sex": rng.choice(["F", "M"], n),
        }
    ), rng.integers(0, 2, n)


def _nested(bmi_step):
    numeric = FeatureUnion(
        [
            ("scaled", FakeDPTransformer(epsilon=0.25)),
            ("raw", Pipeline([("public", PublicMarked()), ("fn", RowwiseFunctionTransformer())])),
        ]
    )
    ct = ColumnTransformer(
        [
            ("num", numeric, ["age", "sbp"]),
            ("bmi", bmi_step, ["bmi"]),
            ("sex", OneHotEncoder(categories=[["F", "M"]], handle_unknown="ignore"), ["sex"]),
        ],
        remainder="drop",
        sparse_threshold=0,
    )
    return make_pipeline(ct, FakeDPClassifier(epsilon=1.0, delta=1e-6))


def test_nested_column_transformer_verdicts():
    X, y = _frame()
    report = check_pipeline_privacy(_nested(StandardScaler()))
    verdict = {s.name: s.status for s in report.steps}
    assert verdict == {
        "columntransformer__num__scaled": "private",
        "columntransformer__num__raw__public": "public",
        "columntransformer__num__raw__fn": "public",
        "columntransformer__bmi": "learns_without_guarantee",
        "columntransformer__sex": "public",
        "columntransformer__remainder": "public",
        "fakedpclassifier": "private",
    }
    assert report.epsilon == math.inf
    assert report.privacy_guarantee == "none"
    assert not report.is_private
    assert [s.name for s in report.learns_without_guarantee] == ["columntransformer__bmi"]
    assert "total" in str(report)


def test_nested_private_composition_before_and_after_fit():
    X, y = _frame()
    pipe = _nested(FakeDPTransformer(epsilon=0.5, delta=1e-7))
    before = check_pipeline_privacy(pipe)
    assert before.is_private and not before.fitted
    assert before.epsilon == pytest.approx(0.25 + 0.5 + 1.0)
    assert before.privacy_guarantee == "exact"  # planned from the parameters
    dp = DPPipeline(pipe.steps).fit(X, y)
    after = dp.privacy_report_
    assert after.fitted
    assert dp.epsilon_spent_ == pytest.approx(1.75)
    assert dp.delta_spent_ == pytest.approx(1.1e-6)
    assert dp.privacy_guarantee_ == "exact"
    # the fitted ColumnTransformer's clones are the ones read
    assert all(s.fitted for s in after.steps if s.status == "private")


def test_column_selectors():
    X, y = _frame()
    by_dtype = ColumnTransformer(
        [("num", FakeDPTransformer(epsilon=0.1), make_column_selector(dtype_include="number"))]
    )
    assert check_pipeline_privacy(by_dtype).is_private
    by_callable = ColumnTransformer(
        [("num", FakeDPTransformer(epsilon=0.1), lambda df: [c for c in df if df[c].std() > 1])]
    )
    report = check_pipeline_privacy(by_callable)
    assert not report.is_private
    assert "callable column selector" in report.learns_without_guarantee[0].reason


def test_remainder_estimator_is_checked():
    ct = ColumnTransformer([("a", "passthrough", ["age"])], remainder=StandardScaler())
    report = check_pipeline_privacy(ct)
    assert [s.name for s in report.learns_without_guarantee] == ["remainder"]


def test_a_bare_estimator():
    assert check_pipeline_privacy(FakeDPClassifier(epsilon=2.0)).epsilon == 2.0
    assert not check_pipeline_privacy(LogisticRegression()).is_private


# ------------------------------------------------------------------ sklearn API
def test_make_dp_pipeline_names_and_params(data):
    pipe = make_dp_pipeline(
        FakeDPTransformer(), FakeDPTransformer(), FakeDPClassifier(), allow_nonprivate=False
    )
    assert [n for n, _ in pipe.steps] == [
        "fakedptransformer-1",
        "fakedptransformer-2",
        "fakedpclassifier",
    ]
    assert isinstance(pipe, DPPipeline) and isinstance(pipe, Pipeline)
    pipe.set_params(fakedpclassifier__epsilon=0.1)
    cloned = clone(pipe)
    assert cloned.get_params()["fakedpclassifier__epsilon"] == 0.1
    assert cloned.get_params()["allow_nonprivate"] is False
    X, y = data
    assert cloned.fit(X, y).epsilon_spent_ == pytest.approx(2.1)


def test_fit_transform_and_fit_predict_record_the_spend(data):
    X, y = data
    pipe = make_dp_pipeline(FakeDPTransformer(epsilon=0.2), FakeDPTransformer(epsilon=0.3))
    Xt = pipe.fit_transform(X)
    assert Xt.shape == X.shape and pipe.epsilon_spent_ == pytest.approx(0.5)
    pipe = make_dp_pipeline(FakeDPTransformer(epsilon=0.2), FakeDPClassifier(epsilon=0.3))
    assert pipe.fit_predict(X, y).shape == (200,)
    assert pipe.epsilon_spent_ == pytest.approx(0.5)
    with pytest.raises(ValueError, match="learns"):
        make_dp_pipeline(StandardScaler(), FakeDPTransformer()).fit_transform(X)
    with pytest.raises(ValueError, match="learns"):
        make_dp_pipeline(StandardScaler(), FakeDPClassifier()).fit_predict(X, y)


def test_available_methods_follow_the_final_step():
    reg = make_dp_pipeline(FakeDPTransformer(), DPLinearRegression())
    assert not hasattr(reg, "fit_transform") and not hasattr(reg, "fit_predict")
    assert hasattr(make_dp_pipeline(FakeDPTransformer()), "fit_transform")


def test_set_output_pandas(data):
    X, y = _frame()
    pipe = make_dp_pipeline(
        ColumnTransformer(
            [("num", PublicBoundsScaler(bounds=(0, 200)), ["age", "bmi"])], sparse_threshold=0
        )
    ).set_output(transform="pandas")
    out = pipe.fit_transform(X)
    assert isinstance(out, pd.DataFrame)
    assert pipe.epsilon_spent_ == 0.0


# scikit-learn's own Pipeline fails these two checks in the same way (fit replaces the
# steps with their fitted versions); DPPipeline keeps that behaviour on purpose.
_PIPELINE_FAILS = {
    "check_estimators_overwrite_params": "sklearn's Pipeline fails it too: fit stores the "
    "fitted steps in steps",
    "check_dont_overwrite_parameters": "sklearn's Pipeline fails it too: fit stores the fitted "
    "steps in steps",
}


@parametrize_with_checks(
    [
        DPPipeline(
            [
                ("fn", RowwiseFunctionTransformer()),
                ("model", DPLinearRegression(epsilon=1e6, random_state=0)),
            ]
        )
    ],
    expected_failed_checks=lambda est: _PIPELINE_FAILS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
