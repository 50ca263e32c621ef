"""A scikit-learn ``__init__`` written once for estimators that share a long parameter list.

scikit-learn reads an estimator's parameters from ``inspect.signature(type(est).__init__)``
(``get_params``, ``clone``, ``set_params``) and asks that ``__init__`` only store them.
:func:`keyword_init` builds such an ``__init__`` from ``(name, default)`` pairs and gives it
that explicit keyword-only signature (``__signature__``), so ``get_params``, ``clone``,
``help()`` and the API docs see the same parameters, in the same order, as a hand-written one.
"""

from __future__ import annotations

import inspect

__all__ = ["REQUIRED", "keyword_init"]

#: The "default" of a parameter without one (it must be passed).
REQUIRED = inspect.Parameter.empty


def keyword_init(params, *, positional=(), qualname="__init__"):
    """An ``__init__(self, *, name=default, ...)`` that stores every parameter unchanged.

    Parameters
    ----------
    params : sequence of (str, object)
        The parameters in signature order, each with its default (kept as is: the same
        object, e.g. a deprecation sentinel), or :data:`REQUIRED` for none.
    positional : tuple of str, default=()
        The leading parameters that may also be passed by position (as scikit-learn's
        ``GridSearchCV(estimator, param_grid)``); the others are keyword-only.
    qualname : str, default="__init__"
        The ``__qualname__`` of the function (e.g. ``"MyEstimator.__init__"``).

    Returns
    -------
    callable
        ``__init__`` with ``__signature__`` ``(self, *, name=default, ...)`` (the
        ``positional`` names before the ``*``): an unknown argument, a missing required
        one or one positional argument too many raises ``TypeError`` as a hand-written
        one would.

    Examples
    --------
    >>> import inspect
    >>> from sklearn.base import BaseEstimator
    >>> from skdp.utils._keyword_init import keyword_init
    >>> class Est(BaseEstimator):
    ...     __init__ = keyword_init([("epsilon", 1.0), ("random_state", None)])
    >>> str(inspect.signature(Est))
    '(*, epsilon=1.0, random_state=None)'
    >>> Est(epsilon=2.0).get_params()
    {'epsilon': 2.0, 'random_state': None}
    """
    if [name for name, _ in params[: len(positional)]] != list(positional):
        raise ValueError("positional must name the leading parameters, in order")
    either, keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
    signature = inspect.Signature(
        [inspect.Parameter("self", either)]
        + [
            inspect.Parameter(name, either if name in positional else keyword, default=default)
            for name, default in params
        ]
    )

    def __init__(self, *args, **kwargs):
        if len(args) > len(positional):  # Python's message for a hand-written one
            takes = len(positional) + 1
            raise TypeError(
                f"{qualname}() takes {takes} positional argument{'s' * (takes > 1)} but "
                f"{len(args) + 1} were given"
            )
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:  # name the function, as Python does for a hand-written one
            raise TypeError(f"{qualname}() {exc}") from None
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            if name != "self":
                setattr(self, name, value)

    __init__.__signature__ = signature
    __init__.__qualname__ = qualname
    return __init__
