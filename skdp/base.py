"""Shared base for every skdp estimator.

:class:`DPEstimatorMixin` adds the privacy parameters' constraints and the fitted
privacy facts every estimator reports:

``epsilon_spent_``, ``delta_spent_``
    What one ``fit`` actually spent (never more than ``epsilon``/``delta``; ``inf``
    for a non-private fit).
``privacy_guarantee_``
    ``"exact"`` when the spend is a proven bound (pure DP, RDP/PLD accounting,
    closed-form samplers), ``"approximate"`` when it is not (the ``"gdp_clt"``
    accountant, flow-sampled exponential mechanisms), ``"none"`` when the fit is not
    private at all (``epsilon=inf``, or a non-private opt-in such as ``bounds="data"``).
``nonprivate_options_``
    The names of the parameters that made the fit non-private (empty when private).
``privacy_breakdown_``
    ``dict[str, float]``: the epsilon of each charged part of the fit. The values add
    up to ``epsilon_spent_`` by construction (see :ref:`glossary`): pure-DP parts and
    the DP-SGD part (composed by the accountant at the fit's ``delta``) compose
    sequentially, so a part's share is its own epsilon. A non-private fit adds the
    entry ``"nonprivate"`` with value ``inf``.

The shared parameters (``random_state``, ``device``, ``dtype``, ``accountant``,
``n_jobs``, ``verbose``) are validated by one set of constraints,
:meth:`DPEstimatorMixin._common_constraints`, so every estimator accepts the same
values: ``random_state`` None, an int, a :class:`numpy.random.Generator` or a
:class:`numpy.random.SeedSequence`; ``device`` ``"auto"``, ``"cpu"``, ``"cuda"`` or
``"cuda:N"``; ``accountant`` any key of :func:`skdp.accounting.available_accountants`
(read when the estimator is validated, so registered accountants are accepted).

A non-private opt-in (a parameter set to ``"data"``, which reads metadata off the
private rows; a ``schema`` marked ``data_derived``, whose metadata were read off them
before the fit; or an estimator-specific one such as keeping un-noised diagnostics) emits
:class:`~skdp.exceptions.PrivacyLeakWarning` where it is used and makes
``epsilon_spent_ = inf`` and ``privacy_guarantee_ = "none"``, so that
:meth:`skdp.accounting.PrivacyLedger.spend_fitted` refuses such a model.

Put it first in the bases: ``class Est(DPEstimatorMixin, RegressorMixin, BaseEstimator)``.
"""

from __future__ import annotations

import math
import re
from numbers import Integral, Real

import numpy as np

from skdp.utils._random import ScrubSeedsOnPickleMixin
from skdp.utils._sklearn_compat import Interval, Options, StrOptions
from skdp.utils.validation import check_privacy_params

__all__ = ["DPEstimatorMixin", "PRIVACY_GUARANTEES"]

PRIVACY_GUARANTEES = ("exact", "approximate", "none")

_CUDA_INDEX = re.compile(r"cuda:\d+")


class _DeviceOptions(StrOptions):
    """``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a CPU/CUDA ``torch.device``.

    The same values :func:`skdp.utils._torch.resolve_device` accepts (whether CUDA is
    available is checked there, at fit time).
    """

    def __init__(self):
        super().__init__({"auto", "cpu", "cuda"})

    def is_satisfied_by(self, val):
        if isinstance(val, str):
            return val in self.options or _CUDA_INDEX.fullmatch(val) is not None
        cls = type(val)  # a torch.device, without importing torch here
        return (
            cls.__module__ == "torch"
            and cls.__name__ == "device"
            and getattr(val, "type", None) in ("cpu", "cuda")
        )

    def __str__(self):
        return "a str among {'auto', 'cpu', 'cuda', 'cuda:N'} or a torch.device"


class _AccountantOptions(StrOptions):
    """A key of the accountant registry (:func:`skdp.accounting.available_accountants`).

    Read at validation time, so accountants added by
    :func:`skdp.accounting.register_accountant` are accepted.
    """

    def __init__(self):
        super().__init__(set())

    @property
    def options(self):
        from skdp.accounting import available_accountants

        return set(available_accountants())

    @options.setter
    def options(self, value):  # Options.__init__ assigns; the registry is the source
        pass

    def __str__(self):
        return f"a str among {sorted(self.options)} (skdp.accounting.available_accountants())"


#: The constraints of the parameters every estimator that has them shares; estimators
#: take theirs with :meth:`DPEstimatorMixin._common_constraints`.
_COMMON_PARAMETER_CONSTRAINTS: dict = {
    "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    "device": [_DeviceOptions()],
    "dtype": [StrOptions({"float32", "float64"})],
    "accountant": [_AccountantOptions()],
    "n_jobs": [None, Integral],
    "verbose": ["verbose"],
}
#: the estimators' defaults of the same parameters (:meth:`DPEstimatorMixin._common_params`)
_COMMON_PARAMETER_DEFAULTS: dict = {
    "random_state": None,
    "device": "auto",
    "dtype": "float32",
    "accountant": "pld",
    "n_jobs": None,
    "verbose": 0,
}
#: the shared parameters every DP-SGD estimator takes last, in this order
_DPSGD_SHARED = ("accountant", "device", "dtype", "n_jobs", "verbose", "random_state")


def _is_data_opt_in(value) -> bool:
    """``"data"``, a dict / list holding ``"data"`` (per-column opt-ins), or metadata
    marked as read off the data: a :class:`~skdp.utils.schema.TabularSchema` with
    ``data_derived`` set, or its dict form marked ``"data_derived"``."""
    if isinstance(value, str):
        return value == "data"
    if getattr(value, "data_derived", False) is True:
        return True
    if isinstance(value, dict):
        if "columns" in value and value.get("data_derived", False):  # a schema dict
            return True
        return any(_is_data_opt_in(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(isinstance(v, str) and v == "data" for v in value)
    return False


def _shared_constraints(*names):
    """``{name: constraints}`` of the shared parameters ``names``.

    For :meth:`DPEstimatorMixin._common_constraints` and for public functions, which
    validate the same parameters the same way with
    ``@validate_params(_shared_constraints("random_state"), ...)``.
    """
    unknown = [n for n in names if n not in _COMMON_PARAMETER_CONSTRAINTS]
    if unknown:
        raise ValueError(f"no shared constraint for {unknown}")
    return {n: list(_COMMON_PARAMETER_CONSTRAINTS[n]) for n in names}


class DPEstimatorMixin(ScrubSeedsOnPickleMixin):
    """Mixin for differentially private estimators.

    Subclasses merge :attr:`_privacy_parameter_constraints` into their own
    ``_parameter_constraints`` and call :meth:`_record_privacy_spent` at the end of
    ``fit``. A pickle of the estimator holds no seed object: a ``Generator``,
    ``RandomState`` or ``SeedSequence`` given as ``random_state`` comes back as ``None``
    (:class:`skdp.utils._random.ScrubSeedsOnPickleMixin`).
    """

    _privacy_parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {math.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
    }

    _common_parameter_constraints: dict = _COMMON_PARAMETER_CONSTRAINTS

    @staticmethod
    def _common_constraints(*names):
        """The shared constraints of ``names`` (a subset of
        ``random_state``, ``device``, ``dtype``, ``accountant``, ``n_jobs``, ``verbose``).

        Merge them into ``_parameter_constraints`` for the parameters the estimator has
        (scikit-learn's checks require one entry per parameter, no more)::

            _parameter_constraints = {
                **DPEstimatorMixin._privacy_parameter_constraints,
                **DPEstimatorMixin._common_constraints("device", "random_state"),
                ...
            }
        """
        return _shared_constraints(*names)

    @staticmethod
    def _common_params(*names):
        """``[(name, default), ...]`` of the shared parameters ``names``, in that order:
        the tail of a :func:`skdp.utils._keyword_init.keyword_init` parameter table."""
        _shared_constraints(*names)  # the same names, checked the same way
        return [(n, _COMMON_PARAMETER_DEFAULTS[n]) for n in names]

    def _check_privacy_params(self, *, n_samples=None, require_delta=False):
        """Validate ``self.epsilon`` / ``self.delta`` (``delta`` defaults to 0 if absent)."""
        return check_privacy_params(
            self.epsilon,
            getattr(self, "delta", 0.0),
            n_samples=n_samples,
            require_delta=require_delta,
        )

    def _nonprivate_options(self) -> list[str]:
        """Names of the parameters whose values make a fit non-private.

        Every parameter set to ``"data"`` (metadata read off the private rows) or to a
        schema marked ``data_derived`` (``schema=``, as an object or a dict: its
        metadata were read off the rows, however it arrives), plus what
        :meth:`_extra_nonprivate_options` names. Decided from the parameters only.
        """
        names = [k for k, v in self.get_params(deep=False).items() if _is_data_opt_in(v)]
        return names + [k for k in self._extra_nonprivate_options() if k not in names]

    def _extra_nonprivate_options(self) -> list[str]:
        """Estimator-specific non-private opt-ins (override; default none)."""
        return []

    def _planned_privacy_spend(self):
        """``(epsilon, delta)`` a fit with the current parameters will spend at most.

        Read from parameters only (meta-estimators plan a total before any row is read).
        Default: the ``epsilon`` / ``delta`` parameters (0 where absent); override where
        the spend depends on other parameters.
        """
        params = self.get_params(deep=False)
        return params.get("epsilon", 0.0), params.get("delta", 0.0)

    def _planned_privacy_guarantee(self):
        """The ``privacy_guarantee_`` a fit with the current parameters will record.

        Read from parameters only, like :meth:`_planned_privacy_spend`: a private model
        selection reports it without revealing which candidates ran. ``"none"`` for an
        ``epsilon = inf`` fit or a non-private opt-in; otherwise
        :meth:`_mechanism_guarantee`.
        """
        if self._nonprivate_options():
            return "none"
        eps = self._planned_privacy_spend()[0]
        if isinstance(eps, Real) and math.isinf(float(eps)):
            return "none"
        return self._mechanism_guarantee()

    def _mechanism_guarantee(self):
        """``"exact"`` or ``"approximate"`` for a private fit (default ``"exact"``).

        An ``accountant`` parameter (DP-SGD) decides it: that accountant's guarantee.
        Override where it depends on other parameters or is approximate (a
        flow-sampled exponential mechanism).
        """
        name = self.get_params(deep=False).get("accountant")
        if name is None:
            return "exact"
        from skdp.accounting import get_accountant

        return get_accountant(name).guarantee

    def _record_privacy_spent(self, epsilon, delta=0.0, *, guarantee="exact", breakdown=None):
        """Store the fitted privacy facts (called at the end of ``fit``).

        A fit with ``epsilon = inf`` or any non-private opt-in
        (:meth:`_nonprivate_options`) is recorded as ``epsilon_spent_ = inf``,
        ``privacy_guarantee_ = "none"``.

        ``breakdown`` (``{part: epsilon}``, default: the ``privacy_breakdown_`` the fit
        already set, else ``{"fit": epsilon}`` for a one-part fit, ``{}`` when nothing
        was spent) is stored as ``privacy_breakdown_`` with float values; a non-private
        fit whose parts add up to less than ``inf`` gets the entry ``"nonprivate": inf``
        so that the parts always add up to ``epsilon_spent_``.
        """
        if guarantee not in PRIVACY_GUARANTEES:
            raise ValueError(f"guarantee must be one of {PRIVACY_GUARANTEES}")
        if breakdown is None:
            breakdown = getattr(self, "privacy_breakdown_", None)
            # keys of this default only: left by an earlier fit of an estimator that
            # sets no breakdown of its own, so recomputed
            if not isinstance(breakdown, dict) or set(breakdown) <= {"fit", "nonprivate"}:
                breakdown = {"fit": float(epsilon)} if float(epsilon) != 0.0 else {}
        breakdown = {str(k): float(v) for k, v in breakdown.items()}
        self.nonprivate_options_ = self._nonprivate_options()
        if self.nonprivate_options_ or math.isinf(float(epsilon)):
            epsilon, guarantee = math.inf, "none"
            if not math.isinf(math.fsum(breakdown.values())):
                breakdown["nonprivate"] = math.inf
        self.epsilon_spent_ = float(epsilon)
        self.delta_spent_ = float(delta)
        self.privacy_guarantee_ = guarantee
        self.privacy_breakdown_ = breakdown
        return self
