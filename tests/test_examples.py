"""Run every example script in a subprocess, with a time limit.

The gallery scripts (``examples/plot_*.py``) together take longer than the default test
run should, so they are marked ``slow`` (``python -m pytest -m slow tests/test_examples.py``);
the quickstart's ``--fast`` mode runs by default.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GALLERY = sorted(EXAMPLES.glob("plot_*.py"))
TIME_LIMIT = 180  # seconds per script (generous: CI machines may be loaded)


def _run(script, *args, cwd):
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        env=env,
    )


def test_gallery_is_not_empty():
    assert len(GALLERY) >= 6
    for script in GALLERY:
        text = script.read_text()
        # sphinx-gallery needs a docstring with a title underlined by "="
        assert re.match(r'"""\n[^\n]+\n=+\n', text), script.name
        # the PNG is written only when run as a script
        # (sphinx-gallery runs examples as __main__ without __file__)
        assert 'if __name__ == "__main__" and "__file__" in globals():' in text, script.name
        assert ".png" in text, script.name


@pytest.mark.slow
@pytest.mark.parametrize("script", GALLERY, ids=[p.stem for p in GALLERY])
def test_gallery_example_runs(script, tmp_path):
    # run a copy so that the PNG lands in tmp_path, not in the source tree
    copy = tmp_path / script.name
    copy.write_text(script.read_text())
    res = _run(copy, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    png = copy.with_suffix(".png")
    assert png.exists() and png.stat().st_size > 5000  # a real figure, not an empty canvas
    assert "PrivacyLeakWarning" not in res.stderr


@pytest.mark.slow
def test_gallery_example_runs_like_sphinx_gallery(tmp_path):
    """sphinx-gallery executes an example as ``__main__`` with no ``__file__``."""
    script = EXAMPLES / "plot_kmedian.py"
    code = (
        "import sys; src = open(sys.argv[1]).read(); "
        "exec(compile(src, 'example', 'exec'), {'__name__': '__main__'})"
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
    res = subprocess.run(
        [sys.executable, "-c", code, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]


def test_quickstart_fast(tmp_path):
    res = _run(EXAMPLES / "quickstart.py", "--fast", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = res.stdout.splitlines()
    expected = {
        "DPLinearRegression",
        "DPLogisticRegression",
        "DPMarginalSynthesizer",
        "DPHistogramSynthesizer",
        "DPFlowDensity",
        "DPGANSynthesizer",
        "SubsampledExpMedian",
        "DPILPClassifier",
        "ExpMFlowClassifier",
        "ExpMFlowRegressor",
        "dp_roc_auc_score",
    }
    rows = {}
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[1] in expected | {"cancer"}:
            name = parts[2] if parts[1] == "cancer" else parts[1]
            rows[name] = line
    assert set(rows) == expected
    for name, line in rows.items():
        numbers = re.findall(r"-?\d+\.\d+", line)
        dp, base, seconds = (float(v) for v in numbers[-3:])
        assert seconds >= 0
        if name in ("DPLinearRegression", "DPILPClassifier", "dp_roc_auc_score"):
            assert base > 0.3  # the non-private baselines are sensible
        # epsilon spent is the stated budget (DP-SGD calibration may undershoot slightly)
        eps = float(line.split(name)[1].split()[0].rstrip(","))
        assert 0.95 <= eps <= 1.0, line
    assert "not private" in res.stdout
    # part 1, the workflow: one total for the search, and a synthetic table
    assert re.search(r"under one total epsilon = 3:\n  spent epsilon = 3,", res.stdout)
    assert "synthetic table: epsilon = 1," in res.stdout
