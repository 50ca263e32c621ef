"""Scale benchmark: skdp's one-pass releases in memory (numpy) and on Dask, 10^5 rows up.

For each row count ``n`` and estimator, the same release is run twice: on numpy arrays in
the client, and on Dask arrays generated on the workers of a ``distributed.LocalCluster``
(2 worker processes, 1 thread each, loopback). Reported: wall time of the call, and the
peak of the client's Python/numpy allocations during the call (``tracemalloc``; the numpy
row is the call's working memory, the data itself was allocated before). The largest row
count is also run **out of core**: the data is written to Parquet by the workers and read
back partition by partition by workers whose memory limit is below the data's size.

The out-of-core data set has ``--parquet-features`` features (default 20) plus a target,
a label and a prediction column, against 1 GiB per worker (``--worker-memory``).

Estimators: ``DPLinearRegression`` (Gram matrix), ``DPHistogramSynthesizer`` (cell
counts), ``DPMarginalSynthesizer`` (1- and 2-way marginal counts), ``dp_roc_auc_score``
(distributed sort; every score distinct, the worst case) and ``dp_accuracy_score``.
``DPILPClassifier`` (one pass per search level) and ``SubsampledExpMedian`` (one pass
per round over the candidate sets; exact fixed-point costs) run on both: the k-median
with ``KMEDIAN_CANDIDATES`` public candidate centres (one pass of 83 sets of 3 centres) up
to ``10^7`` rows, and its multi-round box search (``bounds`` only, up to 12 rounds, one
pass each) at ``10^5`` rows only.

Timings are taken on a shared machine: the load average and thread counts are printed
beside them, and only ratios within one run are meaningful.

Run ``python benchmarks/scale.py`` (a few minutes) or ``--quick`` (10^5 and 10^6 only).
``--only-multi-pass`` runs the ILP and k-median rows only. The out-of-core run has its own
size: ``--parquet-log-rows 8 --parquet-features 5`` writes ``10^8`` rows (5 features, a
target, a label and a prediction column: 6.0 GiB in memory) and runs the one-pass
releases (regression, histogram, marginals, AUC, accuracy) on it from Parquet, with no
numpy reference (``--parquet-only`` skips the in-memory comparisons).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import tracemalloc

import numpy as np

D = 5  # features of the regression / columns of the synthesizers
D_PARQUET = 20  # columns of the out-of-core data set (larger than a worker's memory)
KMEDIAN_MAX_ROWS = 10**7  # public candidate centres: one pass over the rows
KMEDIAN_BOX_MAX_ROWS = 10**5  # the box search: up to 12 passes (rounds), 7 s at 10^5
KMEDIAN_CANDIDATES = 100  # public candidate centres, uniform in the box


def _measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dt, peak / 2**20


def _numpy_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, D))
    y = X @ np.linspace(0.5, -0.5, D) + 0.1 * rng.normal(size=n)
    labels = (y + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    return X, np.clip(y, -3, 3), labels


def _dask_data(n, chunk):
    import dask.array as da

    rng = da.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, D), chunks=(chunk, D))
    y = X @ np.linspace(0.5, -0.5, D) + 0.1 * rng.normal(size=n, chunks=chunk)
    labels = (y + 0.3 * rng.normal(size=n, chunks=chunk) > 0).astype(np.int64)
    return X, da.clip(y, -3, 3), labels


def _tasks(X, y, labels):
    from skdp.linear_model import DPLinearRegression
    from skdp.metrics import dp_accuracy_score, dp_roc_auc_score
    from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer

    pred = (X[:, 0] > 0).astype(np.int64)
    return {
        "DPLinearRegression": lambda: DPLinearRegression(
            bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=0
        ).fit(X, y),
        "DPHistogramSynthesizer": lambda: DPHistogramSynthesizer(
            bounds=(-1, 1), random_state=0
        ).fit(X[:, :3]),
        "DPMarginalSynthesizer": lambda: DPMarginalSynthesizer(  # MST: Dask's selection
            bounds=(-1, 1), delta=1e-9, selection="mst", random_state=0
        ).fit(X[:, :4]),
        "dp_roc_auc_score": lambda: dp_roc_auc_score(
            labels, y, epsilon=1.0, delta=1e-9, random_state=0
        ),
        "dp_accuracy_score": lambda: dp_accuracy_score(labels, pred, epsilon=1.0, random_state=0),
    }


def _multi_pass(X, labels):
    from skdp.cluster import SubsampledExpMedian
    from skdp.ilp import DPILPClassifier

    atoms = (X > 0).astype(np.int64)
    out = {
        "DPILPClassifier": lambda: DPILPClassifier(max_clause_length=2, random_state=0).fit(
            atoms, labels
        ),
    }
    V = np.random.default_rng(7).uniform(-1, 1, size=(KMEDIAN_CANDIDATES, 2))  # public
    if X.shape[0] <= KMEDIAN_MAX_ROWS:
        out["SubsampledExpMedian (candidates)"] = lambda: SubsampledExpMedian(
            n_clusters=3, candidates=V, random_state=0
        ).fit(X[:, :2])
    if X.shape[0] <= KMEDIAN_BOX_MAX_ROWS:
        out["SubsampledExpMedian (box)"] = lambda: SubsampledExpMedian(
            n_clusters=3, bounds=(-1, 1), random_state=0
        ).fit(X[:, :2])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^5 and 10^6 rows only")
    ap.add_argument("--max-log-rows", type=int, default=7)
    ap.add_argument("--worker-memory", default="1GiB")
    ap.add_argument("--min-log-rows", type=int, default=5)
    ap.add_argument("--parquet-only", action="store_true", help="only the out-of-core run")
    ap.add_argument("--no-parquet", action="store_true", help="skip the out-of-core run")
    ap.add_argument("--only-multi-pass", action="store_true", help="ILP and k-median only")
    ap.add_argument("--parquet-log-rows", type=int, default=None, help="default: max")
    ap.add_argument("--parquet-features", type=int, default=D_PARQUET)
    ap.add_argument("--parquet-dir", default=None, help="parent of the temporary Parquet")
    ap.add_argument("--parquet-rows-per-file", type=int, default=500_000)
    ap.add_argument("--parquet-releases", default=None, help="comma list; default: all")
    args = ap.parse_args()
    import logging
    import warnings

    import dask
    import distributed

    logging.getLogger("distributed").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=".*leaked semaphore")

    try:
        import torch

        torch_threads = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        torch_threads = None
    top = 6 if args.quick else args.max_log_rows
    sizes = [10**k for k in range(args.min_log_rows, top + 1)]
    print(
        f"load average {os.getloadavg()}, cpus {os.cpu_count()}, torch threads {torch_threads}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, dask {dask.__version__}"
    )
    print(
        "cluster: 2 worker processes x 1 thread, loopback, worker memory limit "
        f"{args.worker_memory}"
    )
    rows = []
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            memory_limit=args.worker_memory,
        ) as cluster,
        distributed.Client(cluster),
    ):
        for n in [] if args.parquet_only else sizes:
            chunk = min(n, 1_000_000)
            Xn, yn, ln = _numpy_data(n)
            Xd, yd, ld = _dask_data(n, chunk)
            tn, td = _tasks(Xn, yn, ln), _tasks(Xd, yd, ld)
            for name in [] if args.only_multi_pass else tn:
                t_np, m_np = _measure(tn[name])
                t_dk, m_dk = _measure(td[name])
                rows.append((name, n, "generated", t_np, m_np, t_dk, m_dk))
                print(_fmt(rows[-1]), flush=True)
            mn, md = _multi_pass(Xn, ln), _multi_pass(Xd, ld)
            for name, fn in mn.items():
                t_np, m_np = _measure(fn)
                t_dk, m_dk = _measure(md[name]) if name in md else (None, None)
                rows.append((name, n, "generated", t_np, m_np, t_dk, m_dk))
                print(_fmt(rows[-1]), flush=True)
            del Xn, yn, ln
        if not args.no_parquet:
            n = 10**args.parquet_log_rows if args.parquet_log_rows else sizes[-1]
            _out_of_core(n, args, rows)
    print()
    print(_table(rows))
    print()
    print(f"load average after: {os.getloadavg()}")


def _out_of_core(n, args, rows):
    """Parquet written and read by the workers (memory limit below the data's size)."""
    import dask
    import dask.dataframe as dd

    from skdp.linear_model import DPLinearRegression
    from skdp.metrics import dp_accuracy_score, dp_roc_auc_score
    from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer

    d = args.parquet_features
    tmp = tempfile.mkdtemp(prefix="skdp_scale_", dir=args.parquet_dir)
    try:
        rng = dask.array.random.default_rng(1)
        chunk = min(n, args.parquet_rows_per_file)
        Xd = rng.uniform(-1, 1, size=(n, d), chunks=(chunk, d))
        yd = dask.array.clip(
            Xd @ np.linspace(0.5, -0.5, d) + 0.1 * rng.normal(size=n, chunks=chunk), -3, 3
        )
        label = (yd + 0.3 * rng.normal(size=n, chunks=chunk) > 0).astype(np.float64)
        pred = (Xd[:, 0] > 0).astype(np.float64)
        names = [f"x{j}" for j in range(d)]
        frame = dd.from_dask_array(
            dask.array.concatenate([Xd, yd[:, None], label[:, None], pred[:, None]], axis=1),
            columns=names + ["y", "label", "pred"],
        )
        frame = frame.astype({"label": "int64", "pred": "int64"})
        t0 = time.perf_counter()
        frame.to_parquet(tmp, write_index=False)
        t_write = time.perf_counter() - t0
        size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp)) / 2**30
        print(
            f"Parquet: {n} rows x {d + 3} columns ({n * (d + 3) * 8 / 2**30:.1f} GiB in "
            f"memory, {size:.1f} GiB on disk, {chunk} rows per file), written by the "
            f"workers in {t_write:.1f} s; load average {os.getloadavg()}",
            flush=True,
        )
        frame = dd.read_parquet(tmp)  # partitions read by the workers, lazily
        hist_cols = names[:3]
        marg_cols = names[: min(4, d)]
        for name, fn in {
            "DPLinearRegression": lambda: DPLinearRegression(
                bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=0
            ).fit(frame[names], frame["y"]),
            "DPHistogramSynthesizer": lambda: DPHistogramSynthesizer(
                bounds=(-1, 1), random_state=0
            ).fit(frame[hist_cols]),
            "DPMarginalSynthesizer": lambda: DPMarginalSynthesizer(
                bounds=(-1, 1), delta=1e-9, random_state=0
            ).fit(frame[marg_cols]),
            "dp_roc_auc_score": lambda: dp_roc_auc_score(
                frame["label"], frame["y"], epsilon=1.0, delta=1e-9, random_state=0
            ),
            "dp_accuracy_score": lambda: dp_accuracy_score(
                frame["label"], frame["pred"], epsilon=1.0, random_state=0
            ),
        }.items():
            if args.parquet_releases and name not in args.parquet_releases.split(","):
                continue
            try:
                t_dk, m_dk = _measure(fn)
            except Exception as exc:  # report and go on with the next release
                tracemalloc.stop()
                print(f"{name}: failed ({type(exc).__name__}: {exc})", flush=True)
                continue
            rows.append((name, n, "Parquet, out of core", None, None, t_dk, m_dk))
            print(_fmt(rows[-1]), f"load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fmt(r):
    name, n, mode, t_np, m_np, t_dk, m_dk = r
    a = "-" if t_np is None else f"{t_np:8.2f} s {m_np:8.1f} MiB"
    b = "refused" if t_dk is None else f"{t_dk:8.2f} s {m_dk:8.1f} MiB"
    return f"{name:32s} n={n:>10d} {mode:22s} numpy: {a}   dask: {b}"


def _table(rows):
    """An RST list-table of the measurements (pasted into doc/dask.rst)."""
    out = [
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - estimator",
        "     - rows",
        "     - input",
        "     - numpy time (s)",
        "     - numpy peak client memory (MiB)",
        "     - Dask time (s)",
        "     - Dask peak client memory (MiB)",
    ]

    def f(v, fmt):
        return "--" if v is None else format(v, fmt)

    for name, n, mode, t_np, m_np, t_dk, m_dk in rows:
        out += [
            f"   * - {name}",
            f"     - 10^{int(round(np.log10(n)))}",
            f"     - {mode}",
            f"     - {f(t_np, '.2f')}",
            f"     - {f(m_np, '.1f')}",
            f"     - {f(t_dk, '.2f') if t_dk is not None or t_np is None else 'refused'}",
            f"     - {f(m_dk, '.1f')}",
        ]
    return "\n".join(out)


if __name__ == "__main__":
    main()
