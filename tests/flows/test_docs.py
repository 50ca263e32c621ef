"""The runnable Examples sections of skdp.flows execute and give the shown output."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import skdp.flows

MODULES = sorted(
    f"skdp.flows.{m.name}" for m in pkgutil.iter_modules(skdp.flows.__path__) if m.name[0] == "_"
)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_public_names_documented():
    for name in skdp.flows.__all__:
        obj = getattr(skdp.flows, name)
        assert obj.__doc__ and len(obj.__doc__.strip()) > 20, name
