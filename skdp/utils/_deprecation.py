"""Deprecated names of parameters and fitted attributes, kept for one release.

The fitted vocabulary (``doc/glossary.rst``) has one spelling per fact; an old spelling
stays readable until :data:`REMOVED_IN` and warns with ``FutureWarning`` (the warning
scikit-learn uses for deprecations that users, not only developers, should see).
"""

from __future__ import annotations

import warnings

__all__ = ["DEPRECATED", "REMOVED_IN", "RenamedAttribute", "RenamedKeys", "renamed_parameter"]

#: the release in which the deprecated names go
REMOVED_IN = "0.2"

#: the default of a deprecated constructor parameter: "not set by the user"
DEPRECATED = "deprecated"


class RenamedAttribute:
    """A fitted attribute under its old name: reading it warns and returns the new one.

    Parameters
    ----------
    new : str
        The fitted attribute that holds the fact now.
    key : str, optional
        The entry of ``new`` (a dict) that the old attribute was.
    convert : callable, optional
        Maps the new value to the old one's meaning (e.g. a rate to a scale).
    note : str, optional
        How to read the new value, appended to the warning.

    Notes
    -----
    A class attribute (a descriptor), not an instance attribute: it is not in
    ``vars(estimator)``, so it does not count as fitted state (``check_is_fitted``),
    is not pickled and raises ``AttributeError`` before ``fit`` like any fitted
    attribute.
    """

    def __init__(self, new, *, key=None, convert=None, note=""):
        self.new, self.key, self.convert, self.note = new, key, convert, note
        self.old = None

    def __set_name__(self, owner, name):
        self.old = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        if self.new not in vars(obj):
            raise AttributeError(
                f"{type(obj).__name__!r} object has no attribute {self.old!r} (not fitted)"
            )
        where = self.new if self.key is None else f"{self.new}[{self.key!r}]"
        warnings.warn(
            f"{type(obj).__name__}.{self.old} is deprecated and will be removed in skdp "
            f"{REMOVED_IN}; use {where}{self.note}",
            FutureWarning,
            stacklevel=2,
        )
        value = getattr(obj, self.new)
        if self.key is not None:
            value = value[self.key]
        return value if self.convert is None else self.convert(value)


def renamed_parameter(estimator, old, new):
    """The value of the parameter ``new``, or of its deprecated name ``old`` if the user
    set it (``FutureWarning``); a ``ValueError`` when both are set.

    ``old`` defaults to :data:`DEPRECATED` in the constructor (the scikit-learn pattern:
    both names stay parameters, so ``get_params``/``clone`` keep working).
    """
    old_value, new_value = getattr(estimator, old), getattr(estimator, new)
    if isinstance(old_value, str) and old_value == DEPRECATED:
        return new_value
    default = type(estimator)().get_params(deep=False)[new]
    if new_value is not default and new_value != default:
        raise ValueError(
            f"{type(estimator).__name__}: set {new}= only ({old}= is its deprecated name)"
        )
    warnings.warn(
        f"{type(estimator).__name__}({old}=...) is deprecated and will be removed in skdp "
        f"{REMOVED_IN}; use {new}=...",
        FutureWarning,
        stacklevel=3,
    )
    return old_value


class RenamedKeys(dict):
    """A fitted dict whose renamed keys still read for one release (``FutureWarning``).

    Its keys are the new ones only (iteration, ``len``, ``in`` and equality see them);
    ``d[old]`` (and ``d.get(old)``) warns and returns ``d[new]``.

    Parameters
    ----------
    data : dict
        The entries under their new keys.
    renamed : dict
        ``{old key: new key}``.
    where : str
        ``"Estimator.attribute_"``, for the warning.
    """

    def __init__(self, data, renamed, where):
        super().__init__(data)
        self.renamed, self.where = dict(renamed), where

    def __missing__(self, key):
        if key not in self.renamed:
            raise KeyError(key)
        new = self.renamed[key]
        warnings.warn(
            f"{self.where}[{key!r}] is deprecated and will be removed in skdp {REMOVED_IN}; "
            f"use {self.where}[{new!r}]",
            FutureWarning,
            stacklevel=2,
        )
        return self[new]

    def get(self, key, default=None):
        """``d.get(old)`` warns and reads ``d[new]`` like ``d[old]``."""
        if key in self.renamed and not super().__contains__(key):
            return self[key]
        return super().get(key, default)
