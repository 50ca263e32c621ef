"""Private selection for :class:`DPGridSearchCV`: random repetitions, only the winner released.

Papernot and Steinke (2022), Theorem 2: repeat an ``eps``-DP run ``K ~ D(eta, gamma)``
times (truncated negative binomial) and release only the best output; the result is
``(2 + eta) eps``-DP (``eta = 1``: the geometric stopping of Liu and Talwar 2019, ``3 eps``).
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.base import clone

from skdp.accounting._ledger import _replace_one_from_add_remove
from skdp.model_selection._plan import _check_fitted_spend, _num_samples, _take
from skdp.utils._logging import quiet
from skdp.utils._meta_privacy import GUARANTEE_ORDER, check_pipeline_privacy, weakest_guarantee
from skdp.utils._random import _seed_from, fit_streams

__all__ = ["PrivateSelection", "private_selection_epsilon", "truncated_negative_binomial_mean"]

#: Attributes of a grid search that private selection withholds (they would reveal the
#: runs that lost, or their number, which the theorem does not cover).
WITHHELD = frozenset(
    {
        "cv_results_",
        "refit_time_",
        "n_runs_",
    }
)


@dataclass(frozen=True)
class PrivateSelection:
    """Private selection mode of :class:`DPGridSearchCV` (random repetitions, one winner).

    Passed as ``DPGridSearchCV(..., selection=PrivateSelection(...))`` (or
    ``selection="private"`` for the defaults). Each *run* picks a candidate of the grid
    uniformly at random, cross-validates it on fresh data-independent folds with the
    selecting DP scorer, and returns ``(candidate, mean noisy score)``. The number of
    runs ``K`` is random, drawn from a truncated negative binomial distribution
    ``D(eta, gamma)`` (Papernot and Steinke 2022) from the search's own random stream,
    never from the data, and is itself withheld. Only the best run's candidate and score
    are released (``best_params_``, ``best_index_``, ``best_score_``), then the winner is
    refitted on all rows (``refit=True``, charged). ``cv_results_``, the number of runs
    and any timings do not exist on the fitted search.

    Parameters
    ----------
    eta : float, default=1.0
        Shape of the repetition distribution, ``eta >= 0``. ``1.0``: geometric
        (``P[K = k] = gamma (1 - gamma)^(k - 1)``, Liu and Talwar 2019); ``0.0``:
        logarithmic (``P[K = k] = (1 - gamma)^k / (k log(1 / gamma))``). The selection
        costs ``(2 + eta)`` times one run's epsilon: a smaller ``eta`` is cheaper, with
        more mass on few runs and a heavier tail for the same mean.
    expected_runs : float or None, default=None
        Mean ``E[K] >= 1`` of the number of runs (sets ``gamma``); ``None``: the number of
        candidates in the grid (the grid search's expected compute). Public: it does not
        change the privacy cost (see Notes), only the compute and how likely a good
        candidate is tried.

    Notes
    -----
    **Theorem used.** Papernot and Steinke (2022, ICLR), Theorem 2 (truncated negative
    binomial): if one run ``Q`` is ``(lambda, eps)``- and ``(lambda_hat, eps_hat)``-RDP,
    the best of ``K ~ D(eta, gamma)`` independent runs is ``(lambda, eps')``-RDP with
    ``eps' = eps + (1 + eta)(1 - 1/lambda_hat) eps_hat + (1 + eta) log(1/gamma)/lambda_hat
    + log(E[K])/(lambda - 1)``. A pure ``eps0``-DP run is ``(lambda, eps0)``-RDP at every
    order; letting ``lambda = lambda_hat -> inf`` gives ``eps' -> (2 + eta) eps0`` and,
    since the Rényi divergence of order ``lambda`` increases to the max-divergence, the
    selection is **pure** ``(2 + eta) eps0``-DP, whatever ``gamma`` and the grid size.
    With ``eta = 1`` this is Liu and Talwar's (2019) ``3 eps0`` for geometric stopping.
    Only pure-DP runs (every candidate and the scorer with ``delta = 0``) are accepted:
    the RDP of an ``(eps, delta)`` run is not known, so the theorem gives no total for it.
    The Poisson variant (their Theorem 6) needs ``e^eps_hat <= 1 + 1/(lambda - 1)``, i.e.
    bounded orders, so it yields an ``(eps, delta)`` bound only; not implemented.

    **One run** is ``eps0``-DP under replace one row: its folds are a fresh
    data-independent partition (with ``cv=KFold(k, shuffle=True, random_state=<int>)``
    the splitter's folds, the same in every run; fixed by ``n`` and a key either way),
    the replaced row is in one test fold (one scorer call,
    ``s``) and ``k - 1`` training sets (each fit ``e_c`` under add/remove, ``2 e_c``
    under replace-one), so ``eps0 = max_c [s + (k - 1) 2 e_c]`` (a uniformly random
    candidate is a data-independent mixture: the largest candidate cost bounds it).

    **Patients** (``fit(..., groups=)``, :doc:`/patients`). The same theorem with the
    patient as the unit: the folds hold whole patients (a keyed hash of each label, one
    assignment drawn before the charge and used by every run; a fold without patients is
    scored with noise only, so no run can fail on it), every fit and scorer call is
    given its rows' patients and states its budget per patient (the scorers keep at
    most ``max_rows_per_group`` rows a patient), and a patient is in one test fold and
    ``k - 1`` training sets of a run: ``eps0`` as above holds per patient (add or
    remove one patient), and so does the total.

    **Randomness.** ``K``, the candidate of each run and fresh seeds for the
    candidates' and the scorer's ``random_state`` (when those are not ``None``) come from
    one stream of :func:`skdp.utils._random.fit_streams` of the search (``random_state``
    ``None``: fresh OS entropy; an int: reproducible, independent across data sets); the
    folds of each run from a data-free key, as in grid mode. Runs are independent, as the
    theorem requires. Ties in score go to the smaller candidate index (a fixed total
    order of the outputs).

    **Side channel.** The wall-clock duration of ``fit`` grows with ``K``; the guarantee
    covers what the fitted search holds, not how long ``fit`` took (as for every skdp
    estimator, timing is out of scope).

    References
    ----------
    .. [1] J. Liu, K. Talwar. "Private selection from private candidates". STOC 2019.
    .. [2] N. Papernot, T. Steinke. "Hyperparameter tuning with Renyi differential
       privacy". ICLR 2022 (Theorem 2).

    Examples
    --------
    >>> from skdp.model_selection import PrivateSelection
    >>> PrivateSelection(eta=0.0, expected_runs=10)
    PrivateSelection(eta=0.0, expected_runs=10)
    """

    eta: float = 1.0
    expected_runs: float | None = None

    def _validated(self, n_candidates):
        eta = self.eta
        if isinstance(eta, bool) or not isinstance(eta, Real) or not (0.0 <= eta < math.inf):
            raise ValueError(f"PrivateSelection: eta must be a finite float >= 0, got {eta!r}")
        mean = self.expected_runs
        if mean is None:
            mean = float(n_candidates)
        elif isinstance(mean, bool) or not isinstance(mean, Real) or not (1.0 <= mean < math.inf):
            raise ValueError(
                "PrivateSelection: expected_runs must be a finite number >= 1 or None, "
                f"got {mean!r}"
            )
        return float(eta), float(mean)


def truncated_negative_binomial_mean(eta, gamma):
    """``E[K]`` for ``K ~ D(eta, gamma)`` of Papernot and Steinke (2022), ``gamma`` in (0, 1]."""
    if gamma >= 1.0:
        return 1.0
    if eta == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * (1.0 - gamma**eta))


def _gamma_for_mean(eta, mean):
    """The ``gamma`` whose ``D(eta, gamma)`` has mean ``mean`` (bisection on log gamma)."""
    if mean <= 1.0:
        return 1.0
    if eta == 1.0:
        return 1.0 / mean
    lo, hi = -700.0, 0.0  # log gamma; the mean decreases in gamma
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if truncated_negative_binomial_mean(eta, math.exp(mid)) > mean:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def _draw_runs(rng, eta, gamma):
    """One draw of ``K ~ D(eta, gamma)`` (support 1, 2, ...)."""
    if gamma >= 1.0:
        return 1
    if eta == 0.0:
        return int(rng.logseries(1.0 - gamma))
    while True:  # negative binomial (failures before eta successes), conditioned on >= 1
        k = int(rng.negative_binomial(eta, gamma))
        if k >= 1:
            return k


def private_selection_epsilon(run_epsilon, eta):
    """Pure-DP total of the selection: ``(2 + eta) * run_epsilon`` (see PrivateSelection)."""
    return (2.0 + float(eta)) * float(run_epsilon)


def _reseed(est, rng):
    """Fresh int seeds for every non-None ``random_state`` of ``est`` (nested too)."""
    params = est.get_params(deep=True)
    new = {
        k: int(rng.integers(2**32))
        for k, v in params.items()
        if (k == "random_state" or k.endswith("__random_state")) and v is not None
    }
    return est.set_params(**new) if new else est


def _validate_all_params(est):
    """Parameter checks of ``est`` and its nested estimators, before any run.

    An invalid candidate would otherwise raise only when drawn, which tells whether it
    ran (and so something of the hidden number of runs).
    """
    parts = [est] + [v for v in est.get_params(deep=True).values() if hasattr(v, "get_params")]
    for part in parts:
        check = getattr(part, "_validate_params", None)
        if callable(check) and hasattr(part, "_parameter_constraints"):
            check()  # scikit-learn's constraint check (estimators that declare them)


class _PrivateRun:
    """Plan and run of a private selection (everything but the fitted attributes)."""

    def __init__(self, plan, scorer_name, folds, selection, refit):
        self.plan = plan
        self.scorer_name = scorer_name
        self.scorer = plan.scorers[scorer_name]
        self.folds = folds  # a FoldSpec: cv=<int> draws fresh folds per run, a KFold its own
        self.n_splits = folds.n_splits
        self.eta, self.mean = selection._validated(len(plan.params))
        self.gamma = _gamma_for_mean(self.eta, self.mean)
        fits = [_replace_one_from_add_remove(e, d) for e, d in plan.fit_budgets]
        k = self.n_splits
        if self.scorer.delta > 0 or any(d > 0 for _, d in fits):
            raise ValueError(
                "selection='private' needs pure-DP runs: the selecting scorer and every "
                "candidate must have delta=0 (the repetition theorem gives no total for an "
                "(epsilon, delta) run). Use selection='grid' for candidates with delta > 0."
            )
        self.run_epsilon = max(self.scorer.epsilon + (k - 1) * e for e, _ in fits)
        sel = private_selection_epsilon(self.run_epsilon, self.eta)
        refit_eps = max(e for e, _ in fits) if refit else 0.0
        self.breakdown = {"private_selection": (sel, 0.0), "refit": (refit_eps, 0.0)}
        self.epsilon = sel + refit_eps
        self.delta = 0.0
        self.planned = [check_pipeline_privacy(e).privacy_guarantee for e in plan.estimators]
        if any(g is None for g in self.planned):
            raise ValueError(
                "selection='private' needs candidates whose privacy guarantee is known "
                "from their parameters (skdp estimators and pipelines of them): the "
                "reported guarantee must not depend on which candidates ran."
            )
        self.guarantee = weakest_guarantee(self.planned)
        for est in plan.estimators:
            _validate_all_params(est)

    def check_guarantee(self, fitted, c):
        """A fit's guarantee must be at least the one planned for its candidate."""
        if GUARANTEE_ORDER.index(fitted) < GUARANTEE_ORDER.index(self.planned[c]):
            raise RuntimeError(
                f"DPGridSearchCV: a fit of candidate {c} recorded privacy_guarantee_="
                f"{fitted!r}, weaker than the {self.planned[c]!r} its parameters plan "
                "(the estimator's _mechanism_guarantee is wrong)."
            )

    def charge(self, ledger, label, unit="row"):
        if ledger is not None:
            ledger.spend(self.epsilon, self.delta, label=label, unit=unit)

    def run(self, X, y, random_state, stand_in, groups=None, folds=None):
        """``(best candidate index, its mean noisy score)``.

        With ``groups`` (the patient of each row) every fit and scorer call is given its
        rows' patients, and ``folds`` (whole patients, drawn by the caller before the
        charge) serve every run.
        """
        n = _num_samples(X)
        rng = fit_streams(
            random_state, ["selection"], estimator=stand_in, X=X, y=y, tag="private_selection"
        )["selection"]
        fold_key = np.random.default_rng(
            _seed_from(
                random_state,
                "skdp.model_selection.private_folds",
                {"n_samples": n, "n_splits": self.n_splits},
                {},
                False,
            )
        )
        n_runs = _draw_runs(rng, self.eta, self.gamma)
        best = None
        # Nothing per run may be observable: the count of the runs' warnings or progress
        # records would reveal K, which the selection theorem keeps hidden.
        with warnings.catch_warnings(), quiet():
            warnings.simplefilter("ignore")
            for _ in range(n_runs):
                c = int(rng.integers(len(self.plan.params)))
                template = _reseed(clone(self.plan.estimators[c]), rng)
                scorer = copy.copy(self.scorer)
                if getattr(scorer, "random_state", None) is not None:
                    scorer.random_state = int(rng.integers(2**32))
                key = int(fold_key.integers(2**63 - 1))  # drawn either way: one stream
                run_folds = self.folds.assign(n, key) if groups is None else folds
                values = []
                for j in range(self.n_splits):
                    test = run_folds == j
                    fit_kw, score_kw = {}, {}
                    if groups is not None:
                        fit_kw, score_kw = {"groups": groups[~test]}, {"groups": groups[test]}
                    model = clone(template).fit(_take(X, ~test), _take(y, ~test), **fit_kw)
                    self.check_guarantee(
                        _check_fitted_spend(model, self.plan.fit_budgets[c], self.plan.where), c
                    )
                    values.append(float(scorer(model, _take(X, test), _take(y, test), **score_kw)))
                score = float(np.mean(values))
                key = (not math.isnan(score), score, -c)
                if best is None or key > best[0]:
                    best = (key, c, score)
        return best[1], best[2]
