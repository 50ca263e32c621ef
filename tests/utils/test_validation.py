import math
import warnings

import numpy as np
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
