"""The survival target: build, read back, and refuse bad input naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

from skdp.survival import check_survival_target, make_survival_target


def test_round_trip_and_sksurv_layout():
    y = make_survival_target(np.array([1, 0, 1]), [3.0, 0.0, 2.5])
    assert y.dtype.names == ("event", "time")
    assert y.dtype["event"] == np.dtype(bool) and y.dtype["time"] == np.float64
    event, time = check_survival_target(y)
    np.testing.assert_array_equal(event, [True, False, True])
    np.testing.assert_array_equal(time, [3.0, 0.0, 2.5])


def test_foreign_field_names_are_read_by_position():
    y = np.array([(True, 4.0), (False, 1.0)], dtype=[("Status", "?"), ("Days", "<f8")])
    event, time = check_survival_target(y)
    np.testing.assert_array_equal(event, [True, False])
    np.testing.assert_array_equal(time, [4.0, 1.0])


@pytest.mark.parametrize(
    "event, time, match",
    [
        ([1, 0], [1.0], "one entry per row"),
        ([1, 2], [1.0, 2.0], "event must be boolean"),
        (["a", "b"], [1.0, 2.0], "event must be boolean"),
        ([1, 0], [1.0, -2.0], "time has negative"),
        ([1, 0], [1.0, np.nan], "time has NaN"),
        ([1, 0], [1.0, np.inf], "time has NaN or infinite"),
        ([[1, 0]], [[1.0, 2.0]], "event must be 1-d"),
    ],
)
def test_bad_arrays_are_refused_naming_the_parameter(event, time, match):
    with pytest.raises(ValueError, match=match):
        make_survival_target(event, time)


def test_messages_never_show_a_value():
    with pytest.raises(ValueError) as info:
        make_survival_target([1, 0], [12345.678, -98765.4321])
    assert "98765" not in str(info.value)


@pytest.mark.parametrize("y", [np.array([1.0, 2.0]), [(True, 1.0)], None])
def test_non_structured_target_is_a_type_error(y):
    with pytest.raises(TypeError, match="make_survival_target"):
        check_survival_target(y)


def test_two_d_structured_target_is_refused():
    y = make_survival_target([1, 0], [1.0, 2.0]).reshape(1, 2)
    with pytest.raises(ValueError, match="y must be 1-d"):
        check_survival_target(y)
