"""A user-held ledger of (epsilon, delta) spends across fits and scorer calls."""

from __future__ import annotations

import math

from skdp.accounting._composition import _check_spend, compose_parallel, compose_sequential
from skdp.accounting._rdp import _check_real
from skdp.exceptions import BudgetExceededError

__all__ = ["PrivacyLedger"]

# Relative slack when comparing a total against the budget, so that e.g. spending
# 0.1 and then 0.2 of a 0.3 budget is not refused because 0.1 + 0.2 > 0.3 in binary
# floating point. Over-spending by at most 1e-9 relative is not a meaningful leak.
_RTOL = 1e-9


def _fmt(x):
    return f"{x:.6g}"


class PrivacyLedger:
    """A budget, and the (epsilon, delta) spends charged to it, composed sequentially.

    Create one per dataset you protect, keep it yourself, and charge every release on
    that dataset to it: each ``fit`` (``ledger.spend(est.epsilon_spent_,
    est.delta_spent_)`` or :meth:`spend_fitted`) and each DP scorer call (the scorers in
    :mod:`skdp.metrics` take ``ledger=``). A spend that would take the sequential total
    past the budget raises :class:`~skdp.exceptions.BudgetExceededError` and is not
    recorded.

    Parameters
    ----------
    epsilon_budget : float, default=inf
        Total epsilon allowed, >= 0 (``inf``: record only, never refuse on epsilon).
    delta_budget : float, default=1.0
        Total delta allowed, in ``[0, 1]``.

    Attributes
    ----------
    entries : list of dict
        One ``{"label": str or None, "epsilon": float, "delta": float}`` per spend, in
        order.
    epsilon_spent, delta_spent : float
        Basic sequential composition of the entries (sums; delta capped at 1).
    remaining : tuple of float
        ``(epsilon_budget - epsilon_spent, delta_budget - delta_spent)``, floored at 0.

    Notes
    -----
    Composition is basic (additive) sequential composition, valid for any mechanisms
    on the same data under one neighbouring relation (add/remove one row by default in
    skdp; the DP AUC/AP scorers use replace-one, and a replace-one epsilon-DP mechanism
    is 2 epsilon-DP under add/remove, so mixing them needs care). Use
    :meth:`spend_parallel` for releases on disjoint row subsets (e.g. the folds of one
    cross-validation split), which compose in parallel (the maximum).

    Totals are compared to the budget with a relative slack of 1e-9, so that sums such
    as ``0.1 + 0.2`` do not fail on binary rounding.

    Copies record separately: :func:`copy.copy`, :func:`copy.deepcopy`, pickling, :func:`sklearn.clone`
    of an object holding a ledger, and joblib workers (``GridSearchCV(n_jobs>1)``) each
    get an independent ledger, and spends made in a copy never reach the original.
    Under parallel grid search, charge the spend to your own ledger from the number of
    candidates and folds instead (see :mod:`skdp.metrics`). The ledger is not
    thread-safe.

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
    """  # noqa: E501

    def __init__(self, epsilon_budget=math.inf, delta_budget=1.0):
        self.epsilon_budget = _check_real(epsilon_budget, "epsilon_budget", low=0.0, allow_inf=True)
        self.delta_budget = _check_real(delta_budget, "delta_budget", low=0.0, high=1.0)
        self.entries = []

    # ---------------------------------------------------------------- totals

    @property
    def epsilon_spent(self):
        """Sum of the recorded epsilons."""
        return compose_sequential((e["epsilon"], e["delta"]) for e in self.entries)[0]

    @property
    def delta_spent(self):
        """Sum of the recorded deltas (capped at 1)."""
        return compose_sequential((e["epsilon"], e["delta"]) for e in self.entries)[1]

    @property
    def remaining(self):
        """``(epsilon, delta)`` still available, floored at 0."""
        eps_spent, delta_spent = compose_sequential(
            (e["epsilon"], e["delta"]) for e in self.entries
        )
        if math.isinf(self.epsilon_budget):
            eps_left = math.inf
        else:
            eps_left = max(0.0, self.epsilon_budget - eps_spent)
        return eps_left, max(0.0, self.delta_budget - delta_spent)

    def __len__(self):
        return len(self.entries)

    # ---------------------------------------------------------------- spending

    def _within(self, spent, budget):
        return math.isinf(budget) or spent <= budget * (1.0 + _RTOL)

    def _charge(self, epsilon, delta, label):
        if label is not None and not isinstance(label, str):
            raise TypeError("label must be a string or None.")
        eps_spent, delta_spent = compose_sequential(
            (e["epsilon"], e["delta"]) for e in self.entries
        )
        new_eps, new_delta = compose_sequential([(eps_spent, delta_spent), (epsilon, delta)])
        if not (
            self._within(new_eps, self.epsilon_budget)
            and self._within(new_delta, self.delta_budget)
        ):
            where = f" for {label!r}" if label else ""
            raise BudgetExceededError(
                f"PrivacyLedger budget exceeded{where}: budget (epsilon="
                f"{_fmt(self.epsilon_budget)}, delta={_fmt(self.delta_budget)}), already "
                f"spent (epsilon={_fmt(eps_spent)}, delta={_fmt(delta_spent)}), requested "
                f"(epsilon={_fmt(epsilon)}, delta={_fmt(delta)})."
            )
        self.entries.append({"label": label, "epsilon": epsilon, "delta": delta})
        return self

    def spend(self, epsilon, delta=0.0, *, label=None):
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

        Raises
        ------
        BudgetExceededError
            If the sequential total would pass the budget; nothing is recorded then.
        """
        epsilon, delta = _check_spend((epsilon, delta))
        return self._charge(epsilon, delta, label)

    def spend_parallel(self, spends, *, label=None):
        """Charge releases on disjoint row subsets as one entry (their maximum).

        Parameters
        ----------
        spends : iterable of (float, float)
            ``(epsilon, delta)`` of each release; the row subsets must be disjoint and
            chosen independently of the private data.
        label : str, optional
            A name for the entry.

        Returns
        -------
        self
        """
        epsilon, delta = compose_parallel(spends)
        return self._charge(epsilon, delta, label)

    def spend_fitted(self, estimator, *, label=None):
        """Charge what a fitted skdp estimator spent (``epsilon_spent_``, ``delta_spent_``).

        ``label`` defaults to ``"<ClassName>.fit"``. Returns ``self``.
        """
        try:
            epsilon, delta = estimator.epsilon_spent_, estimator.delta_spent_
        except AttributeError:
            raise ValueError(
                "estimator has no epsilon_spent_/delta_spent_: is it a fitted skdp estimator?"
            ) from None
        if label is None:
            label = f"{type(estimator).__name__}.fit"
        return self.spend(epsilon, delta, label=label)

    def __copy__(self):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.entries = [dict(e) for e in self.entries]
        return new

    def reset(self):
        """Forget every entry (keeps the budget); return ``self``."""
        self.entries = []
        return self

    def __repr__(self):
        return (
            f"PrivacyLedger(epsilon_budget={_fmt(self.epsilon_budget)}, "
            f"delta_budget={_fmt(self.delta_budget)}, epsilon_spent={_fmt(self.epsilon_spent)}, "
            f"delta_spent={_fmt(self.delta_spent)}, n_entries={len(self.entries)})"
        )
