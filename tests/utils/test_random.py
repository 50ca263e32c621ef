import numpy as np
import pytest

from skdp.utils._random import draw_seed, make_rng, seed_sequence, spawn_streams


def test_same_seed_same_stream():
    assert make_rng(3).random() == make_rng(3).random()
    a = spawn_streams(3, ["x", "y"])
    b = spawn_streams(3, ["x", "y"])
    assert a["y"].random() == b["y"].random()


def test_streams_are_distinct():
    s = spawn_streams(0, ["x", "y"])
    assert s["x"].random() != s["y"].random()


def test_none_uses_fresh_entropy_not_global_state():
    np.random.seed(0)  # noqa: NPY002 - the point: global state must not matter
    a = make_rng(None).random()
    np.random.seed(0)  # noqa: NPY002 - the point: global state must not matter
    b = make_rng(None).random()
    assert a != b


def test_generator_and_randomstate_are_advanced():
    g = np.random.default_rng(1)
    assert make_rng(g).random() != make_rng(g).random()
    rs = np.random.RandomState(1)
    assert make_rng(rs).random() != make_rng(rs).random()


@pytest.mark.parametrize("bad", [-1, "seed", 1.5, True])
def test_bad_random_state(bad):
    with pytest.raises(ValueError):
        seed_sequence(bad)


def test_duplicate_stream_names():
    with pytest.raises(ValueError):
        spawn_streams(0, ["a", "a"])


def test_draw_seed_range():
    s = draw_seed(make_rng(0))
    assert 0 <= s < 2**63
