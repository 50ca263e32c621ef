"""Fast audit configurations per estimator class name (like test_common's TEST_PARAMS).

A value is one configuration or a list of them (e.g. declared bounds, and the private
bound estimate). Each configuration:

``label``
    Short test id (default: its position).

``params``
    Constructor keywords of the audited configuration (must include ``epsilon``).
``data``
    ``callable(rng) -> (X, y, canary_X, canary_y)``; ``None`` = built from the
    estimator's public bounds (:func:`skdp.auditing._checks.default_audit_data`).
``audit`` / ``n_trials`` / ``score`` / ``audit_kwargs``
    Passed to :func:`skdp.auditing.check_privacy`.
``power_params``
    Overrides that (almost) remove the noise (a huge epsilon). The same audit must then
    find a bound above the audited configuration's epsilon: this proves the audit has
    the power to catch a missing noise term for this estimator.
``slow``
    Run only under ``-m slow``.
``skip``
    A written reason why no fast audit applies (yet).
"""

from __future__ import annotations

import functools
import math

import numpy as np


def _regression_far_canary(rng, n=60, d=2):
    # no bounds declared: the estimator spends part of epsilon on a private bound
    # estimate; the canary lies far outside the other rows' range
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ np.linspace(1.0, -0.5, d) * 0.5 + 0.1 * rng.standard_normal(n)
    return X, y, np.full((1, d), 50.0), np.array([-50.0])


def _packed_corner_data(rng, n=60, d=2):
    # rows packed in the lower corner of the public box [0, 1]^d: the canary's cell
    # at the upper corner is empty without it
    X = 0.25 * rng.random((n, d))
    return X, None, np.ones((1, d)), None


_GRID = np.array([[a, b] for a in np.linspace(-1, 1, 5) for b in np.linspace(-1, 1, 5)])


def _kmedian_data(rng, n=40):
    # a tight private cluster; the canary sits on the public candidate (1, 1), where a
    # second centre is worth placing only if the canary is present
    X = np.clip(rng.normal(-0.5, 0.02, size=(n, 2)), -1, 1)
    return X, None, np.array([[1.0, 1.0]]), None


def _ilp_data(rng):
    # 30 positives with atom x0, 20 negatives without: the theory is the clause (x0)
    # with or without the canary (a positive with x0), whose noisy coverage moves by 1
    X = np.array([[1, 0]] * 30 + [[0, 0]] * 20)
    y = np.array([1] * 30 + [0] * 20)
    return X, y, np.array([[1, 0]]), np.array([1])


def _released_coverage(estimator, X, y):
    """Score = the released noisy coverage of the first learned clause (a DP output)."""
    cov = np.asarray(estimator.clause_noisy_coverage_, dtype=float)
    return np.full(len(X), cov[0] if len(cov) else -1e9)


def _regression_pool(rng, n=400):
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.clip(X @ np.array([0.5, -0.3]) + 0.1 * rng.standard_normal(n), -1, 1)
    return X, y, None, None


def _unit_square_pool(rng, n=400):
    return rng.random((n, 2)), None, None, None


_FLOW_FAST = {
    "delta": 1e-5,
    "bounds": (0.0, 1.0),
    "n_iter": 30,
    "batch_size": 30,
    "n_layers": 1,
    "hidden_size": 8,
    "learning_rate": 1e-2,
    "device": "cpu",
    "dtype": "float64",
}

_VI_FAST = {
    "delta": 1e-5,
    "n_iter": 30,
    "batch_size": 20,
    "n_mc": 16,
    "learning_rate": 0.05,
    "device": "cpu",
    "dtype": "float64",
}


def _vi_location_data(rng, n=20):
    # Gaussian location model x_i ~ N(theta, I) (the default log-likelihood); the canary
    # lies far from the other records and pulls the posterior towards it
    return 0.3 * rng.standard_normal((n, 2)), None, np.array([[5.0, 5.0]]), None


_EXPM_FAST = {"n_iter": 50, "batch_size": 32, "n_layers": 1, "device": "cpu", "dtype": "float64"}


def _classification_pool(rng, n=200):
    X = rng.standard_normal((n, 2))
    return X, (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int), None, None


def _classification_far_canary(rng, n=30):
    # a far, mislabelled canary moves the exponential mechanism's optimum
    X = rng.standard_normal((n, 2))
    return X, (X[:, 0] > 0).astype(int), np.array([[3.0, 0.0]]), np.array([0])


def _unit_regression_pool(rng, n=200):
    X = rng.standard_normal((n, 2))
    return X, np.clip(0.5 + 0.2 * X[:, 0], 0, 1), None, None


_LIRA = {"audit": "lira", "audit_kwargs": {"n_shadow": 16, "n_targets": 2}}


def _released(attr):
    """Score = the sum of a released (DP) fitted attribute, the same for every row."""

    def score(estimator, X, y):
        return np.full(len(X), float(np.sum(getattr(estimator, attr))))

    return score


def _packed_corner_with_missing(rng, n=60, d=2):
    # as _packed_corner_data, with a fifth of the cells missing (the imputer's input)
    X = 0.25 * rng.random((n, d))
    X[rng.random((n, d)) < 0.2] = np.nan
    return X, None, np.ones((1, d)), None


def _far_canary(rng, n=60, d=2):
    # no bounds declared: part of epsilon goes to a private bound estimate
    return rng.uniform(-1, 1, size=(n, d)), None, np.full((1, d), 50.0), None


_PUBLIC_TRANSFORMER = (
    "no privacy cost to audit: the fitted state is a function of declared metadata only "
    "(identical on neighbouring data sets, tested in tests/preprocessing) and transform is "
    "per record"
)


AUDIT_CONFIGS: dict[str, dict | list[dict]] = {
    "DPLinearRegression": [
        {
            "label": "declared-bounds",
            "params": {"epsilon": 1.0, "bounds_X": (-1.0, 1.0), "bounds_y": (-1.0, 1.0)},
            "data": None,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "gaussian",
            "params": {
                "epsilon": 1.0,
                "delta": 1e-5,
                "mechanism": "gaussian",
                "bounds_X": (-1.0, 1.0),
                "bounds_y": (-1.0, 1.0),
            },
            "data": None,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "private-bounds",
            # "private": the opt-in to the estimate that 60 rows cannot make reliable
            # (None refuses it); the audit measures its privacy, not its accuracy
            "params": {"epsilon": 1.0, "bounds_X": "private", "bounds_y": "private"},
            "data": _regression_far_canary,
            "n_trials": 400,
        },
        {
            "label": "lira",
            "params": {"epsilon": 1.0, "bounds_X": (-1.0, 1.0), "bounds_y": (-1.0, 1.0)},
            "data": _regression_pool,
            **_LIRA,
        },
        {
            "label": "one-run",
            "params": {"epsilon": 1.0, "bounds_X": (-1.0, 1.0), "bounds_y": (-1.0, 1.0)},
            "data": _regression_pool,
            "audit": "one-run",
        },
    ],
    "DPLogisticRegression": [
        {
            # a far, mislabelled canary (30 rows, small ridge): the tightest cheap pair.
            # The objective perturbation is pinned: mechanism="auto" would run DP-SGD on
            # 30 rows (400 trials of it took 438 s; DP-SGD has its own engine audits)
            "label": "declared-bounds",
            "params": {
                "epsilon": 1.0,
                "classes": [0, 1],
                "bounds_X": (-3.0, 3.0),
                "C": 1e3,
                "mechanism": "objective",
            },
            "data": _classification_far_canary,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "one-run",
            "params": {"epsilon": 1.0, "classes": [0, 1], "bounds_X": (-3.0, 3.0)},
            "data": _classification_pool,
            "audit": "one-run",
        },
    ],
    "DPHistogramSynthesizer": [
        {
            "label": "public-n",
            # n enters the bin count and the filter threshold: fix it publicly so that
            # the neighbouring pair (60 and 61 rows) shares the same bins (add/remove)
            "params": {"epsilon": 1.0, "bounds": (0.0, 1.0), "n_public": 60},
            "data": _packed_corner_data,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "lira",
            "params": {"epsilon": 1.0, "bounds": (0.0, 1.0), "n_public": 200, "n_bins": 8},
            "data": _unit_square_pool,
            **_LIRA,
        },
    ],
    "DPMarginalSynthesizer": [
        {
            # an int n_bins: no decision reads n; the canary's corner cells are empty
            # without it (pure DP: discrete Laplace measurements)
            "label": "pure-dp",
            "params": {"epsilon": 1.0, "delta": 0.0, "bounds": (0.0, 1.0), "n_bins": 8},
            "data": _packed_corner_data,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "zcdp",
            "params": {"epsilon": 1.0, "delta": 1e-5, "bounds": (0.0, 1.0), "n_bins": 8},
            "data": _packed_corner_data,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            # two columns default to MST: AIM's annealed rounds on three (zCDP)
            "label": "aim",
            "params": {
                "epsilon": 1.0,
                "delta": 1e-5,
                "bounds": (0.0, 1.0),
                "n_bins": 4,
                "selection": "aim",
            },
            "data": functools.partial(_packed_corner_data, d=3),
            # 200 trials (the suite's slowest audit at 400: 30 s): the lower bound can still
            # reach log(200 / 3) = 4.2, far above the claim, so a break is still caught
            "n_trials": 200,
            # epsilon=inf takes the exact path (no noise, half the fit time of 1e6); 60
            # trials still tell it apart (lower bound above 1)
            "power_params": {"epsilon": math.inf},
            "power_trials": 60,
        },
    ],
    "SubsampledExpMedian": [
        {
            "label": "exact-em",
            "params": {"epsilon": 1.0, "n_clusters": 2, "candidates": _GRID, "n_candidates": None},
            "data": _kmedian_data,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "subsampled",
            "params": {"epsilon": 1.0, "n_clusters": 2, "candidates": _GRID},
            "data": _kmedian_data,
            "n_trials": 400,
        },
        {
            # the box search: a noisy grid histogram, then local rounds
            "label": "box-histogram",
            # (two rounds keep the 400 fits fast; the guarantee holds for any count)
            "params": {"epsilon": 1.0, "n_clusters": 2, "bounds": (-1, 1), "n_rounds": 2},
            "data": _kmedian_data,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
        {
            # with the private median step forced on (off by "auto" at this n)
            "label": "box-median-step",
            "params": {
                "epsilon": 1.0,
                "n_clusters": 2,
                "bounds": (-1, 1),
                "n_rounds": 2,
                "median_step": True,
            },
            "data": _kmedian_data,
            "n_trials": 400,
            "power_params": {"epsilon": 1e6},
        },
    ],
    "DPILPClassifier": [
        {
            "label": "released-coverage",
            "params": {"epsilon": 1.0, "max_clause_length": 1},
            "data": _ilp_data,
            "n_trials": 400,
            "score": _released_coverage,
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "predictions",
            "params": {"epsilon": 1.0, "max_clause_length": 1},
            "data": _ilp_data,
            "n_trials": 400,
        },
    ],
    "DPFlowDensity": [
        {
            # one fit (~0.5 s): a smoke test of the plumbing, weak against DP-SGD
            "label": "one-run",
            "params": {"epsilon": 1.0, **_FLOW_FAST},
            "data": _unit_square_pool,
            "audit": "one-run",
        },
        {
            # 80 fits: a canary in an empty corner of the box; without noise (eps=inf)
            # the attack separates the fits almost perfectly (AUC ~ 1)
            "label": "distinguishing",
            "params": {"epsilon": 0.5, **_FLOW_FAST},
            "data": _packed_corner_data,
            "n_trials": 80,
            "power_params": {"epsilon": float("inf")},
            "slow": True,
        },
    ],
    "DPGANSynthesizer": {
        # one fit of 20 steps (~2 s), scored by the distance to the nearest of 1000
        # synthetic rows: a smoke test of the plumbing; no power check (a GAN trained
        # this briefly does not memorise a canary even without noise)
        "label": "one-run",
        "params": {
            "epsilon": 1.0,
            "delta": 1e-5,
            "bounds": (0.0, 1.0),
            "n_iter": 20,
            "batch_size": 32,
            "hidden_size": 16,
            "latent_dim": 8,
            "device": "cpu",
            "dtype": "float64",
        },
        "data": _unit_square_pool,
        "audit": "one-run",
    },
    "DPFlowVI": [
        {
            # one fit (~1 s), scored by the distance to the nearest posterior draw
            "label": "one-run",
            "params": {"epsilon": 1.0, **_VI_FAST, "batch_size": 100},
            "data": lambda rng: (0.3 * rng.standard_normal((200, 2)), None, None, None),
            "audit": "one-run",
        },
        {
            # 160 fits (~1 s each). Without DP noise the attack still separates them (AUC
            # ~0.93: the two data sets' fits draw independent Monte-Carlo noise, as they must;
            # with 80 trials the lower bound was 0.40, short of the 0.5 the power check needs)
            "label": "distinguishing",
            "params": {"epsilon": 0.5, **_VI_FAST},
            "data": _vi_location_data,
            "n_trials": 160,
            "power_params": {"epsilon": float("inf")},
            "slow": True,
        },
    ],
    "ExpMFlowClassifier": [
        {
            # one fit (~0.3 s); predict_proba gives the logit-scaled confidence score
            "label": "one-run",
            "params": {"epsilon": 1.0, "classes": [0, 1], **_EXPM_FAST},
            "data": _classification_pool,
            "audit": "one-run",
        },
        {
            # the flow-sampled ExpM guarantee is approximate (expm_flow.md §3.4): audit it
            "label": "distinguishing",
            "params": {"epsilon": 0.5, "classes": [0, 1], **_EXPM_FAST},
            "data": _classification_far_canary,
            "n_trials": 160,
            "power_params": {"epsilon": 1e3},
            "slow": True,
        },
    ],
    "ExpMFlowRegressor": {
        "label": "one-run",
        "params": {"epsilon": 1.0, "bounds_y": (0.0, 1.0), **_EXPM_FAST},
        "data": _unit_regression_pool,
        "audit": "one-run",
    },
    # The survival estimators take a structured (event, time) target this harness does not
    # build; their distinguishing audits (one row, and one patient of K rows with and
    # without groups) are in tests/survival/test_survival_attacks.py and
    # tests/survival/test_cox_privacy.py.
    "DPKaplanMeier": {
        "skip": "survival target: audited in tests/survival/test_survival_attacks.py"
    },
    "DPAalenJohansen": {
        "skip": "survival target: audited in tests/survival/test_survival_attacks.py"
    },
    "DPCoxPH": {"skip": "survival target: audited in tests/survival/test_cox_privacy.py"},
    "PublicBoundsScaler": {"skip": _PUBLIC_TRANSFORMER},
    "PublicOneHotEncoder": {"skip": _PUBLIC_TRANSFORMER},
    "RowwiseFunctionTransformer": {
        "skip": "no privacy cost to audit: fit stores only the column count and names "
        "(identical on neighbouring data sets, tested in tests/privacy/"
        "test_attack_pipeline_steps.py) and transform applies the user's declared row-wise "
        "function per record"
    },
    "DPStandardScaler": [
        {
            # one column, all of epsilon on the mean: the tightest audit (eps_lb ~0.5 of 1.0
            # at 400 trials); n_public: the pair (60 and 61 rows) divides by the same count
            "label": "mean",
            "params": {"epsilon": 1.0, "bounds": (0.0, 1.0), "n_public": 60, "with_std": False},
            "data": lambda rng: _packed_corner_data(rng, d=1),
            "n_trials": 400,
            "score": _released("mean_"),
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "mean-and-variance",
            "params": {"epsilon": 1.0, "bounds": (0.0, 1.0), "n_public": 60},
            "data": _packed_corner_data,
            "n_trials": 400,
            "score": _released("mean_"),
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "variance",
            "params": {"epsilon": 1.0, "bounds": (0.0, 1.0), "n_public": 60},
            "data": lambda rng: _packed_corner_data(rng, d=1),
            "n_trials": 400,
            "score": _released("var_"),
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "private-bounds",
            "params": {"epsilon": 1.0, "bounds": "private", "n_public": 60},
            "data": _far_canary,
            "n_trials": 400,
            "score": _released("mean_"),
        },
    ],
    "DPSimpleImputer": [
        {
            "label": "mean",
            "params": {"epsilon": 1.0, "strategy": "mean", "bounds": (0.0, 1.0)},
            "data": lambda rng: _packed_corner_with_missing(rng, d=1),
            "n_trials": 400,
            "score": _released("statistics_"),
            "power_params": {"epsilon": 1e6},
        },
        {
            "label": "median",
            "params": {"epsilon": 1.0, "strategy": "median", "bounds": (0.0, 1.0)},
            "data": lambda rng: _packed_corner_with_missing(rng, d=1),
            "n_trials": 400,
            "score": _released("statistics_"),
        },
    ],
}


def discover_estimators():
    """all_estimators(), plus estimators a package exports lazily (module __getattr__),
    which inspect.getmembers does not see (e.g. skdp.linear_model's ExpMFlow*)."""
    import importlib

    from sklearn.base import BaseEstimator

    from skdp.base import DPEstimatorMixin
    from skdp.discovery import ESTIMATOR_PACKAGES, all_estimators

    found = dict(all_estimators())
    for pkg_name in ESTIMATOR_PACKAGES:
        try:
            pkg = importlib.import_module(pkg_name)
        except ModuleNotFoundError as exc:
            if exc.name == pkg_name:
                continue
            raise
        for name in getattr(pkg, "__all__", ()):
            if name in found or name.startswith("_"):
                continue
            obj = getattr(pkg, name, None)
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseEstimator)
                and issubclass(obj, DPEstimatorMixin)
            ):
                found[name] = obj
    return sorted(found.items())
