import importlib
import inspect

import skdp
from skdp.base import DPEstimatorMixin
from skdp.discovery import all_estimators


def test_every_public_estimator_is_discovered():
    """Every estimator the top level exports (lazily or not) is found by discovery."""
    expected = set()
    for name, module in skdp._LAZY.items():
        obj = getattr(importlib.import_module(module), name)
        if inspect.isclass(obj) and issubclass(obj, DPEstimatorMixin):
            expected.add(name)
    found = {name for name, _ in all_estimators()}
    assert expected <= found, f"not discovered: {sorted(expected - found)}"
    assert "DPLinearRegression" in found
