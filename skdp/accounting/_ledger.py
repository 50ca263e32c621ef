"""A user-held ledger of (epsilon, delta) spends across fits and scorer calls."""

from __future__ import annotations

import math
import os
import threading

from skdp.accounting._composition import _check_spend, compose_parallel
from skdp.accounting._rdp import _check_real
from skdp.exceptions import (
    BudgetExceededError,
    LedgerCopyError,
    PrivacySpendAborted,
    PrivacyUnitError,
)
from skdp.utils._groups import check_max_rows_per_group

__all__ = ["LedgerCopyError", "PrivacyLedger", "PrivacySpendAborted"]

# Relative slack when comparing a total against the budget, so that e.g. spending
# 0.1 and then 0.2 of a 0.3 budget is not refused because 0.1 + 0.2 > 0.3 in binary
# floating point. Over-spending by at most 1e-9 relative is not a meaningful leak.
_RTOL = 1e-9

_RELATIONS = ("add_remove", "replace")

_COPY_MESSAGE = (
    "This PrivacyLedger is a copy: it was pickled, copied (copy.copy, copy.deepcopy, "
    "sklearn.base.clone of an object that holds it), sent to a joblib worker (e.g. "
    "GridSearchCV(n_jobs>1) or cross_validate(n_jobs>1) with a scorer made with "
    "ledger=), or is used in a process other than the one that created it. A spend "
    "recorded in a copy never reaches the original ledger and could not enforce its "
    "budget, so a copy refuses to spend (it can still be read). Spend on the original "
    "ledger in the process that created it: run the search with n_jobs=1, or make the "
    "scorer without ledger= and charge the whole run to your ledger up front with "
    "ledger.spend(*skdp.metrics.cv_privacy_spend(...))."
)


def _fmt(x):
    return f"{x:.6g}"


def _check_relation(relation, name="relation"):
    if not isinstance(relation, str):
        raise TypeError(f"{name} must be a string, one of {_RELATIONS}.")
    if relation not in _RELATIONS:
        raise ValueError(f"{name} must be one of {_RELATIONS}.")
    return relation


def _replace_one_from_add_remove(epsilon, delta):
    """``(epsilon, delta)``-DP under add/remove one row, stated under replace one row.

    A replacement is a removal followed by an addition, so group privacy for two
    add/remove steps gives ``(2 epsilon, (1 + e^epsilon) delta)`` (Dwork & Roth 2014,
    Thm 2.2 and its approximate-DP form; Vadhan 2017, Lemma 2.2). The delta is capped at
    1 (a delta of 1 guarantees nothing).
    """
    if delta == 0.0:
        return 2.0 * epsilon, 0.0
    # log((1 + e^eps) delta) = log(delta) + eps + log1p(e^-eps), overflow-free
    log_delta = math.log(delta) + epsilon + math.log1p(math.exp(-epsilon))
    return 2.0 * epsilon, 1.0 if log_delta >= 0.0 else min(1.0, math.exp(log_delta))


def _neumaier_add(pair, x):
    """Add ``x`` to a compensated sum ``(total, compensation)`` (Neumaier 1974)."""
    total, comp = pair
    t = total + x
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


class PrivacyLedger:
    """A budget, and the (epsilon, delta) spends charged to it, composed sequentially.

    Create one per dataset you protect, keep it yourself, and charge every release on
    that dataset to it: each ``fit`` (:meth:`spend_fitted`, or
    ``ledger.spend(est.epsilon_spent_, est.delta_spent_)``) and each DP scorer call (the
    scorers in :mod:`skdp.metrics` take ``ledger=``). A spend that would take the
    sequential total past the budget raises :class:`~skdp.exceptions.BudgetExceededError`
    and is not recorded.

    Parameters
    ----------
    epsilon_budget : float, default=inf
        Total epsilon allowed, >= 0 (``inf``: record only, never refuse on epsilon).
    delta_budget : float, default=1.0
        Total delta allowed, in ``[0, 1]``.
    unit : {"row", "group"} or None, default=None
        The privacy unit the books are kept in: one row, or one patient with all their
        rows (fits with ``groups=``, :doc:`/patients`). ``None``: the unit of the first
        spend. Spends in another unit are refused (see Notes).

    Attributes
    ----------
    epsilon_budget, delta_budget : float
        The budget (read-only).
    entries : list of dict
        One ``{"label": str or None, "epsilon": float, "delta": float, "unit": str}``
        per spend, in order (a copy: editing it changes nothing).
    unit : str or None
        The privacy unit of the books (``None`` before the first spend).
    epsilon_spent, delta_spent : float
        Basic sequential composition of the entries (sums; delta capped at 1).
    remaining : tuple of float
        ``(epsilon_budget - epsilon_spent, delta_budget - delta_spent)``, floored at 0.
    is_copy : bool
        Whether this object is a copy, which refuses to spend (see Notes).

    Notes
    -----
    Composition is basic (additive) sequential composition, valid for any mechanisms
    on the same data under **one** neighbouring relation; the ledger adds what it is
    given and does not convert between relations. skdp's estimators report
    ``epsilon_spent_`` under add/remove one row (``n`` public); the DP scorers of
    :mod:`skdp.metrics` and :func:`skdp.metrics.cv_privacy_spend` are stated under
    replace one row. To keep a replace-one ledger, charge fits with
    ``spend_fitted(est, relation="replace")``: an add/remove ``(epsilon, delta)``-DP fit
    is ``(2 epsilon, (1 + e^epsilon) delta)``-DP under replace-one (group privacy: a
    replacement is a removal and an addition). Use :meth:`spend_parallel` for releases
    on disjoint row subsets chosen independently of the data (e.g. the folds of one
    cross-validation split), which compose in parallel (the maximum).

    **Privacy units.** Every spend carries its unit (``"row"``, or ``"group"`` for a
    patient-level fit: ``privacy_unit_``). Row-level and patient-level spends are not
    added: a per-row guarantee says nothing exact about a patient with several rows,
    and a per-patient one is stated under another neighbouring relation. To charge a
    per-row fit to a patient-level ledger, give ``spend_fitted`` the public bound
    ``max_rows_per_group=k`` on the rows of one patient: the fit is then charged at its
    group-privacy cost ``(k epsilon, k e^{(k-1) epsilon} delta)`` (Dwork & Roth 2014,
    Thm 2.2). A per-patient spend is never converted to a per-row one here: keep a
    separate ledger for row-level releases.

    Totals are compared to the budget with a relative slack of 1e-9, so that sums such
    as ``0.1 + 0.2`` do not fail on binary rounding. Running totals (compensated sums)
    make a spend O(1), and a lock makes spending thread-safe: threads sharing one
    ledger never overspend its budget.

    Copies refuse to spend. :func:`copy.copy`, :func:`copy.deepcopy`, pickling,
    :func:`sklearn.base.clone` of an object holding a ledger (it deep-copies its
    parameters) and joblib worker processes (``GridSearchCV(n_jobs>1)``) make copies,
    and a spend recorded in a copy would never reach the original, nor be held to its
    budget. A copy (or the original used in another process, e.g. after a fork) raises
    :class:`LedgerCopyError`, whose message says what to do: spend on the original in
    the process that created it (``n_jobs=1``), or charge a whole parallel search up
    front with :func:`skdp.metrics.cv_privacy_spend`. A copy can still be read (a
    snapshot); to carry a budget over to a new session, start a new ledger with
    ``PrivacyLedger(*snapshot.remaining)``.

    A :class:`skdp.metrics.DPScorer` whose ledger refuses a spend raises
    :class:`PrivacySpendAborted`, which scikit-learn's ``error_score`` cannot turn into
    a NaN score, so that a grid search stops instead of returning a selection made from
    the scores released before the budget ran out.

    References
    ----------
    .. [1] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
       Found. Trends Theor. Comput. Sci. 9(3-4), 2014 (Thm 3.16: composition; Thm 2.2:
       group privacy).
    .. [2] A. Neumaier, "Rundungsfehleranalyse einiger Verfahren zur Summation endlicher
       Summen", ZAMM 54(1), 1974 (compensated summation).

    Examples
    --------
    >>> from skdp.accounting import PrivacyLedger
    >>> ledger = PrivacyLedger(epsilon_budget=1.0, delta_budget=1e-5)
    >>> ledger = ledger.spend(0.5, 1e-6, label="fit").spend(0.25, label="score")
    >>> ledger.epsilon_spent, ledger.remaining
    (0.75, (0.25, 9e-06))
    >>> ledger.spend(0.5)
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: PrivacyLedger budget exceeded: budget (epsilon=1, delta=1e-05), already spent (epsilon=0.75, delta=1e-06), requested (epsilon=0.5, delta=0).
    >>> import copy
    >>> copy.deepcopy(ledger).spend(0.1)
    Traceback (most recent call last):
    ...
    skdp.exceptions.LedgerCopyError: This PrivacyLedger is a copy: ...
    """  # noqa: E501

    def __init__(self, epsilon_budget=math.inf, delta_budget=1.0, *, unit=None):
        self._epsilon_budget = _check_real(
            epsilon_budget, "epsilon_budget", low=0.0, allow_inf=True
        )
        self._delta_budget = _check_real(delta_budget, "delta_budget", low=0.0, high=1.0)
        self._unit = None if unit is None else _check_unit(unit)
        self._entries = []
        self._eps_sum = (0.0, 0.0)  # compensated sum of the finite epsilons
        self._eps_inf = False  # whether an infinite epsilon was recorded
        self._delta_sum = (0.0, 0.0)
        self._lock = threading.Lock()
        self._owner_pid = os.getpid()
        self._is_copy = False

    # ---------------------------------------------------------------- copies

    def __getstate__(self):
        # every copy (pickle, copy.copy, copy.deepcopy, sklearn.clone, joblib workers)
        # goes through here and comes out marked as a copy
        with self._lock:
            state = dict(self.__dict__)
            state["_entries"] = [dict(e) for e in self._entries]
        del state["_lock"]
        state["_is_copy"] = True
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def is_copy(self):
        """Whether this ledger is a copy (or lives in another process): it cannot spend."""
        return self._is_copy or self._owner_pid != os.getpid()

    def _check_original(self):
        if self.is_copy:
            raise LedgerCopyError(_COPY_MESSAGE)

    # ---------------------------------------------------------------- totals

    @property
    def epsilon_budget(self):
        """Total epsilon allowed (read-only)."""
        return self._epsilon_budget

    @property
    def delta_budget(self):
        """Total delta allowed (read-only)."""
        return self._delta_budget

    @property
    def entries(self):
        """The recorded spends, in order (a copy)."""
        with self._lock:
            return [dict(e) for e in self._entries]

    def _totals(self):
        # caller holds the lock
        eps = math.inf if self._eps_inf else self._eps_sum[0] + self._eps_sum[1]
        return eps, min(1.0, self._delta_sum[0] + self._delta_sum[1])

    @property
    def epsilon_spent(self):
        """Sum of the recorded epsilons."""
        with self._lock:
            return self._totals()[0]

    @property
    def delta_spent(self):
        """Sum of the recorded deltas (capped at 1)."""
        with self._lock:
            return self._totals()[1]

    @property
    def remaining(self):
        """``(epsilon, delta)`` still available, floored at 0."""
        with self._lock:
            eps_spent, delta_spent = self._totals()
        if math.isinf(self._epsilon_budget):
            eps_left = math.inf
        else:
            eps_left = max(0.0, self._epsilon_budget - eps_spent)
        return eps_left, max(0.0, self._delta_budget - delta_spent)

    @property
    def unit(self):
        """The privacy unit of the books: fixed at construction or by the first
        spend (``None`` before)."""
        with self._lock:
            return self._unit

    def __len__(self):
        return len(self._entries)

    # ---------------------------------------------------------------- spending

    @staticmethod
    def _within(spent, budget):
        return math.isinf(budget) or spent <= budget * (1.0 + _RTOL)

    def _charge(self, epsilon, delta, label, unit="row"):
        """Record ``(epsilon, delta)`` if it fits the budget; O(1), under the lock."""
        if label is not None and not isinstance(label, str):
            raise TypeError("label must be a string or None.")
        unit = _check_unit(unit)
        self._check_original()
        with self._lock:
            if self._unit is not None and unit != self._unit:
                raise PrivacyUnitError(_unit_message(self._unit, unit))
            eps_spent, delta_spent = self._totals()
            eps_inf = self._eps_inf or math.isinf(epsilon)
            eps_sum = (
                self._eps_sum if math.isinf(epsilon) else _neumaier_add(self._eps_sum, epsilon)
            )
            delta_sum = _neumaier_add(self._delta_sum, delta)
            new_eps = math.inf if eps_inf else eps_sum[0] + eps_sum[1]
            new_delta = min(1.0, delta_sum[0] + delta_sum[1])
            if not (
                self._within(new_eps, self._epsilon_budget)
                and self._within(new_delta, self._delta_budget)
            ):
                where = f" for {label!r}" if label else ""
                raise BudgetExceededError(
                    f"PrivacyLedger budget exceeded{where}: budget (epsilon="
                    f"{_fmt(self._epsilon_budget)}, delta={_fmt(self._delta_budget)}), "
                    f"already spent (epsilon={_fmt(eps_spent)}, delta={_fmt(delta_spent)}), "
                    f"requested (epsilon={_fmt(epsilon)}, delta={_fmt(delta)})."
                )
            self._entries.append({"label": label, "epsilon": epsilon, "delta": delta, "unit": unit})
            self._unit = unit
            self._eps_sum, self._eps_inf, self._delta_sum = eps_sum, eps_inf, delta_sum
        return self

    def spend(self, epsilon, delta=0.0, *, label=None, unit="row"):
        """Charge one (epsilon, delta) release; return ``self``.

        Parameters
        ----------
        epsilon : float
            >= 0 (``inf`` for a non-private release: refused unless the epsilon
            budget is ``inf``).
        delta : float, default=0.0
            In ``[0, 1]``.
        label : str, optional
            A name for the entry (e.g. ``"DPLinearRegression.fit"``).
        unit : {"row", "group"}, default="row"
            The privacy unit of the release (``"group"``: per patient).

        Returns
        -------
        self

        Raises
        ------
        BudgetExceededError
            If the sequential total would pass the budget; nothing is recorded then.
        LedgerCopyError
            If this ledger is a copy (see the class Notes).
        PrivacyUnitError
            If ``unit`` is not the ledger's (a ``ValueError``; see the class Notes).
        """
        epsilon, delta = _check_spend((epsilon, delta))
        return self._charge(epsilon, delta, label, unit)

    def spend_parallel(self, spends, *, label=None, unit="row"):
        """Charge releases on disjoint row subsets as one entry (their maximum).

        Parameters
        ----------
        spends : iterable of (float, float)
            ``(epsilon, delta)`` of each release; the row subsets must be disjoint and
            chosen independently of the private data.
        label : str, optional
            A name for the entry.
        unit : {"row", "group"}, default="row"
            The privacy unit of the releases.

        Returns
        -------
        self
        """
        epsilon, delta = compose_parallel(spends)
        return self._charge(epsilon, delta, label, unit)

    def spend_fitted(
        self, estimator, *, label=None, relation="add_remove", max_rows_per_group=None
    ):
        """Charge what a fitted skdp estimator spent (``epsilon_spent_``, ``delta_spent_``).

        A model fitted without differential privacy (``epsilon_spent_ = inf`` or
        ``privacy_guarantee_ = "none"``, e.g. ``epsilon=inf`` or an opt-in to metadata
        read off the data such as ``bounds="data"``) is refused unless the epsilon budget
        is itself ``inf``; it is then recorded with ``epsilon = inf``.

        Parameters
        ----------
        estimator : fitted skdp estimator
            Anything with ``epsilon_spent_`` and ``delta_spent_``.
        label : str, optional
            Defaults to ``"<ClassName>.fit"``.
        relation : {"add_remove", "replace"}, default="add_remove"
            The neighbouring relation this ledger keeps its books under. skdp estimators
            report add/remove one row: ``"add_remove"`` charges their spend as reported,
            ``"replace"`` charges ``(2 epsilon, (1 + e^epsilon) delta)`` (group
            privacy), the replace-one cost of the same fit -- use it on a ledger that
            also holds DP scorer calls or :func:`skdp.metrics.cv_privacy_spend` totals.
        max_rows_per_group : int, optional
            Charge a per-row fit to a patient-level ledger (``unit="group"``) at its
            group-privacy cost ``(k epsilon, k e^{(k-1) epsilon} delta)``, ``k`` the
            public bound on one patient's rows (see the class Notes). Ignored for a
            fit that is already per patient (``privacy_unit_ = "group"``).

        Returns
        -------
        self
            This ledger, with the fit's entry added.

        Raises
        ------
        BudgetExceededError
            If the spend passes the budget, or the model is not private and the epsilon
            budget is finite.
        """
        relation = _check_relation(relation)
        try:
            epsilon, delta = estimator.epsilon_spent_, estimator.delta_spent_
        except AttributeError:
            raise ValueError(
                "estimator has no epsilon_spent_/delta_spent_: is it a fitted skdp estimator?"
            ) from None
        epsilon, delta = _check_spend((epsilon, delta))
        name = type(estimator).__name__
        self._check_original()
        if getattr(estimator, "privacy_guarantee_", None) == "none":
            epsilon = math.inf  # a non-private fit, whatever epsilon_spent_ says
        if math.isinf(epsilon) and not math.isinf(self._epsilon_budget):
            options = getattr(estimator, "nonprivate_options_", None)
            because = ""
            if isinstance(options, list | tuple) and options:
                because = " (non-private options: " + ", ".join(map(str, options)) + ")"
            raise BudgetExceededError(
                f"{name} was fitted without differential privacy{because}: its "
                "epsilon_spent_ is inf or its privacy_guarantee_ is 'none', and this "
                "ledger's epsilon budget is finite. Refit it privately (finite epsilon, "
                "public metadata declared instead of a 'data' opt-in), or record it in a "
                "ledger with epsilon_budget=inf."
            )
        if relation == "replace":
            epsilon, delta = _replace_one_from_add_remove(epsilon, delta)
        if label is None:
            label = f"{name}.fit"
        unit = getattr(estimator, "privacy_unit_", "row")
        if unit == "row" and max_rows_per_group is not None:
            epsilon, delta = _group_privacy(epsilon, delta, max_rows_per_group)
            unit = "group"
        return self._charge(epsilon, delta, label, unit)

    def reset(self):
        """Forget every entry (keeps the budget); return ``self``."""
        self._check_original()
        with self._lock:
            self._entries = []
            self._eps_sum, self._eps_inf, self._delta_sum = (0.0, 0.0), False, (0.0, 0.0)
        return self

    def __repr__(self):
        with self._lock:
            eps_spent, delta_spent = self._totals()
        copy = ", copy" if self.is_copy else ""
        return (
            f"PrivacyLedger(epsilon_budget={_fmt(self._epsilon_budget)}, "
            f"delta_budget={_fmt(self._delta_budget)}, epsilon_spent={_fmt(eps_spent)}, "
            f"delta_spent={_fmt(delta_spent)}, n_entries={len(self._entries)}{copy})"
        )


_UNITS = ("row", "group")


def _check_unit(unit):
    if not isinstance(unit, str) or unit not in _UNITS:
        raise ValueError(f"unit must be 'row' or 'group', got {unit!r}")
    return unit


def _unit_message(have, got):
    if have == "group":
        return (
            "this PrivacyLedger keeps its books per patient (unit='group') and the spend "
            "is per row: a per-row guarantee does not bound a patient with several rows. "
            "Fit with groups= and max_rows_per_group=, or charge the fit with "
            "spend_fitted(est, max_rows_per_group=k) (group privacy: k times epsilon)."
        )
    return (
        "this PrivacyLedger keeps its books per row (unit='row') and the spend is per "
        "patient (unit='group'): the two are stated under different neighbouring "
        "relations and are not added. Keep a separate ledger with unit='group' for "
        "patient-level releases (and charge per-row fits to it with "
        "spend_fitted(est, max_rows_per_group=k))."
    )


def _group_privacy(epsilon, delta, max_rows_per_group):
    """``(k epsilon, k e^{(k-1) epsilon} delta)``: a per-row ``(epsilon, delta)``-DP
    release for a group of at most ``k`` rows (Dwork & Roth 2014, Thm 2.2)."""
    k = check_max_rows_per_group(max_rows_per_group)
    if math.isinf(epsilon):
        return math.inf, delta
    if delta == 0.0:
        return k * epsilon, 0.0
    if (k - 1) * epsilon > 700.0:  # e^{(k-1) epsilon} overflows: delta is 1 anyway
        return k * epsilon, 1.0
    return k * epsilon, min(1.0, k * math.exp((k - 1) * epsilon) * delta)
