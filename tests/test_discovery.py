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


def test_every_estimator_package_export_is_discovered():
    """Every estimator a package of ESTIMATOR_PACKAGES exports in ``__all__`` is found,
    including those the top level does not export (skdp.survival's)."""
    from skdp.discovery import ESTIMATOR_PACKAGES

    expected = set()
    for pkg_name in ESTIMATOR_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for name in getattr(pkg, "__all__", ()):
            obj = getattr(pkg, name)
            if inspect.isclass(obj) and issubclass(obj, DPEstimatorMixin):
                expected.add(name)
    found = {name for name, _ in all_estimators()}
    assert expected <= found, f"not discovered: {sorted(expected - found)}"
    assert {"DPKaplanMeier", "DPAalenJohansen", "DPCoxPH"} <= found
