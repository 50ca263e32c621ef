"""Accountants, the registry, compute_epsilon / calibrate_noise_multiplier, GDP CLT."""

from __future__ import annotations

import contextlib
import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import skdp
from skdp.accounting import (
    Accountant,
    GDPCLTAccountant,
    RDPAccountant,
    available_accountants,
    calibrate_noise_multiplier,
    compute_epsilon,
    gdp_clt_mu,
    gdp_clt_noise_multiplier,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    get_accountant,
    rdp_subsampled_gaussian,
    resolve_noise_multiplier,
)
from skdp.accounting import _accountant as acc_mod
from skdp.exceptions import ApproximateGuaranteeWarning, BudgetExceededError

INTEGER_ORDERS = list(range(2, 257))


@contextlib.contextmanager
def quiet_gdp():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
        yield


# ------------------------------------------------------------------ public surface


def test_top_level_lazy_names():
    assert skdp.compute_epsilon is compute_epsilon
    assert skdp.calibrate_noise_multiplier is calibrate_noise_multiplier
    assert skdp.PrivacyLedger.__name__ == "PrivacyLedger"


def test_exact_signatures():
    import inspect

    sig = inspect.signature(compute_epsilon)
    assert all(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values())
    assert list(sig.parameters)[:5] == [
        "noise_multiplier",
        "sample_rate",
        "steps",
        "delta",
        "accountant",
    ]
    assert sig.parameters["accountant"].default == "rdp"
    sig = inspect.signature(calibrate_noise_multiplier)
    assert all(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values())
    assert list(sig.parameters)[:5] == ["epsilon", "delta", "sample_rate", "steps", "accountant"]


def test_registry():
    assert available_accountants() == ("gdp_clt", "pld", "rdp")
    rdp = get_accountant("rdp")
    gdp = get_accountant("gdp_clt")
    assert isinstance(rdp, RDPAccountant) and isinstance(rdp, Accountant)
    assert isinstance(gdp, GDPCLTAccountant)
    assert (rdp.guarantee, gdp.guarantee) == ("exact", "approximate")
    assert (rdp.name, gdp.name) == ("rdp", "gdp_clt")
    assert get_accountant("rdp") is not rdp  # fresh object every time
    assert get_accountant("pld").guarantee == "exact"
    with pytest.raises(ValueError, match="Unknown accountant 'prv'"):
        get_accountant("prv")
    with pytest.raises(ValueError, match="Unknown accountant"):
        compute_epsilon(
            noise_multiplier=1.0, sample_rate=0.1, steps=1, delta=1e-5, accountant="prv"
        )


def test_register_accountant(monkeypatch):
    monkeypatch.setattr(acc_mod, "_REGISTRY", dict(acc_mod._REGISTRY))
    acc_mod.register_accountant("rdp_classic", lambda: RDPAccountant(conversion="classic"))
    assert "rdp_classic" in available_accountants()
    assert get_accountant("rdp_classic").conversion == "classic"
    with pytest.raises(ValueError, match="already registered"):
        acc_mod.register_accountant("rdp", RDPAccountant)


# ------------------------------------------------------------------ stateful accountants


def test_history_is_run_length_encoded():
    acc = get_accountant("rdp")
    for _ in range(1000):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    acc.step(noise_multiplier=2.0, sample_rate=0.01, num_steps=5)
    acc.step(noise_multiplier=2.0, sample_rate=0.01, num_steps=0)
    assert acc.history == [(1.0, 0.01, 1000), (2.0, 0.01, 5)]
    assert acc.n_steps == 1005
    assert acc.reset().history == [] and acc.get_epsilon(1e-5) == 0.0


def test_step_by_step_equals_pure_function():
    acc = get_accountant("rdp")
    for _ in range(300):
        acc.step(noise_multiplier=1.1, sample_rate=0.02)
    e = compute_epsilon(noise_multiplier=1.1, sample_rate=0.02, steps=300, delta=1e-5)
    assert acc.get_epsilon(1e-5) == pytest.approx(e, rel=1e-12)


def test_heterogeneous_phases_add_pointwise():
    # G §8 B3: phases with different sigma compose by adding curves at every order.
    acc = get_accountant("rdp", orders=INTEGER_ORDERS)
    acc.step(noise_multiplier=1.0, sample_rate=0.01, num_steps=100)
    acc.step(noise_multiplier=2.0, sample_rate=0.05, num_steps=40)
    acc.step(noise_multiplier=1.0, sample_rate=0.01, num_steps=60)
    expected = 160 * rdp_subsampled_gaussian(
        noise_multiplier=1.0, sample_rate=0.01, orders=INTEGER_ORDERS
    ) + 40 * rdp_subsampled_gaussian(noise_multiplier=2.0, sample_rate=0.05, orders=INTEGER_ORDERS)
    np.testing.assert_allclose(acc.get_rdp(), expected, rtol=1e-13)


def test_additivity_in_steps():
    # G §8 B3: T1 + T2 steps == T1+T2 steps, at every order.
    a = get_accountant("rdp").step(noise_multiplier=0.9, sample_rate=0.03, num_steps=70)
    a.step(noise_multiplier=0.9, sample_rate=0.03, num_steps=30)
    b = get_accountant("rdp").step(noise_multiplier=0.9, sample_rate=0.03, num_steps=100)
    np.testing.assert_allclose(a.get_rdp(), b.get_rdp(), rtol=1e-14)


def test_accountant_copy_and_pickle():
    acc = get_accountant("rdp").step(noise_multiplier=1.0, sample_rate=0.1, num_steps=10)
    e = acc.get_epsilon(1e-5)
    for other in (copy.deepcopy(acc), pickle.loads(pickle.dumps(acc))):
        assert other.history == acc.history
        assert other.get_epsilon(1e-5) == e
        other.step(noise_multiplier=1.0, sample_rate=0.1)
        assert acc.n_steps == 10  # copies record separately


def test_get_delta_round_trip():
    acc = get_accountant("rdp").step(noise_multiplier=1.0, sample_rate=0.02, num_steps=500)
    e = acc.get_epsilon(1e-6)
    assert acc.get_delta(e) == pytest.approx(1e-6, rel=1e-9)


def test_step_validation():
    acc = get_accountant("rdp")
    with pytest.raises(ValueError):
        acc.step(noise_multiplier=-0.1, sample_rate=0.1)
    with pytest.raises(ValueError):
        acc.step(noise_multiplier=1.0, sample_rate=1.1)
    with pytest.raises(TypeError):
        acc.step(noise_multiplier=1.0, sample_rate=0.1, num_steps=1.5)
    with pytest.raises(ValueError):
        acc.step(noise_multiplier=1.0, sample_rate=0.1, num_steps=-1)
    with pytest.raises(TypeError):
        acc.step(1.0, 0.1)  # keyword-only
    assert acc.history == []


def test_rdp_only_options_rejected_for_gdp():
    with pytest.raises(ValueError, match="only to accountant='rdp'"):
        compute_epsilon(
            noise_multiplier=1.0,
            sample_rate=0.1,
            steps=1,
            delta=1e-5,
            accountant="gdp_clt",
            conversion="classic",
        )


# ------------------------------------------------------------------ GDP CLT


@pytest.mark.parametrize(
    ("sigma", "q", "delta", "mu", "eps"),
    [  # dp_flow.md §2.2 table
        (7.36, 0.5, 1e-2, 6.1044, 31.989),
        (11.44, 0.5, 1e-2, 3.9167, 16.003),
        (18.28, 0.5, 1e-2, 2.4483, 7.998),
        (29.93, 0.5, 1e-2, 1.4946, 4.000),
        (1.30, 1 / 12, 1e-5, 6.6961, 50.205),
        (6.68, 1 / 12, 1e-5, 1.1221, 5.004),
        (14.88, 1 / 12, 1e-5, 0.5015, 2.000),
        (27.82, 1 / 12, 1e-5, 0.2680, 1.000),
    ],
)
def test_gdp_clt_table(sigma, q, delta, mu, eps):
    got_mu = gdp_clt_mu(noise_multiplier=sigma, sample_rate=q, steps=8000)
    assert got_mu == pytest.approx(mu, abs=5e-4)
    with pytest.warns(ApproximateGuaranteeWarning):
        e = compute_epsilon(
            noise_multiplier=sigma, sample_rate=q, steps=8000, delta=delta, accountant="gdp_clt"
        )
    assert e == pytest.approx(eps, abs=1.5e-3)


def test_gdp_typo_value_and_inverse():
    assert gdp_epsilon(1e-5, 6.58) == pytest.approx(48.94, abs=5e-3)
    for eps, delta, q, mu, sigma in [
        (32, 1e-2, 0.5, 6.1057, 7.3585),
        (16, 1e-2, 0.5, 3.9163, 11.4412),
        (8, 1e-2, 0.5, 2.4488, 18.2762),
        (4, 1e-2, 0.5, 1.4947, 29.9288),
        (50, 1e-5, 1 / 12, 6.6773, 1.3028),
        (5, 1e-5, 1 / 12, 1.1212, 6.6850),
        (2, 1e-5, 1 / 12, 0.5016, 14.8778),
        (1, 1e-5, 1 / 12, 0.2681, 27.8155),
    ]:
        m = gdp_mu(eps, delta)
        assert m == pytest.approx(mu, abs=1e-4)
        s = gdp_clt_noise_multiplier(mu=m, sample_rate=q, steps=8000)
        assert s == pytest.approx(sigma, abs=1e-4)
        # closed-form sigma round-trips through the CLT formula
        assert gdp_clt_mu(noise_multiplier=s, sample_rate=q, steps=8000) == pytest.approx(m)


def test_gdp_helpers_c4():
    assert gdp_delta(0.0, 1.0) == pytest.approx(0.382925, abs=1e-6)
    for mu in (0.3, 1.0, 4.0):
        assert gdp_delta(0.0, mu) == pytest.approx(2 * _ndtr(mu / 2) - 1, rel=1e-12)
    deltas = [gdp_delta(e, 2.0) for e in np.linspace(0, 20, 41)]
    assert all(0 <= d <= 1 for d in deltas)
    assert all(a >= b for a, b in zip(deltas, deltas[1:], strict=False))
    assert gdp_delta(1.0, 1.0) < gdp_delta(1.0, 2.0)
    for e in (0.1, 1.0, 5.0, 30.0):
        for mu in (0.5, 1.0, 3.0):
            if gdp_delta(e, mu) < 1e-300:  # delta underflows: epsilon is then inf
                assert gdp_epsilon(gdp_delta(e, mu), mu) == math.inf
                continue
            assert gdp_epsilon(gdp_delta(e, mu), mu) == pytest.approx(e, rel=1e-8)


def _ndtr(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def test_exact_gaussian_via_gdp():
    # C3: mu = 1/sigma exactly for one full-batch Gaussian step; CLT gives 6.007.
    assert gdp_epsilon(1e-5, 1.0) == pytest.approx(4.3772, abs=1e-4)
    with quiet_gdp():
        clt = compute_epsilon(
            noise_multiplier=1.0, sample_rate=1.0, steps=1, delta=1e-5, accountant="gdp_clt"
        )
    assert clt == pytest.approx(6.007, abs=1e-3)


def test_gdp_accountant_warns_and_composes():
    acc = get_accountant("gdp_clt")
    acc.step(noise_multiplier=7.36, sample_rate=0.5, num_steps=3000)
    acc.step(noise_multiplier=7.36, sample_rate=0.5, num_steps=5000)
    assert acc.get_mu() == pytest.approx(6.1044, abs=5e-4)
    with pytest.warns(ApproximateGuaranteeWarning):
        assert acc.get_epsilon(1e-2) == pytest.approx(31.989, abs=1e-3)
    with pytest.warns(ApproximateGuaranteeWarning):
        assert acc.get_delta(31.989) == pytest.approx(1e-2, rel=1e-3)
    # heterogeneous steps: mu^2 adds
    acc2 = get_accountant("gdp_clt")
    acc2.step(noise_multiplier=1.0, sample_rate=0.1, num_steps=10)
    acc2.step(noise_multiplier=2.0, sample_rate=0.2, num_steps=5)
    mu_a = gdp_clt_mu(noise_multiplier=1.0, sample_rate=0.1, steps=10)
    mu_b = gdp_clt_mu(noise_multiplier=2.0, sample_rate=0.2, steps=5)
    assert acc2.get_mu() == pytest.approx(math.hypot(mu_a, mu_b))


def test_gdp_limits():
    with quiet_gdp():
        for kw in ({"steps": 0}, {"sample_rate": 0.0}):
            args = {"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": 10, "delta": 1e-5}
            args.update(kw)
            assert compute_epsilon(**args, accountant="gdp_clt") == 0.0
        assert (
            compute_epsilon(
                noise_multiplier=0.0, sample_rate=0.1, steps=1, delta=1e-5, accountant="gdp_clt"
            )
            == math.inf
        )


# ------------------------------------------------------------------ calibration


@pytest.mark.parametrize(
    ("q", "delta", "target", "classic", "improved"),
    [  # dp_flow.md §2.6, integer orders 2..256 (spec README S3 pins the grid)
        (0.5, 1e-2, 32, 8.566, 8.358),
        (0.5, 1e-2, 16, 13.262, 12.524),
        (0.5, 1e-2, 8, 22.960, 20.462),
        (0.5, 1e-2, 4, 40.294, 33.642),
        (1 / 12, 1e-5, 50, 1.377, 1.358),
        (1 / 12, 1e-5, 5, 7.911, 7.161),
        (1 / 12, 1e-5, 2, 18.664, 16.057),
        (1 / 12, 1e-5, 1, 36.565, 30.181),
    ],
)
def test_calibration_anchor_values(q, delta, target, classic, improved):
    kw = {"delta": delta, "sample_rate": q, "steps": 8000, "orders": INTEGER_ORDERS}
    s_imp = calibrate_noise_multiplier(epsilon=target, **kw)
    s_cla = calibrate_noise_multiplier(epsilon=target, conversion="classic", **kw)
    # the spec's values are rounded to 3 decimals; ours is within 0.1 % above the optimum
    assert improved * (1 - 1e-3) <= s_imp <= improved * (1 + 1.5e-3)
    assert classic * (1 - 1e-3) <= s_cla <= classic * (1 + 1.5e-3)


def test_calibration_gdp_clt_matches_closed_form():
    with pytest.warns(ApproximateGuaranteeWarning):
        s = calibrate_noise_multiplier(
            epsilon=32, delta=1e-2, sample_rate=0.5, steps=8000, accountant="gdp_clt"
        )
    assert 7.3585 <= s <= 7.3585 * 1.0011


def test_calibration_edges():
    # epsilon = inf: no noise
    assert (
        calibrate_noise_multiplier(epsilon=math.inf, delta=1e-5, sample_rate=0.1, steps=10) == 0.0
    )
    # a huge target is met by the smallest sigma in the bracket
    assert calibrate_noise_multiplier(epsilon=1e6, delta=1e-5, sample_rate=0.1, steps=10) == 0.3
    # nothing sampled or no steps: nothing to hide, the bracket's lower edge is returned
    assert calibrate_noise_multiplier(epsilon=0.1, delta=1e-5, sample_rate=0.0, steps=10) == 0.3
    assert calibrate_noise_multiplier(epsilon=0.1, delta=1e-5, sample_rate=0.1, steps=0) == 0.3
    # unreachable target: clear error before any training
    with pytest.raises(ValueError, match="No noise multiplier"):
        calibrate_noise_multiplier(epsilon=1e-4, delta=1e-5, sample_rate=1.0, steps=10_000)
    with pytest.raises(ValueError, match="No noise multiplier"):
        calibrate_noise_multiplier(epsilon=1.0, delta=0.0, sample_rate=0.1, steps=10)
    with pytest.raises(ValueError):
        calibrate_noise_multiplier(epsilon=0.0, delta=1e-5, sample_rate=0.1, steps=10)
    with pytest.raises(ValueError):
        calibrate_noise_multiplier(epsilon=-1.0, delta=1e-5, sample_rate=0.1, steps=10)


# ------------------------------------------------------------------ invariants

sigmas = st.floats(0.5, 50.0)
rates = st.floats(1e-3, 1.0)
step_counts = st.integers(1, 10_000)
deltas = st.sampled_from([1e-8, 1e-5, 1e-3])
ORDERS_FAST = [1.25, 1.5, 1.75, 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 16, 20, 32, 48, 64, 128, 256]


def _eps(sigma, q, steps, delta, accountant="rdp"):
    kw = {"orders": ORDERS_FAST} if accountant == "rdp" else {}
    with quiet_gdp():
        return compute_epsilon(
            noise_multiplier=sigma,
            sample_rate=q,
            steps=steps,
            delta=delta,
            accountant=accountant,
            **kw,
        )


TOL = 1e-9


@pytest.mark.parametrize("accountant", ["rdp", "gdp_clt"])
@given(sigma=sigmas, q=rates, steps=step_counts, delta=deltas, data=st.data())
def test_monotonicity(accountant, sigma, q, steps, delta, data):
    # C1 / B1: non-decreasing in T and q, non-increasing in sigma and delta.
    e = _eps(sigma, q, steps, delta, accountant)
    more_steps = steps + data.draw(st.integers(1, 5000))
    assert _eps(sigma, q, more_steps, delta, accountant) >= e * (1 - TOL)
    q2 = data.draw(st.floats(q, 1.0))
    assert _eps(sigma, q2, steps, delta, accountant) >= e * (1 - TOL)
    sigma2 = data.draw(st.floats(sigma, 60.0))
    assert _eps(sigma2, q, steps, delta, accountant) <= e * (1 + TOL)
    assert _eps(sigma, q, steps, delta * 10, accountant) <= e * (1 + TOL)


@given(sigma=sigmas, q=rates)
def test_rdp_curve_monotone_in_order(sigma, q):
    rdp = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q, orders=ORDERS_FAST)
    assert np.all(np.diff(rdp) >= -1e-12 * rdp[1:])


def test_large_sigma_limit():
    # C2: sigma -> inf gives epsilon -> 0
    vals = [_eps(s, 0.1, 100, 1e-5) for s in (1, 10, 100, 1000, 1e6)]
    assert all(a > b for a, b in zip(vals, vals[1:], strict=False))
    assert vals[-1] < 1e-3


@given(
    target=st.floats(0.2, 20.0),
    q=st.floats(1e-3, 0.5),
    steps=st.integers(1, 3000),
    delta=deltas,
)
def test_calibration_round_trip_and_tightness(target, q, steps, delta):
    # F C5 / G B5: eps(sigma*) <= target and eps(sigma* (1 - 2e-3)) > target (interior).
    kw = {"delta": delta, "sample_rate": q, "steps": steps, "orders": ORDERS_FAST}
    try:
        sigma = calibrate_noise_multiplier(epsilon=target, **kw)
    except ValueError:
        # only allowed when even the largest sigma is not enough
        assert _eps(1000.0, q, steps, delta) > target
        return
    ekw = {"delta": delta, "sample_rate": q, "steps": steps, "orders": ORDERS_FAST}
    assert compute_epsilon(noise_multiplier=sigma, **ekw) <= target
    if sigma > 0.3:
        assert compute_epsilon(noise_multiplier=sigma * (1 - 2e-3), **ekw) > target


# ------------------------------------------------------------------ resolve


def test_resolve_noise_multiplier_calibrates():
    kw = {"epsilon": 2.0, "delta": 1e-5, "sample_rate": 0.02, "steps": 500}
    sigma, spent = resolve_noise_multiplier(**kw)
    assert sigma == calibrate_noise_multiplier(**kw)
    assert spent == compute_epsilon(noise_multiplier=sigma, sample_rate=0.02, steps=500, delta=1e-5)
    assert 2.0 * 0.99 < spent <= 2.0


def test_resolve_noise_multiplier_checks_a_given_value():
    kw = {"epsilon": 2.0, "delta": 1e-5, "sample_rate": 0.02, "steps": 500}
    sigma, spent = resolve_noise_multiplier(noise_multiplier=3.0, **kw)
    assert sigma == 3.0 and spent < 2.0
    with pytest.raises(BudgetExceededError, match="noise_multiplier=0.5 spends"):
        resolve_noise_multiplier(noise_multiplier=0.5, **kw)
    with pytest.raises(ValueError):  # BudgetExceededError is a ValueError
        resolve_noise_multiplier(noise_multiplier=0.5, **kw)


def test_resolve_noise_multiplier_edges():
    # non-private: no noise, infinite spend
    assert resolve_noise_multiplier(epsilon=math.inf, delta=1e-5, sample_rate=0.1, steps=10) == (
        0.0,
        math.inf,
    )
    # nothing sampled: the bracket's lower edge, zero spend
    assert resolve_noise_multiplier(epsilon=1.0, delta=1e-5, sample_rate=0.0, steps=10) == (
        0.3,
        0.0,
    )
    with pytest.raises(BudgetExceededError, match="No noise multiplier"):
        resolve_noise_multiplier(epsilon=1e-4, delta=1e-5, sample_rate=1.0, steps=10_000)
    with pytest.warns(ApproximateGuaranteeWarning):
        sigma, spent = resolve_noise_multiplier(
            epsilon=5.0, delta=1e-5, sample_rate=1 / 12, steps=8000, accountant="gdp_clt"
        )
    assert 6.685 <= sigma <= 6.685 * 1.0011 and spent <= 5.0


@pytest.mark.parametrize(
    ("sigma", "q", "steps", "delta", "clt", "pld"),
    [  # dp_flow.md §2.3 item 1 table: GDP-CLT and tight PLD (dp-accounting, 1e-3) columns
        (7.36, 0.5, 8000, 1e-2, 31.989, 31.855),
        (1.30, 1 / 12, 8000, 1e-5, 50.205, 49.135),
        (6.68, 1 / 12, 8000, 1e-5, 5.004, 5.020),
        (0.8, 0.004, 10000, 1e-5, 3.275, 3.539),
        (0.6, 0.01, 2000, 1e-5, 8.414, 9.954),
        (1.0, 0.01, 1000, 1e-5, 1.618, 1.829),
        (1.0, 0.004, 10000, 1e-5, 2.102, 2.189),
        (1.1, 256 / 60000, 14062, 1e-5, 2.324, 2.391),
        (0.5, 0.1, 100, 1e-5, 57.236, 31.371),
        (1.0, 1.0, 1, 1e-5, 6.007, 4.377),
    ],
)
def test_clt_table_and_rdp_upper_bounds_pld(sigma, q, steps, delta, clt, pld):
    kw = {"noise_multiplier": sigma, "sample_rate": q, "steps": steps, "delta": delta}
    with quiet_gdp():
        assert compute_epsilon(**kw, accountant="gdp_clt") == pytest.approx(clt, abs=1.5e-3)
    # C6: the rigorous RDP bound is never below the (near-exact) PLD value
    assert compute_epsilon(**kw) >= pld - 0.05
