"""skdp.utils._keyword_init: a generated __init__ that scikit-learn sees as hand-written."""

import inspect

import pytest
from sklearn.base import BaseEstimator, clone

from skdp.utils._keyword_init import REQUIRED, keyword_init

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


class _Search(BaseEstimator):
    __init__ = keyword_init(
        [("estimator", REQUIRED), ("grid", REQUIRED), ("scoring", REQUIRED), ("cv", None)],
        positional=("estimator", "grid"),
        qualname="_Search.__init__",
    )


def test_leading_positional_and_required_parameters():
    params = inspect.signature(_Search).parameters
    assert [p.kind for p in params.values()] == [
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.KEYWORD_ONLY,
    ]
    assert params["scoring"].default is inspect.Parameter.empty
    est = _Search("e", "g", scoring="s")
    assert est.get_params() == {"estimator": "e", "grid": "g", "scoring": "s", "cv": None}
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(TypeError, match=r"_Search\.__init__\(\) .*required .*'scoring'"):
        _Search("e", "g")
    with pytest.raises(TypeError, match=r"_Search\.__init__\(\) takes 3 positional arguments"):
        _Search("e", "g", "s")
    with pytest.raises(ValueError, match="leading parameters"):
        keyword_init([("a", 1), ("b", 2)], positional=("b",))
