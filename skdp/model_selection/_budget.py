"""One total for a search: how ``DPGridSearchCV(epsilon=..., delta=...)`` splits it.

The split is decided from parameters only -- the total, the grid, the number of folds,
the selection mode, ``refit`` and the declared budgets of the estimator's DP steps and
of the scorers, used as weights -- before any row is read, so the plan is public
(:meth:`DPGridSearchCV.privacy_plan` computes it without data).

**The rule.** Every fit of the search (every fold fit of every candidate and the refit)
gets the same add/remove epsilon ``e``; the scoring of one test fold gets ``s = 2 w e``
(replace-one, ``w = scoring_weight``: a scorer call costs a row ``w`` times what a fit
does under replace-one, ``2 e``). The composition of the search is linear in ``e``, so

* grid: ``T = C (s + (k - 1) 2 e) + r 2 e``, i.e. ``e = T / (2 [C (w + k - 1) + r])``;
* private selection: ``T = (2 + eta) (s + (k - 1) 2 e) + r 2 e``, i.e.
  ``e = T / (2 [(2 + eta)(w + k - 1) + r])``,

with ``C`` candidates, ``k`` folds and ``r = 1`` for a refit. A candidate's ``e`` is
shared by its DP steps (a pipeline) in proportion to their declared epsilons, and ``s``
by the scorers called in proportion to theirs. ``delta`` (a total ``D``, needed when a
candidate or a scorer declares ``delta > 0``) is split the same way in replace-one
units: each fit that declares delta gets ``u`` (add/remove ``u / (1 + e^e)``), each test
fold's scoring ``w u`` when the scorers declare delta, and ``u`` solves the composition
``= D``. The totals are computed by the same accounting as any search
(:func:`skdp.metrics.cv_privacy_spend`, the private-selection bound), and the split is
nudged down by a few ulps where rounding would put it above the total.
"""

from __future__ import annotations

import copy
import math
import warnings
from numbers import Real

from sklearn.base import clone

from skdp.exceptions import TuningBudgetWarning
from skdp.model_selection._plan import _check_scoring, _Plan
from skdp.model_selection._private import _PrivateRun
from skdp.utils._meta_privacy import _is_dp_estimator, check_pipeline_privacy

__all__ = ["SearchPlan", "check_total", "plan_search", "warn_if_tuning_starves"]

#: The tuning warning: the refit's add/remove epsilon is below this fraction of what
#: one untuned fit charged the same (replace-one) total would get, ``T / 2`` ...
TUNING_SHARE = 0.1
#: ... and below this absolute value (a small budget; at larger ones the fits are
#: usually past the regime where a tenth of the budget costs much utility).
TUNING_SMALL_EPSILON = 1.0

_UNIT_DELTA = 1e-9  # replace-one delta unit for solving the delta split (no cap at 1)
_RTOL = 1e-9


def _real(value, name):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def check_total(epsilon, delta, scoring_weight):
    """``None`` (per-candidate budgets) or the validated ``(epsilon, delta, weight)``."""
    weight = _real(scoring_weight, "scoring_weight")
    if not (0.0 < weight < math.inf):
        raise ValueError(f"scoring_weight must be finite and > 0, got {weight}")
    if epsilon is None:
        if delta is not None:
            raise ValueError(
                "delta= is the total delta of a search under one total: give epsilon= "
                "(the total epsilon) too, or leave both None to use the candidates' and "
                "scorers' own budgets"
            )
        return None
    epsilon = _real(epsilon, "epsilon")
    if not (0.0 < epsilon < math.inf):
        raise ValueError(f"epsilon (the total of the search) must be finite and > 0, got {epsilon}")
    if delta is not None:
        delta = _real(delta, "delta")
        if not (0.0 <= delta < 1.0):
            raise ValueError(f"delta (the total of the search) must be in [0, 1), got {delta}")
    return epsilon, delta, weight


def _is_budget_key(key):
    return key in ("epsilon", "delta") or key.endswith(("__epsilon", "__delta"))


def _budget_steps(est):
    """``[(parameter prefix, declared epsilon, declared delta)]`` of the DP steps."""
    report = check_pipeline_privacy(est)
    own = _is_dp_estimator(est)
    return [
        ("" if own else f"{s.name}__", s.epsilon, s.delta)
        for s in report.steps
        if s.status == "private" and (s.epsilon > 0 or s.delta > 0)
    ]


def _budget_params(steps, e, d):
    """Parameters giving a candidate's DP steps ``e`` and ``d`` in total, by weight."""
    w_eps = math.fsum(s[1] for s in steps)
    w_dl = math.fsum(s[2] for s in steps)
    out = {}
    for prefix, eps, dl in steps:
        if eps > 0:
            out[f"{prefix}epsilon"] = e if eps == w_eps else e * (eps / w_eps)
        if dl > 0:
            out[f"{prefix}delta"] = d if dl == w_dl else d * (dl / w_dl)
    return out


def _rescaled(scorers, called, s_eps, s_delta):
    """Copies of the called scorers sharing ``(s_eps, s_delta)`` by declared weight."""
    w_eps = math.fsum(scorers[n].epsilon for n in called)
    w_dl = math.fsum(scorers[n].delta for n in called)
    out = {}
    for name, scorer in scorers.items():
        new = copy.copy(scorer)
        if name in called:
            new.epsilon = s_eps if scorer.epsilon == w_eps else s_eps * (scorer.epsilon / w_eps)
            if scorer.delta > 0:
                new.delta = s_delta if scorer.delta == w_dl else s_delta * (scorer.delta / w_dl)
        out[name] = new
    return out


def _candidates(estimator, candidates, allow, where):
    """Each candidate's budget steps, with the refusals of a search under one total."""
    steps = []
    for params in candidates:
        keys = sorted(k for k in params if _is_budget_key(k))
        if keys:
            raise ValueError(
                f"{where}(epsilon=...): param_grid sets {keys}, but under one total the "
                "search sets every fit's epsilon/delta itself (see the split rule in "
                "DPGridSearchCV's Notes). Remove them from the grid, or leave epsilon=None "
                "and give each candidate its own budget."
            )
        est = clone(estimator).set_params(**params)
        report = check_pipeline_privacy(est)
        if report.learns_without_guarantee:
            if not allow:
                return None  # _Plan raises its own message (the steps, the reason)
            raise ValueError(
                f"{where}(epsilon=...): a candidate ({params!r}) learns from the rows "
                "without a privacy guarantee, so no total can be kept; allow_nonprivate=True "
                "needs epsilon=None."
            )
        found = _budget_steps(est)
        if not any(eps > 0 for _, eps, _ in found):
            raise ValueError(
                f"{where}(epsilon=...): the candidate {params!r} has no DP step with an "
                "epsilon parameter to receive its share of the total."
            )
        steps.append(found)
    return steps


def plan_search(
    estimator,
    candidates,
    scoring,
    folds,
    *,
    plan_refit,
    ledger,
    allow,
    where,
    total=None,
    selection=None,
    scorer_name=None,
    run_refit=False,
):
    """``(plan, private run or None, scoring used)``.

    ``total`` (from :func:`check_total`) ``None``: the candidates' and scorers' own
    budgets, as before. Otherwise the split rule of the module docstring sets them.
    Reads no data.
    """

    def build(budgets, scoring_used):
        plan = _Plan(
            estimator, candidates, scoring_used, folds, plan_refit, ledger, allow, where, budgets
        )
        run = None
        if selection is not None:
            run = _PrivateRun(plan, scorer_name, folds, selection, run_refit)
        return plan, run

    if total is None:
        plan, run = build(None, scoring)
        return plan, run, scoring
    t_eps, t_delta, weight = total
    steps = _candidates(estimator, candidates, allow, where)
    if steps is None:  # a candidate learns without a guarantee: _Plan says which
        build(None, scoring)
        raise ValueError(f"{where}: a candidate learns without a privacy guarantee")
    scorers, multimetric = _check_scoring(scoring, ledger)
    called = [scorer_name] if selection is not None else list(scorers)
    for name in called:
        if math.isinf(scorers[name].epsilon):
            raise ValueError(f"{where}(epsilon=...): scorer {name!r} has epsilon=inf")
    fit_delta = [any(dl > 0 for _, _, dl in st) for st in steps]
    score_delta = any(scorers[n].delta > 0 for n in called)
    if any(fit_delta) or score_delta:
        what = "a candidate" if any(fit_delta) else "a scorer"
        if selection is not None:
            raise ValueError(
                f"selection='private' needs pure-DP runs, but {what} declares delta > 0: "
                "declare delta=0 on every DP step and scorer (or use selection='grid' with "
                "delta= the total delta)."
            )
        if not t_delta:  # None or 0
            raise ValueError(
                f"{where}(epsilon=...): {what} declares delta > 0, so the search spends "
                f"delta too: pass delta= > 0 (the total delta of the search, e.g. 1e-5; "
                f"got {t_delta!r}), or declare delta=0 on the steps and scorers that do "
                "not need it."
            )
    t_delta = 0.0 if t_delta is None else t_delta

    def assemble(e, s_eps, u, s_delta):
        d_fit = u / (1.0 + math.exp(e)) if e < 700 else 0.0
        budgets = [_budget_params(st, e, d_fit) for st in steps]
        used = _rescaled(scorers, called, s_eps, s_delta)
        used = used if multimetric else used["score"]
        plan, run = build(budgets, used)
        _check_budgets(plan, candidates, e, [d_fit if f else 0.0 for f in fit_delta], where)
        eps, dl = (run.epsilon, run.delta) if run is not None else (plan.epsilon, plan.delta)
        return plan, run, used, eps, dl, d_fit

    # the total is linear in e (and, e fixed, in the delta unit u): solve at unit scale
    unit_eps = assemble(1.0, 2.0 * weight, 0.0, 0.0)[3]
    e = t_eps / unit_eps
    u = s_unit = 0.0
    if t_delta > 0 and (any(fit_delta) or score_delta):
        s_unit = weight * _UNIT_DELTA if score_delta else 0.0
        unit_delta = assemble(e, 2.0 * weight * e, _UNIT_DELTA, s_unit)[4]
        if unit_delta > 0:  # 0 only where e^e overflows (a fit's delta is then 0)
            u = _UNIT_DELTA * (t_delta / unit_delta)
            s_unit = s_unit * (t_delta / unit_delta)
    for _ in range(64):  # rounding may put the sum a few ulps above the total
        plan, run, used, eps, dl, d_fit = assemble(e, 2.0 * weight * e, u, s_unit)
        if eps <= t_eps and dl <= t_delta:
            break
        if eps > t_eps:
            e *= 1.0 - 2.0**-40
        if dl > t_delta:
            u *= 1.0 - 2.0**-40
            s_unit *= 1.0 - 2.0**-40
    else:  # pragma: no cover - a float sum that never comes under its total
        raise RuntimeError(f"{where}: could not split the total within rounding")
    return plan, run, used


def _check_budgets(plan, candidates, e, deltas, where):
    """Each candidate's declared spend, read back, must be the budget it was given."""
    for c, (got_eps, got_delta) in enumerate(plan.fit_budgets):
        if not (
            math.isclose(got_eps, e, rel_tol=_RTOL)
            and math.isclose(got_delta, deltas[c], rel_tol=_RTOL, abs_tol=1e-300)
        ):
            raise ValueError(
                f"{where}(epsilon=...): setting the epsilon/delta parameters of candidate "
                f"{candidates[c]!r} did not give it the planned budget (its declared spend "
                "does not follow its epsilon/delta parameters); give each candidate its own "
                "budget instead (epsilon=None)."
            )


def warn_if_tuning_starves(refit_epsilon, total_epsilon, where, stacklevel=3):
    """:class:`~skdp.exceptions.TuningBudgetWarning` from public quantities only."""
    if not (0.0 < refit_epsilon and 0.0 < total_epsilon < math.inf):
        return
    share = refit_epsilon / (total_epsilon / 2.0)
    if share < TUNING_SHARE and refit_epsilon < TUNING_SMALL_EPSILON:
        warnings.warn(
            f"{where}: the final model is fitted with epsilon={refit_epsilon:.3g}, "
            f"{share:.1%} of the epsilon={total_epsilon / 2:.3g} one untuned fit charged the "
            f"same total ({total_epsilon:.3g}, replace-one) would get: most of the budget "
            "goes to the candidates' fold fits and scores. At small budgets tuning often "
            "loses to one untuned fit with the whole budget; consider fewer candidates or "
            "folds, selection='private', or no search (see doc/composition.rst, 'When "
            "tuning pays').",
            TuningBudgetWarning,
            stacklevel=stacklevel,
        )


class SearchPlan:
    """The plan of one search, read from the parameters only (no data)."""

    def __init__(self, folds, candidates, multimetric, refit_metric, name, plan, run, used, hold):
        self.folds, self.candidates = folds, candidates
        self.multimetric, self.refit_metric, self.scorer_name = multimetric, refit_metric, name
        self.plan, self.run, self.scoring = plan, run, used
        self.scorers = plan.scorers
        source = run if run is not None else plan
        self.epsilon, self.delta = source.epsilon, source.delta
        self.breakdown = dict(source.breakdown)
        self.called = [name] if run is not None else list(plan.scorers)
        if hold is not None:  # the final score, on disjoint rows: at the selection's total
            uses_delta = plan.scorers[name].delta > 0
            self.breakdown["holdout_score"] = (self.epsilon, self.delta if uses_delta else 0.0)

    def public(self):
        refit = self.refit_metric is not None
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "fit_budgets": list(self.plan.fit_budgets),
            "scorer_budgets": {
                n: (self.scorers[n].epsilon, self.scorers[n].delta) for n in self.called
            },
            "breakdown": dict(self.breakdown),
            "refit_epsilon": max(e for e, _ in self.plan.fit_budgets) if refit else 0.0,
        }
