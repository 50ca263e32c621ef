"""Every estimator that takes a table validates its metadata parameters with the one
shared block (skdp.utils._tabular.constraints), and ``BOUNDS_FRACTION`` is defined once."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils._param_validation import validate_parameter_constraints

from skdp.discovery import all_estimators
from skdp.mechanisms import _bounds
from skdp.mechanisms._front_end import TabularFrontEnd
from skdp.utils._tabular.constraints import bounds_constraint, tabular_constraints

TABULAR = {n: c for n, c in all_estimators() if issubclass(c, TabularFrontEnd)}


def _text(constraints):
    return [str(c) for c in constraints]


def test_the_tabular_estimators_are_found():
    assert {
        "DPFlowDensity",
        "DPGANSynthesizer",
        "DPHistogramSynthesizer",
        "DPMarginalSynthesizer",
    } <= set(TABULAR)


@pytest.mark.parametrize("name", sorted(TABULAR))
def test_metadata_constraints_are_the_shared_block(name):
    cls = TABULAR[name]
    has_missing = "missing" in cls().get_params()
    shared = tabular_constraints(missing=has_missing)
    own = cls._parameter_constraints
    for param, constraints in shared.items():
        assert _text(own[param]) == _text(constraints), param


def test_bounds_constraint_accepts_every_documented_form():
    for value in (None, "private", "data", (0, 1), [0, 1], {"a": (0, 1)}, np.array([0, 1])):
        validate_parameter_constraints({"bounds": bounds_constraint()}, {"bounds": value}, "f")
    with pytest.raises(ValueError):
        validate_parameter_constraints({"bounds": bounds_constraint()}, {"bounds": "auto"}, "f")


def test_bounds_fraction_is_defined_once():
    from skdp.density import _flow_density
    from skdp.mechanisms import _front_end
    from skdp.synthesis._gan import _budget

    assert _bounds.BOUNDS_FRACTION == 0.1
    assert _flow_density.BOUNDS_FRACTION is _budget.BOUNDS_FRACTION is _bounds.BOUNDS_FRACTION
    for fn in (_bounds.resolve_bounds, _bounds.resolve_schema_bounds):
        assert fn.__kwdefaults__["fraction"] is _bounds.BOUNDS_FRACTION
    front_end = _front_end.TabularFrontEnd._prepare_table.__kwdefaults__["fraction"]
    assert front_end is _bounds.BOUNDS_FRACTION
