"""Missing bounds that cannot be estimated reliably are refused (issue 31 item 6).

``bounds=None`` (``bounds_X``, ``bounds_y``) asks for a private estimate; where public
quantities (n, the number of estimated columns, epsilon, the search grid) say it cannot
be reliable, every estimator that estimates bounds refuses with a ``ValueError`` that
says what to declare. ``"private"`` opts in to the estimate (with a
``BoundsEstimateWarning``). The decision never reads the data: neighbouring data sets
get the same decision.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.exceptions import BoundsEstimateWarning
from skdp.mechanisms import bounds_estimate_unreliable, log_grid_candidates, resolve_bounds

GRID = log_grid_candidates(-1e6, 1e6).size
FAST_TORCH = {"n_iter": 2, "batch_size": 8, "device": "cpu", "dtype": "float64"}


def _table(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 10.0, size=(n, d))
    y = X @ np.arange(1.0, d + 1) + rng.normal(size=n)
    return X, y


def _neighbours(n, d=3):
    """A data set and a neighbour with one row replaced by an extreme one (same n)."""
    X, y = _table(n, d)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 9.9e5, -9.9e5
    return (X, y), (X2, y2)


def _estimators():
    """``(name, make(bounds_value), fit(estimator, X, y))`` for every estimator that
    estimates bounds privately."""
    from skdp.density import DPFlowDensity
    from skdp.linear_model import DPLinearRegression, DPLogisticRegression, ExpMFlowRegressor
    from skdp.preprocessing import DPStandardScaler
    from skdp.synthesis import DPGANSynthesizer, DPHistogramSynthesizer, DPMarginalSynthesizer

    def xy(est, X, y):
        return est.fit(X, y)

    def x(est, X, y):
        return est.fit(X)

    def labels(est, X, y):
        return est.fit(X, (y > np.median(y)).astype(int))

    def y_only(est, X, y):
        return est.fit(X, y)

    rs = {"random_state": 0}
    return [
        (
            "DPLinearRegression",
            lambda b: DPLinearRegression(epsilon=1.0, bounds_X=b, bounds_y=b, **rs),
            xy,
        ),
        (
            "DPLogisticRegression",
            lambda b: DPLogisticRegression(epsilon=1.0, classes=[0, 1], bounds_X=b, **rs),
            labels,
        ),
        (
            "ExpMFlowRegressor",
            lambda b: ExpMFlowRegressor(epsilon=1.0, bounds_y=b, n_iter=2, n_layers=1, **rs),
            y_only,
        ),
        ("DPStandardScaler", lambda b: DPStandardScaler(epsilon=1.0, bounds=b, **rs), x),
        (
            "DPHistogramSynthesizer",
            lambda b: DPHistogramSynthesizer(epsilon=1.0, bounds=b, **rs),
            x,
        ),
        ("DPMarginalSynthesizer", lambda b: DPMarginalSynthesizer(epsilon=1.0, bounds=b, **rs), x),
        ("DPFlowDensity", lambda b: DPFlowDensity(epsilon=1.0, bounds=b, **FAST_TORCH, **rs), x),
        (
            "DPGANSynthesizer",
            lambda b: DPGANSynthesizer(
                epsilon=1.0, bounds=b, hidden_size=4, latent_dim=2, n_critic=1, **FAST_TORCH, **rs
            ),
            x,
        ),
    ]


ESTIMATORS = {name: (make, fit) for name, make, fit in _estimators()}


def _outcome(make, fit, X, y):
    """``"refused"`` with the message, or ``"fitted"``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit(make(None), X, y)
    except ValueError as err:
        return ("refused", str(err))
    return ("fitted", None)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_small_n_refused_with_what_to_declare_and_the_same_for_neighbours(name):
    make, fit = ESTIMATORS[name]
    (X, y), (X2, y2) = _neighbours(200)
    first, second = _outcome(make, fit, X, y), _outcome(make, fit, X2, y2)
    # the decision and its message are the same on neighbouring data sets
    assert first == second
    kind, msg = first
    assert kind == "refused", name
    assert "choosing_bounds" in msg and '"private"' in msg and "binary" in msg
    assert "Declare public bounds" in msg
    # no data value in the message: the extreme row's values do not appear
    assert "990000" not in msg and "9.9e+05" not in msg


@pytest.mark.parametrize(
    "name", ["DPLinearRegression", "DPStandardScaler", "DPHistogramSynthesizer"]
)
def test_private_opt_in_fits_with_the_warning(name):
    make, fit = ESTIMATORS[name]
    X, y = _table(200)
    with pytest.warns(BoundsEstimateWarning, match='"private"'):
        est = fit(make("private"), X, y)
    assert est.epsilon_spent_ == pytest.approx(1.0)
    assert est.privacy_breakdown_["bounds"] == pytest.approx(0.1)


def test_refusal_is_the_public_rule_at_its_threshold():
    from skdp.linear_model import DPLinearRegression

    # DPLinearRegression with both bounds missing: one estimate over d + 1 columns with a
    # tenth of epsilon; the refusal flips exactly where the public rule does
    d, eps = 2, 4.0

    def unreliable(n):
        return bounds_estimate_unreliable(n, 0.1 * eps, (0.01, 0.99), [GRID] * (d + 1))

    n_star = next(n for n in range(100, 20000, 25) if unreliable(n) is None)
    for n, refused in ((n_star - 25, True), (n_star, False)):
        for seed in range(3):  # any data of that size: the same decision
            X, y = _table(n, d, seed=seed)
            if seed == 2:
                X = np.zeros_like(X)  # even constant rows
            reg = DPLinearRegression(epsilon=eps, random_state=0)
            if refused:
                with pytest.raises(ValueError, match=r"bounds_X=None and bounds_y=None"):
                    reg.fit(X, y)
            else:
                reg.fit(X, y)


def test_issue_reproduction_diabetes_416_rows_refused_declared_fits():
    # issue 31: DPLinearRegression(epsilon=1) without bounds on 416 rows estimated an age
    # range of about (-5e5, 9e5) and gave R^2 of -1e4 to -1e10 with only a warning
    from sklearn.datasets import load_diabetes

    from skdp.linear_model import DPLinearRegression

    X, y = load_diabetes(scaled=False, return_X_y=True, as_frame=True)
    X, y = X.iloc[:416], y.iloc[:416]
    with pytest.raises(ValueError, match="bounds_X=None and bounds_y=None") as err:
        DPLinearRegression(epsilon=1.0, random_state=0).fit(X, y)
    assert "'age'" in str(err.value)  # names the columns, never a value
    # bounds_y declared, bounds_X still missing: only bounds_X is named
    with pytest.raises(ValueError, match=r"^bounds_X=None:"):
        DPLinearRegression(epsilon=1.0, bounds_y=(25, 346), random_state=0).fit(X, y)


def test_rare_indicator_refused_undeclared_kept_when_declared_binary():
    # issue 31: a 0/1 column with 3 % ones, not declared binary, got bounds (-1, 0) and
    # vanished from the synthetic data
    from skdp.synthesis import DPHistogramSynthesizer

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.uniform(20, 80, 600), "rare": rng.random(600) < 0.03})
    df["rare"] = df["rare"].astype(np.int64)
    with pytest.raises(ValueError, match="binary"):
        DPHistogramSynthesizer(epsilon=1.0, random_state=0).fit(df)
    synth = DPHistogramSynthesizer(
        epsilon=1.0, bounds={"age": (18, 90)}, column_types={"rare": "binary"}, random_state=0
    ).fit(df)
    assert synth.privacy_breakdown_["bounds"] == 0.0
    assert set(np.unique(synth.sample(5000, random_state=0)["rare"])) == {0, 1}


def test_dict_opt_in_covers_only_the_named_columns():
    from skdp.synthesis import DPHistogramSynthesizer

    X, _ = _table(300)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    # one column still missing without the opt-in: refused
    with pytest.raises(ValueError, match="Declare public bounds"):
        DPHistogramSynthesizer(epsilon=1.0, bounds={"a": (0, 10), "b": "private"}).fit(df)
    with pytest.warns(BoundsEstimateWarning):
        synth = DPHistogramSynthesizer(
            epsilon=1.0, bounds={"a": (0, 10), "b": "private", "c": "private"}, random_state=0
        ).fit(df)
    assert synth.bounds_["a"] == (0.0, 10.0)


def test_large_n_estimates_without_opt_in_or_warning():
    X, _ = _table(20000, d=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsEstimateWarning)
        lo, hi, used = resolve_bounds(None, X, epsilon=1.0, rng=np.random.default_rng(0))
    assert used == pytest.approx(0.1) and lo[0] < 1 and hi[0] > 9


def test_infinite_epsilon_and_declared_bounds_never_refuse():
    from skdp.linear_model import DPLinearRegression

    X, y = _table(50)
    DPLinearRegression(epsilon=np.inf).fit(X, y)
    DPLinearRegression(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-100, 100)).fit(X, y)
    with pytest.raises(ValueError, match="'private', 'data'"):
        resolve_bounds("other", X, epsilon=1.0, rng=np.random.default_rng(0))


def test_clip_false_refuses_the_private_opt_in():
    from skdp.linear_model import DPLinearRegression
    from skdp.preprocessing import DPStandardScaler

    X, y = _table(50)
    with pytest.raises(ValueError, match="clip=False needs declared bounds_X"):
        DPLinearRegression(bounds_X="private", bounds_y=(0, 1), clip=False).fit(X, y)
    with pytest.raises(ValueError, match="clip=False needs declared bounds"):
        DPStandardScaler(bounds=None, clip=False).fit(X)
