"""DPMarginalSynthesizer's deprecated spellings (removed in 0.2, ``doc/glossary.rst``):
the ``budget_split`` tuple (now ``one_way_fraction``, ``selection_fraction``,
``two_way_fraction``) and the ``rounds_`` keys ``"rho_select"``/``"rho_measure"``
(``"epsilon_..."`` under pure DP), now ``"rho_selection"``/``"rho_measurement"``."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skdp.synthesis import DPMarginalSynthesizer
from skdp.utils._random import _hash_renamed, fit_streams

SPLIT = (0.5, 0.25, 0.25)
FRACTIONS = dict(one_way_fraction=0.5, selection_fraction=0.25, two_way_fraction=0.25)


def _X(n=200, d=3):
    return np.random.default_rng(0).uniform(0.0, 1.0, size=(n, d))


def _synth(**kw):
    return DPMarginalSynthesizer(epsilon=1.0, bounds=(0, 1), n_bins=4, random_state=0, **kw)


def _fit_quietly(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        return est.fit(X)


def _same_release(a, b):
    assert a.privacy_breakdown_ == b.privacy_breakdown_
    assert a.rho_breakdown_ == b.rho_breakdown_
    assert a.rounds_ == b.rounds_
    left, right = a.sample(50, random_state=0), b.sample(50, random_state=0)
    np.testing.assert_array_equal(left, right)


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_budget_split_warns_and_releases_what_the_fractions_release(delta):
    X = _X()
    new = _fit_quietly(_synth(delta=delta, **FRACTIONS), X)
    with pytest.warns(FutureWarning, match="budget_split.*one_way_fraction"):
        old = _synth(delta=delta, budget_split=SPLIT).fit(X)
    _same_release(old, new)  # same seed material, same shares: the same values


def test_budget_split_is_hashed_as_the_tuple_of_the_fractions():
    """The seed material names the tuple ``budget_split`` whichever spelling is used
    (and the default fractions hash as the old default ``(1/3, 1/3, 1/3)``), so fixed-seed
    releases are unchanged by the new parameters."""
    X = _X(20)

    def draw(est):
        return fit_streams(0, ["noise"], estimator=est, X=X)["noise"].random()

    assert draw(_synth(**FRACTIONS)) == draw(_synth(budget_split=SPLIT))
    assert draw(_synth()) == draw(_synth(budget_split=(1 / 3, 1 / 3, 1 / 3)))
    assert draw(_synth()) != draw(_synth(**FRACTIONS))


def test_an_estimator_inside_another_is_hashed_with_the_tuple_too():
    """A meta-estimator's seed material holds its estimator's parameters: there too the
    fractions are the tuple ``budget_split`` (as before they existed), so its fixed-seed
    releases are unchanged."""
    hashed = _hash_renamed(
        _synth(**FRACTIONS).get_params(deep=False), DPMarginalSynthesizer, tuples_only=True
    )
    assert hashed["budget_split"] == SPLIT
    assert not any(k.endswith("_fraction") for k in hashed)

    class Meta:
        def __init__(self, estimator):
            self.estimator = estimator

        def get_params(self, deep=False):
            return {"estimator": self.estimator}

    def draw(inner):
        X = _X(20)
        return fit_streams(0, ["noise"], estimator=Meta(inner), X=X)["noise"].random()

    assert draw(_synth(**FRACTIONS)) == draw(_synth(budget_split=SPLIT))
    assert draw(_synth()) == draw(_synth(budget_split=(1 / 3, 1 / 3, 1 / 3)))


def test_budget_split_get_params_clone_and_set_params():
    est = _synth(budget_split=SPLIT)
    params = est.get_params()
    assert params["budget_split"] == SPLIT
    assert params["one_way_fraction"] == 1 / 3  # the fractions keep their defaults
    assert clone(est).get_params() == params
    X = _X()
    reset = _synth().set_params(budget_split=SPLIT)
    with pytest.warns(FutureWarning):
        reset.fit(X)
    _same_release(reset, _fit_quietly(_synth(**FRACTIONS), X))
    # back to the new spelling: no warning
    _fit_quietly(reset.set_params(budget_split="deprecated", **FRACTIONS), X)


def test_budget_split_and_fractions_together_are_refused():
    with pytest.raises(ValueError, match="set one_way_fraction, .*budget_split"):
        _synth(budget_split=SPLIT, one_way_fraction=0.5).fit(_X())


def test_fractions_must_add_up_to_one():
    with pytest.raises(ValueError, match="one_way_fraction \\+ selection_fraction"):
        _synth(one_way_fraction=0.2, selection_fraction=0.2, two_way_fraction=0.2).fit(_X())
    # rounding of decimal fractions is accepted
    _fit_quietly(_synth(one_way_fraction=0.1, selection_fraction=0.2, two_way_fraction=0.7), _X())


@pytest.mark.parametrize(("delta", "unit"), [(1e-5, "rho"), (0.0, "epsilon")])
def test_rounds_old_keys_read_with_a_warning(delta, unit):
    est = _fit_quietly(_synth(delta=delta), _X())
    for r in [est.rounds_[0], pickle.loads(pickle.dumps(est)).rounds_[0]]:
        assert set(r) == {"marginal", f"{unit}_selection", f"{unit}_measurement", "noise_scale"}
        for old, new in [("select", "selection"), ("measure", "measurement")]:
            with pytest.warns(FutureWarning, match=f"{unit}_{new}"):
                assert r[f"{unit}_{old}"] == r[f"{unit}_{new}"]
            with pytest.warns(FutureWarning):
                assert r.get(f"{unit}_{old}") == r[f"{unit}_{new}"]
        assert r.get("nope", 3) == 3
        with pytest.raises(KeyError):
            r["nope"]
