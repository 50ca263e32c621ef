"""The simulation grid shared by the interval benchmarks (``intervals.py``,
``intervals_logistic.py``, ``intervals_cox.py``): one command line, one map over the repetitions."""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor


def grid_parser(doc):
    """An ``ArgumentParser`` with the grid's options: ``--reps``, ``--n``, ``--eps``,
    ``--d``, ``--jobs`` and ``--check-inf`` (each script adds its own)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, nargs="+", default=[500, 2000, 10000])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    ap.add_argument("--d", type=int, nargs="+", default=[2, 5])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--check-inf", action="store_true")
    return ap


def map_reps(fn, args, jobs):
    """``[fn(a) for a in args]``, over ``jobs`` processes when ``jobs > 1``."""
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            return list(pool.map(fn, args, chunksize=max(1, len(args) // (4 * jobs))))
    return [fn(a) for a in args]
