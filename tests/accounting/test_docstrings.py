"""The Examples sections of skdp.accounting run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

import skdp.accounting

MODULES = [
    "skdp.accounting",
    "skdp.accounting._accountant",
    "skdp.accounting._calibration",
    "skdp.accounting._composition",
    "skdp.accounting._gdp",
    "skdp.accounting._ledger",
    "skdp.accounting._pld",
    "skdp.accounting._rdp",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0


def test_every_public_name_is_documented():
    for name in skdp.accounting.__all__:
        obj = getattr(skdp.accounting, name)
        if callable(obj):
            doc = obj.__doc__ or ""
            assert "Examples" in doc or name in {"Accountant", "register_accountant"}, name
