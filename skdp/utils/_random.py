"""Random streams.

``random_state`` is stored on estimators as given. ``fit`` turns it into
:class:`numpy.random.Generator` objects with :func:`make_rng` or, when an estimator
needs several independent streams (data sampling, noise, initialisation, ...), with
:func:`spawn_streams`, which derives named child streams in a fixed order so that the
same seed always gives the same streams. ``None`` means fresh OS entropy, never a
global random state.

For a real release the seed must stay secret: anyone holding the seed can subtract
the noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral

import numpy as np

__all__ = ["make_rng", "seed_sequence", "spawn_streams", "draw_seed"]


def seed_sequence(random_state) -> np.random.SeedSequence:
    """Turn ``random_state`` into a :class:`numpy.random.SeedSequence`.

    Parameters
    ----------
    random_state : None, int, SeedSequence, Generator or RandomState
        ``None`` draws fresh OS entropy. A ``Generator`` or ``RandomState`` is
        advanced (a seed is drawn from it), so passing the same object twice gives
        different streams, as in scikit-learn.
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63 - 1, size=4).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**31 - 1, size=4).tolist())
    raise ValueError(
        f"random_state must be None, an int, a SeedSequence, a Generator or a RandomState; "
        f"got {type(random_state).__name__}"
    )


def make_rng(random_state) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Examples
    --------
    >>> from skdp.utils._random import make_rng
    >>> make_rng(0).integers(10) == make_rng(0).integers(10)
    True
    """
    return np.random.default_rng(seed_sequence(random_state))


def spawn_streams(random_state, names: Sequence[str]) -> dict[str, np.random.Generator]:
    """Spawn one independent generator per name, in the order given.

    The mapping name -> stream depends only on ``random_state`` and the position of the
    name in ``names``: keep the order fixed in an estimator (append new streams at the
    end) so that results stay reproducible across versions.

    Examples
    --------
    >>> from skdp.utils._random import spawn_streams
    >>> s = spawn_streams(0, ["sampling", "noise"])
    >>> sorted(s)
    ['noise', 'sampling']
    """
    if len(set(names)) != len(names):
        raise ValueError("stream names must be unique")
    children = seed_sequence(random_state).spawn(len(names))
    return {name: np.random.default_rng(child) for name, child in zip(names, children, strict=True)}


def draw_seed(rng: np.random.Generator) -> int:
    """Draw a 63-bit integer seed from ``rng`` (e.g. to seed a ``torch.Generator``)."""
    return int(rng.integers(0, 2**63 - 1))
