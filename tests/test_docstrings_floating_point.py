"""Every estimator's Notes say which of its releases are exact in floating point.

Issue 15 item 11: noise drawn in floating point can leave gaps (Mironov 2012), so each
estimator documents, in a "**Floating point.**" paragraph of its Notes, which releases use
exact integer noise (or the ``secure_mode`` grid) and which are drawn in floating point.
The test runs over every discovered estimator, so a new one is covered without editing it.
"""

from __future__ import annotations

import pytest

from skdp.discovery import all_estimators

#: Estimators whose docstring is being written by someone else; empty it when they add it.
PENDING: set[str] = set()


@pytest.mark.parametrize("name, cls", all_estimators())
def test_notes_have_a_floating_point_paragraph(name, cls):
    if name in PENDING:
        pytest.skip(f"{name}: Floating point paragraph pending (owned by another change)")
    doc = cls.__doc__ or ""
    notes = doc.split("Notes\n", 1)[-1].split("References\n", 1)[0]
    assert "**Floating point.**" in notes, f"{name}: no **Floating point.** paragraph in Notes"


def test_pending_names_are_still_estimators():
    names = {name for name, _ in all_estimators()}
    assert PENDING <= names, f"drop {sorted(PENDING - names)} from PENDING"
