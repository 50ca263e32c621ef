"""Seed objects, and pickles that hold none.

``random_state`` is stored on estimators as given (scikit-learn's ``get_params`` /
``clone`` contract), so a seed *object* (a ``Generator``, ``RandomState``,
``SeedSequence`` or ``BitGenerator``) given there stays reachable from a fitted
estimator. A generator can be rewound to its state before the fit and a ``SeedSequence``
is its own entropy: whoever holds one could replay the fit on candidate data sets. This
module finds such objects (:func:`is_seed_object`, :func:`seed_objects`), replaces them by
``None`` in nested values (:func:`scrub_seed_objects`), and makes every pickle of an skdp
estimator, pipeline, search or scorer forget them (:class:`ScrubSeedsOnPickleMixin`).
How seeds become noise streams is :mod:`skdp.utils._random`.
"""

from __future__ import annotations

import copy

import numpy as np

__all__ = [
    "SEED_OBJECT_TYPES",
    "is_seed_object",
    "seed_objects",
    "scrub_seed_objects",
    "ScrubSeedsOnPickleMixin",
]


#: Seeds that carry a state: a generator can be rewound (PCG64 ``advance(-k)``, MT19937
#: untwisted), a ``SeedSequence`` is its own entropy. Ints and ``None`` are not here.
SEED_OBJECT_TYPES = (
    np.random.Generator,
    np.random.RandomState,
    np.random.SeedSequence,
    np.random.BitGenerator,
)


def is_seed_object(value) -> bool:
    """Whether ``value`` is a seed *object* (a generator or a seed sequence)."""
    return isinstance(value, SEED_OBJECT_TYPES)


def seed_objects(estimator) -> dict:
    """The ``random_state`` parameters of ``estimator`` (nested ones too) that are seed
    objects, as a ``set_params`` dict.

    A meta-estimator hands these to its worker tasks beside the estimator, so that a
    task in another process (whose pickled estimator forgot them, see
    :func:`scrub_seed_objects`) fits with the same seed as a sequential run.
    """
    params = estimator.get_params(deep=True)
    return {
        k: v
        for k, v in params.items()
        if (k == "random_state" or k.endswith("__random_state")) and is_seed_object(v)
    }


def scrub_seed_objects(value):
    """``value`` with every seed object it holds replaced by ``None``.

    Walks dicts, lists, tuples and object arrays (e.g. ``cv_results_["params"]``), and
    the attributes of estimator objects that do not scrub themselves (a scikit-learn
    step inside a pipeline; those are copied, never changed in place). Objects that are
    :class:`ScrubSeedsOnPickleMixin` scrub themselves when pickled. Returns ``value``
    itself when it holds no seed object.
    """
    return _scrub(value, set())


def _scrub(value, seen):  # noqa: C901 - one branch per container type
    if is_seed_object(value):
        return None
    if isinstance(value, str | bytes | int | float | type(None)) or id(value) in seen:
        return value
    seen.add(id(value))
    if isinstance(value, dict):
        new = {k: _scrub(v, seen) for k, v in value.items()}
        if all(new[k] is value[k] for k in value):
            return value
        out = copy.copy(value)  # keeps the mapping's type (e.g. a sklearn Bunch)
        out.update(new)
        return out
    if isinstance(value, list | tuple):
        new = [_scrub(v, seen) for v in value]
        if all(a is b for a, b in zip(new, value, strict=True)):
            return value
        if isinstance(value, list):
            return new
        return type(value)(*new) if hasattr(value, "_fields") else tuple(new)
    if isinstance(value, np.ndarray):
        if value.dtype != object or not any(is_seed_object(v) for v in value.flat):
            return value
        out = value.copy()  # keeps the array's type (a masked array in cv_results_)
        for index in np.ndindex(value.shape):
            if is_seed_object(value[index]):
                out[index] = None
        return out
    if isinstance(value, ScrubSeedsOnPickleMixin):
        return value  # scrubs itself when pickled
    attrs = getattr(value, "__dict__", None)
    if attrs is not None and hasattr(value, "get_params") and not isinstance(value, type):
        new = {k: _scrub(v, seen) for k, v in attrs.items()}
        if all(new[k] is attrs[k] for k in attrs):
            return value
        out = copy.copy(value)
        out.__dict__.update(new)
        return out
    return value


class ScrubSeedsOnPickleMixin:
    """Pickles (and deep copies) of this object hold no seed object.

    ``random_state`` is stored as given (scikit-learn's ``get_params``/``clone``
    contract), so a ``Generator``, ``RandomState`` or ``SeedSequence`` passed to a
    release stays reachable from the estimator after ``fit``. A generator can be rewound
    to its state before the fit, and a ``SeedSequence`` is its own entropy: an attacker
    holding a pickle would replay ``fit`` on candidate data sets and keep the one that
    reproduces the release. So every pickle (``pickle``, ``joblib.dump``, the worker
    processes of ``n_jobs > 1``) comes back with ``None`` in its place, here and in
    everything the object holds (nested estimators, ``cv_results_["params"]``). Ints
    are kept: an int seed is a public, typed-in parameter that protects nothing (see
    :doc:`/privacy_guarantees`). In-process copies (``copy.copy``, ``copy.deepcopy``)
    are exact: they leave the process only by being pickled.
    """

    def __copy__(self):
        out = self.__class__.__new__(self.__class__)
        out.__dict__.update(self.__dict__)
        return out

    def __deepcopy__(self, memo):
        out = self.__class__.__new__(self.__class__)
        memo[id(self)] = out
        out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return out

    def __getstate__(self):
        state = super().__getstate__()
        if state is None:  # pragma: no cover - object.__getstate__ of a slot-less class
            state = dict(self.__dict__)
        return {k: scrub_seed_objects(v) for k, v in state.items()}
