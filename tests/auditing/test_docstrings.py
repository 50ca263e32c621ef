"""The Examples sections of skdp.auditing and check_privacy run and are right."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "skdp.auditing._audits",
    "skdp.auditing._bounds",
    "skdp.auditing._controls",
    "skdp.auditing._inversion",
    "skdp.auditing._reidentification",
    "skdp.auditing._checks",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
