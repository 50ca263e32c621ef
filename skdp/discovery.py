"""Discovery of skdp's public estimators (used by the common tests and the docs).

A tool above every layer, like :mod:`skdp.cli`: it imports every estimator package and
:mod:`skdp.base`, and no module of the library imports it (doc/architecture.rst).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

__all__ = ["all_estimators", "ESTIMATOR_PACKAGES"]

#: Packages that hold public estimators (layer 4).
ESTIMATOR_PACKAGES = (
    "skdp.cluster",
    "skdp.density",
    "skdp.ilp",
    "skdp.linear_model",
    "skdp.preprocessing",
    "skdp.sampling",
    "skdp.survival",
    "skdp.synthesis",
)


def all_estimators():
    """Return ``[(name, class)]`` of every public skdp estimator, sorted by name.

    An estimator is a public class (no leading underscore) defined in one of
    :data:`ESTIMATOR_PACKAGES` that derives from both
    :class:`sklearn.base.BaseEstimator` and :class:`skdp.base.DPEstimatorMixin`.
    Packages that do not exist yet are skipped.
    """
    from sklearn.base import BaseEstimator

    from skdp.base import DPEstimatorMixin

    found = {}
    for pkg_name in ESTIMATOR_PACKAGES:
        try:
            pkg = importlib.import_module(pkg_name)
        except ModuleNotFoundError as exc:
            if exc.name == pkg_name:
                continue
            raise
        modules = [pkg]
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + "."):
            if any(part.startswith("_") for part in info.name.split(".")[2:]):
                continue
            modules.append(importlib.import_module(info.name))
        # Names a package exports lazily (module ``__getattr__``) appear only in __all__.
        lazy = [
            (name, getattr(pkg, name))
            for name in getattr(pkg, "__all__", ())
            if name not in vars(pkg)
        ]
        members = [m for module in modules for m in inspect.getmembers(module, inspect.isclass)]
        members += [(name, obj) for name, obj in lazy if inspect.isclass(obj)]
        for name, cls in members:
            if (
                not name.startswith("_")
                and cls.__module__.startswith("skdp.")
                and issubclass(cls, BaseEstimator)
                and issubclass(cls, DPEstimatorMixin)
                and not inspect.isabstract(cls)
            ):
                found[name] = cls
    return sorted(found.items())
