"""Privacy regression suite: every discovered skdp estimator is audited empirically.

For each estimator found by :func:`skdp.discovery.all_estimators` and each of its
fast audit configurations (``_configs.AUDIT_CONFIGS``), the empirical epsilon lower
bound (95% Clopper--Pearson) must not exceed the claimed epsilon; where a noise-free
configuration exists, the same audit must flag the estimator when its noise is (almost)
removed, which proves the audit would catch a missing noise term. Estimators without a
fast audit are skipped with a written reason.

The suite also runs on the known-epsilon controls of :mod:`skdp.auditing`, including a
deliberately broken one, so that it is never vacuous.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from skdp.auditing import LaplaceCountRelease, RandomizedResponseRelease, check_privacy
from skdp.auditing._checks import default_audit_data
from skdp.exceptions import (
    ApproximateGuaranteeWarning,
    BoundsEstimateWarning,
    DeltaTooLargeWarning,
)

from ._configs import AUDIT_CONFIGS, discover_estimators

try:
    ESTIMATORS = discover_estimators()
    DISCOVERY_ERROR = None
except ImportError as exc:  # a half-written estimator package: report it, audit the rest
    ESTIMATORS, DISCOVERY_ERROR = [], exc


def _variants(name):
    cfg = AUDIT_CONFIGS.get(name)
    if cfg is None:
        return [None]
    return cfg if isinstance(cfg, list) else [cfg]


def _params():
    out = []
    for name, cls in ESTIMATORS:
        for i, cfg in enumerate(_variants(name)):
            label = name if cfg is None else f"{name}-{cfg.get('label', i)}"
            marks = [pytest.mark.slow] if cfg and cfg.get("slow") else []
            out.append(pytest.param(name, cls, cfg, id=label, marks=marks))
    return out


PARAMS = _params()
# the power check runs on the configurations that declare a noise-free variant
POWER_PARAMS = [p for p in PARAMS if p.values[2] and "power_params" in p.values[2]]


def _data(est, cfg):
    if cfg.get("data") is None:
        return default_audit_data(est, random_state=0)
    return cfg["data"](np.random.default_rng(0))


def _audit(name, cls, cfg, overrides=None, max_trials=None):
    if cfg is None:
        pytest.skip(f"no fast audit configured for {name} yet (add it to AUDIT_CONFIGS)")
    if "skip" in cfg:
        pytest.skip(cfg["skip"])
    est = cls(**{**cfg["params"], **(overrides or {})})
    X, y, cX, cy = _data(est, cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeltaTooLargeWarning)
        # configurations with bounds=None audit the private bound estimate on purpose; at the
        # audit's tiny n its reliability warning fires on every trial (hundreds of lines)
        warnings.simplefilter("ignore", BoundsEstimateWarning)
        return check_privacy(
            est,
            X,
            y,
            audit=cfg.get("audit", "distinguishing"),
            canary_X=cX,
            canary_y=cy,
            n_trials=min(cfg.get("n_trials", 200), max_trials or math.inf),
            score=cfg.get("score", "auto"),
            random_state=0,
            raise_on_failure=False,
            **cfg.get("audit_kwargs", {}),
        )


@pytest.mark.parametrize("name, cls, cfg", PARAMS)
def test_empirical_epsilon_below_claim(name, cls, cfg):
    res = _audit(name, cls, cfg)
    assert res.epsilon_claimed is not None and math.isfinite(res.epsilon_claimed)
    assert res.epsilon_lb <= res.epsilon_claimed, res.summary()


@pytest.mark.parametrize("name, cls, cfg", POWER_PARAMS)
def test_audit_has_power_without_noise(name, cls, cfg):
    claimed = cfg["params"]["epsilon"]
    # A noise-free fit is told apart on every trial; the lower bound is then about
    # log(n_trials / 3) (Clopper-Pearson), 3.5 at 100 trials, above every claimed
    # epsilon here: more trials only cost time.
    res = _audit(name, cls, cfg, cfg["power_params"], max_trials=cfg.get("power_trials", 100))
    assert res.epsilon_lb > claimed, (
        f"the audit of {name} cannot tell a (nearly) noise-free fit from an "
        f"epsilon={claimed} one: {res.summary()}"
    )


@pytest.mark.parametrize("name, cls, cfg", PARAMS)
def test_privacy_facts_after_fit(name, cls, cfg):
    """The fitted privacy facts never exceed the requested budget."""
    if cfg is None or "skip" in cfg:
        pytest.skip(f"no fast configuration for {name}")
    est = cls(**cfg["params"])
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    X, y, _, _ = _data(est, cfg)
    planned = est._planned_privacy_guarantee()  # what a private selection reports
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeltaTooLargeWarning)
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
        est.fit(X) if y is None else est.fit(X, y)
    params = est.get_params()
    eps, delta = params["epsilon"], params.get("delta", 0.0) or 0.0
    assert est.epsilon_spent_ <= eps * (1 + 1e-9)
    assert est.delta_spent_ <= delta * (1 + 1e-9)
    assert est.privacy_guarantee_ in ("exact", "approximate")
    assert est.privacy_guarantee_ == planned


def test_every_estimator_is_audited():
    """Coverage report: every discovered estimator has a configuration (or a reason)."""
    assert DISCOVERY_ERROR is None, f"estimator discovery failed: {DISCOVERY_ERROR!r}"
    assert ESTIMATORS, "no estimator discovered"
    missing = [name for name, _ in ESTIMATORS if name not in AUDIT_CONFIGS]
    # an estimator without a fast audit fails here; an entry {"skip": reason} states why
    assert not missing, f"add AUDIT_CONFIGS entries (or a skip reason) for {missing}"


# ----------------------------------------------------------------------------- controls
CONTROL_IDS = np.arange(60).reshape(-1, 1)


@pytest.mark.parametrize("control", [RandomizedResponseRelease, LaplaceCountRelease])
@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_controls_pass(control, eps):
    res = check_privacy(control(epsilon=eps, n_ids=80), CONTROL_IDS, canary_X=[[70]])
    assert 0 < res.epsilon_lb <= eps


def test_suite_catches_a_missing_noise_term():
    with pytest.raises(AssertionError, match="exceeds the claimed"):
        check_privacy(
            LaplaceCountRelease(epsilon=1.0, n_ids=80, noise_factor=0.0),
            CONTROL_IDS,
            canary_X=[[70]],
        )
