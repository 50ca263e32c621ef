"""Lazy public names of a package: imported from their private module on first access.

A package whose estimators need torch keeps ``import skdp.<package>`` free of torch by
naming those estimators in a table ``{public name: private module}`` and importing each
one only when it is first looked up (PEP 562 module ``__getattr__``).
"""

from __future__ import annotations

import importlib

__all__ = ["lazy_attributes"]


def lazy_attributes(module_name, namespace, table):
    """``(__getattr__, __dir__)`` for the package ``module_name`` with lazy names ``table``.

    ``namespace`` is the package's ``globals()``: a name, once imported, is stored there,
    so later lookups do not reach ``__getattr__``. ``__dir__`` lists the lazy names too.
    """

    def __getattr__(name):
        if name in table:
            value = getattr(importlib.import_module(table[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
