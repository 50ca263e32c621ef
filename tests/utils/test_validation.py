import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skdp.exceptions import DeltaTooLargeWarning, PrivacyLeakWarning
from skdp.utils.validation import (
    check_bounds,
    check_finite,
    check_privacy_params,
    clip_rows_to_norm,
    clip_to_bounds,
    data_bounds,
)


@pytest.mark.parametrize("eps", [0, -1, math.nan])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        check_privacy_params(eps, 0.0)


@pytest.mark.parametrize("delta", [-0.1, 1.0, math.nan])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        check_privacy_params(1.0, delta)


def test_types_rejected():
    with pytest.raises(TypeError):
        check_privacy_params("1", 0.0)
    with pytest.raises(TypeError):
        check_privacy_params(True, 0.0)


def test_inf_epsilon_is_non_private_and_allowed():
    assert check_privacy_params(math.inf, 0.0) == (math.inf, 0.0)


def test_require_delta():
    with pytest.raises(ValueError, match="delta > 0"):
        check_privacy_params(1.0, 0.0, require_delta=True)


def test_delta_too_large_warns():
    with pytest.warns(DeltaTooLargeWarning):
        check_privacy_params(1.0, 0.01, n_samples=100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_privacy_params(1.0, 1e-5, n_samples=100)


def test_check_bounds_forms():
    lo, hi = check_bounds((0, 1), 3)
    np.testing.assert_array_equal(lo, [0, 0, 0])
    lo, hi = check_bounds(([0, -1], [1, 2]), 2)
    np.testing.assert_array_equal(hi, [1, 2])
    lo, hi = check_bounds({"b": (0, 5), "a": (-1, 1)}, 2, columns=["a", "b"])
    np.testing.assert_array_equal(lo, [-1, 0])
    np.testing.assert_array_equal(hi, [1, 5])


@pytest.mark.parametrize(
    "bounds, match",
    [
        ((1, 0), "low must be < high"),
        ((0, np.inf), "finite"),
        ((0, [1, 2, 3]), "n_features"),
        ((0,), "pair"),
        ("data", "resolved"),
    ],
)
def test_check_bounds_errors(bounds, match):
    with pytest.raises(ValueError, match=match):
        check_bounds(bounds, 2)


def test_check_bounds_dict_errors_name_columns():
    with pytest.raises(ValueError, match="'b'"):
        check_bounds({"a": (0, 1)}, 2, columns=["a", "b"])
    with pytest.raises(ValueError, match="'age'"):
        check_bounds({"age": (5, 1)}, 1, columns=["age"])


def test_data_bounds_warns_and_is_wide_enough():
    X = np.array([[0.0, 3.0], [1.0, 3.0]])
    with pytest.warns(PrivacyLeakWarning):
        lo, hi = data_bounds(X)
    assert np.all(lo < hi)


def test_check_finite_names_column_not_value():
    X = np.array([[1.0, 2.0], [3.0, np.nan]])
    with pytest.raises(ValueError, match=r"column\(s\) \[1\]") as err:
        check_finite(X)
    assert "3.0" not in str(err.value)


@given(
    arrays(np.float64, (5, 3), elements=st.floats(-10, 10)),
    st.floats(0.1, 5),
)
def test_clip_to_bounds_inside(X, width):
    lo, hi = np.full(3, -width), np.full(3, width)
    Y = clip_to_bounds(X, lo, hi)
    assert np.all(Y >= lo) and np.all(Y <= hi)
    inside = (X >= lo) & (X <= hi)
    np.testing.assert_array_equal(Y[inside], X[inside])


def test_clip_false_raises_naming_column():
    X = np.array([[0.5, 2.0]])
    with pytest.raises(ValueError, match=r"column\(s\) 'b'"):
        clip_to_bounds(X, np.zeros(2), np.ones(2), clip=False, columns=["a", "b"])


@given(arrays(np.float64, (6, 3), elements=st.floats(-100, 100)), st.floats(0.01, 10))
def test_clip_rows_to_norm(X, c):
    Y = clip_rows_to_norm(X, c)
    assert np.all(np.linalg.norm(Y, axis=1) <= c * (1 + 1e-9))
    small = np.linalg.norm(X, axis=1) <= c
    np.testing.assert_allclose(Y[small], X[small])


# ----------------------------------------------------------------- issue 30: dates, widths
_DAYS = pd.date_range("2020-01-01", periods=4)


@pytest.mark.parametrize(
    "X, where",
    [
        (pd.DataFrame({"age": [1.0, 2.0, 3.0, 4.0], "visit": _DAYS}), "['visit']"),
        (pd.DataFrame({"visit": _DAYS.tz_localize("Europe/Paris")}), "['visit']"),
        (pd.DataFrame({"stay": pd.to_timedelta([1, 2, 3, 4], unit="D")}), "['stay']"),
        (np.array(["2020-01-01"] * 4, dtype="datetime64[D]").reshape(2, 2), "holds dates"),
        (np.arange(4).astype("timedelta64[s]"), "holds dates"),
        (pd.Series(_DAYS), "holds dates"),
        ([np.datetime64("2020-01-01"), np.datetime64("2021-01-01")], "holds dates"),
    ],
)
def test_dates_and_durations_are_refused_by_every_validator(X, where):
    from sklearn.base import BaseEstimator

    from skdp.utils.validation import check_array, check_no_datetime, column_or_1d, validate_data

    with pytest.raises(TypeError, match="date") as exc:
        check_no_datetime(X, name="X")
    assert where in str(exc.value) and "2020" not in str(exc.value)
    with pytest.raises(TypeError, match="date"):
        validate_data(BaseEstimator(), X)
    with pytest.raises(TypeError, match="date"):
        check_array(X, ensure_2d=False)
    if np.ndim(X) == 1:
        with pytest.raises(TypeError, match="date"):
            column_or_1d(X, input_name="y_score")
        with pytest.raises(TypeError, match="y"):
            validate_data(BaseEstimator(), np.zeros((len(X), 1)), X)


def test_numbers_and_text_are_not_taken_for_dates():
    from skdp.utils.validation import check_no_datetime

    for X in (np.zeros((2, 2)), pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), [[1, 2]], None):
        assert check_no_datetime(X) is X


@pytest.mark.parametrize("cell", ["987654x", "1e3 mg", b"987654 mg"])
def test_as_float_array_never_prints_the_cell(cell):
    from skdp.utils.validation import as_float_array

    for X, col in (([1.0, cell], None), (np.array([[1.0, 2.0], [3.0, cell]], dtype=object), "1")):
        with pytest.raises(ValueError) as exc:
            as_float_array(X, name="value")
        msg = str(exc.value)
        assert "987654" not in msg and "mg" not in msg and msg.startswith("value")
        assert col is None or f"column {col}" in msg
        assert exc.value.__cause__ is None and exc.value.__context__ is None
    with pytest.raises(ValueError, match="Complex"):
        as_float_array(np.array([1 + 2j]), name="value")


@pytest.mark.parametrize(
    "lo, hi, ok",
    [
        (0.0, 1.0, True),
        (0.0, 1e-150, True),
        (-1e150, 1e150, True),
        (0.0, 5e-324, False),
        (0.0, 1e-200, False),
        (-1e308, 1e308, False),
        (1.0, 1.0 + 2.2e-16, True),
    ],
)
def test_check_width(lo, hi, ok):
    from skdp.utils.validation import check_width

    if ok:
        assert check_width(lo, hi) == pytest.approx(hi - lo)
    else:
        with pytest.raises(ValueError, match="width"):
            check_width(lo, hi, name="bounds", columns=["age"])
    if ok and max(abs(lo), abs(hi)) <= 1e150:
        check_bounds((lo, hi), 1)
    elif not ok:
        with pytest.raises(ValueError, match="bounds"):
            check_bounds((lo, hi), 1)


def test_check_finite_release_names_what_never_a_value():
    from skdp.utils.validation import check_finite_release

    check_finite_release([np.ones(3), 2.0, np.array([1, 2])], what="x", fix="y")
    for bad in (np.array([1.0, np.nan]), np.array([np.inf]), float("-inf")):
        with pytest.raises(ValueError, match="the coefficients are not finite.*rescale"):
            check_finite_release([np.ones(2), bad], what="the coefficients", fix="rescale")
