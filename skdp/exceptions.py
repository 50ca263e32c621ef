"""Warnings and errors raised by skdp.

Every warning that signals a privacy leak is a :class:`PrivacyLeakWarning`; the
project's test suite turns it into an error except where a test expects it.
Advisory warnings (the guarantee is approximate, delta is large, ...) derive from
:class:`PrivacyAdvisoryWarning`, itself a :class:`UserWarning`.
"""

from __future__ import annotations

__all__ = [
    "ApproximateGuaranteeWarning",
    "BoundsEstimateWarning",
    "BudgetExceededError",
    "DeltaTooLargeWarning",
    "LedgerCopyError",
    "PrivacyAdvisoryWarning",
    "PrivacyLeakWarning",
    "PrivacySpendAborted",
    "PrivacyUnitError",
    "TuningBudgetWarning",
]


class PrivacyLeakWarning(UserWarning):
    """Something touched private data without being privatised and accounted.

    Raised, for example, when the user opts in to reading bounds or categories off
    the data (``bounds="data"``): the released result then carries no formal
    differential-privacy guarantee with respect to those statistics.
    """


class PrivacyAdvisoryWarning(UserWarning):
    """Base class for advice about a privacy setting that is legal but questionable."""


class ApproximateGuaranteeWarning(PrivacyAdvisoryWarning):
    """The stated (epsilon, delta) is an approximation, not a proven bound.

    Emitted for the ``"gdp_clt"`` accountant and for flow-sampled exponential
    mechanisms, whose ``privacy_guarantee_`` is ``"approximate"``.
    """


class DeltaTooLargeWarning(PrivacyAdvisoryWarning):
    """``delta`` is at least ``1/n``: the guarantee then permits releasing a record."""


class BoundsEstimateWarning(PrivacyAdvisoryWarning):
    """Missing bounds are being estimated privately with too little data or budget for the
    estimate to be useful, or the released estimate is narrower than a public minimum
    width or collapsed onto one value (a mostly-0 indicator column). Depends only on
    public quantities (n, d, epsilon, the search grid) and on the released estimate
    (post-processing); see :func:`skdp.mechanisms.bounds_estimate_unreliable`."""


class TuningBudgetWarning(PrivacyAdvisoryWarning):
    """A search leaves its final model a small share of its total budget.

    Emitted by :class:`~skdp.model_selection.DPGridSearchCV` when the refitted model's
    budget (add/remove) is less than a tenth of what one untuned fit charged the same
    total would get (half the replace-one total) *and* below 1: a small budget spread
    over many fold fits and scorer calls. Tuning then often loses to one untuned fit
    with the whole budget. Decided from public quantities only (the total, the number
    of candidates and folds, the split rule), never from the rows or the scores.
    """


class BudgetExceededError(ValueError):
    """A spend would take a :class:`~skdp.accounting.PrivacyLedger` past its budget,
    or the requested budget is too small for the mechanism to be run at all."""


class PrivacyUnitError(ValueError):
    """A spend in one privacy unit (per row, or per patient with ``groups``) was charged
    to a :class:`~skdp.accounting.PrivacyLedger` that keeps its books in the other:
    the two are not added without an explicit conversion (:doc:`/patients`)."""


class LedgerCopyError(RuntimeError):
    """A copy of a :class:`~skdp.accounting.PrivacyLedger` was asked to spend.

    Pickling, :func:`copy.copy`, :func:`copy.deepcopy` (and so
    :func:`sklearn.base.clone` of an object holding a ledger) and joblib worker
    processes make copies; spends recorded there would never reach the original ledger,
    so copies refuse to spend.
    """


class PrivacySpendAborted(BaseException):
    """A DP scorer's ledger refused a spend: the model-selection run stops.

    Raised by :class:`skdp.metrics.DPScorer` when its ledger refuses a spend (budget
    exhausted, :class:`~skdp.exceptions.BudgetExceededError`; or the ledger is a copy
    in a worker, :class:`~skdp.exceptions.LedgerCopyError`). The ledger's error is kept
    as :attr:`error` (and as ``__cause__`` in the process that raised it).

    It derives from :class:`BaseException`, not :class:`Exception`, on purpose:
    scikit-learn's model selection catches every :class:`Exception` a scorer raises and,
    unless ``error_score="raise"``, records the score as NaN and carries on, so that
    ``GridSearchCV`` would still return a ``best_params_`` chosen from the scores
    released before the budget ran out. Like :class:`KeyboardInterrupt`, this error
    passes through ``except Exception``; catch it by name.

    Attributes
    ----------
    error : Exception or None
        The ledger's refusal.
    """

    def __init__(self, message, error=None):
        super().__init__(message)
        self.error = error

    def __reduce__(self):  # keep ``error`` through pickling (joblib workers)
        return (type(self), (self.args[0] if self.args else "", self.error))

    @classmethod
    def from_refusal(cls, error):
        """Wrap a ledger's refusal (``error``) into an abort."""
        return cls(f"DP scorer stopped the run: its PrivacyLedger refused a spend. {error}", error)
