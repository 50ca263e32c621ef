"""skdp.utils._keyword_init: a generated __init__ that scikit-learn sees as hand-written."""

import inspect

import pytest
from sklearn.base import BaseEstimator, clone

from skdp.utils._keyword_init import keyword_init

_SENTINEL = object()


class _Est(BaseEstimator):
    __init__ = keyword_init(
        [("epsilon", 1.0), ("marker", _SENTINEL), ("random_state", None)],
        qualname="_Est.__init__",
    )


def test_signature_is_keyword_only_with_the_declared_defaults():
    params = inspect.signature(_Est).parameters
    assert list(params) == ["epsilon", "marker", "random_state"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    assert params["marker"].default is _SENTINEL


def test_parameters_are_stored_unchanged_and_clone_round_trips():
    value = [1, 2]
    est = _Est(epsilon=2.0, random_state=value)
    assert est.random_state is value and est.marker is _SENTINEL
    assert list(vars(est)) == ["epsilon", "marker", "random_state"]
    assert est.get_params() == {"epsilon": 2.0, "marker": _SENTINEL, "random_state": value}
    cloned = clone(est).get_params()
    assert cloned["epsilon"] == 2.0 and cloned["random_state"] == [1, 2]


def test_bad_arguments_raise_type_error_naming_the_function():
    with pytest.raises(TypeError, match=r"_Est\.__init__\(\) takes 1 positional argument"):
        _Est(2.0)
    with pytest.raises(TypeError, match=r"_Est\.__init__\(\) got an unexpected keyword"):
        _Est(epsilom=2.0)
