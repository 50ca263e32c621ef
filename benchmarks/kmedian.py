"""Private k-median: SubsampledExpMedian against the thesis's baselines (Lantz 2016 §8.3).

Reproduces the *shape* of the thesis's experiments (spec ``lantz.md`` §6.3) on its
synthetic set-up: ``n`` public points uniform in the unit disc, a random subset of
``s = 0.3 n`` of them is the private data, ``Delta`` = diameter of the public points.
Reported: the median (and 25/75 % quantiles) of the k-median cost of the private
points over replicates (the thesis used 1,000 replicates; the default here is smaller,
see ``--replicates``), and wall-clock time per fit.

Tables
------
E              SubsampledExpMedian from a user's defaults vs diffprivlib's KMeans (below).
A (Fig. 8.3a)  k = 2: cost vs epsilon in {0.1, 1, 10, 100} for n = 100 and 1000.
B (Fig. 8.3b)  n = 1000, epsilon = 1: cost vs k in {2, 4, 8, 16}.
C (Fig. 8.3c/d) n = 1000, k = 2, epsilon = 1: cost vs m (ssem, ssem k++), em as reference.
D (Fig. 8.5)   k = 2, epsilon = 1: runtime vs n for ssemauto, em and gupta.

Methods: ``random`` / ``random k++`` (data-agnostic), ``em`` (exponential mechanism over
all C(n, k) subsets, ``n_candidates=None``), ``gupta`` (private local search),
``ssem``/``ssemauto`` (``n_candidates=m`` / ``"auto"``), ``... k++`` (k-means++ base),
``local`` (non-private 1-swap local search, best of 3), ``optimal`` (brute force, k = 2).

Run: ``python benchmarks/kmedian.py [--replicates 50] [--quick] [--table ABCDE]``.

Results (``--replicates 20``; medians; 2-core machine shared with other jobs, load ~10,
so the times in table D are inflated and only their ratios matter)::

    ### A. k = 2: median cost [25 %, 75 %] vs epsilon (thesis Fig. 8.3a)

    | n | epsilon | random | gupta | ssemauto | em | optimal |
    |---|---|---|---|---|---|---|
    | 100 | 0.1 | 17.90 | 18.15 | 17.72 | 17.73 | 13.10 |
    | 100 | 1 | 18.23 | 17.91 | 16.97 | 16.29 | 13.10 |
    | 100 | 10 | 17.91 | 19.06 | 13.81 | 13.66 | 13.10 |
    | 100 | 100 | 19.45 | 14.55 | 13.74 | 13.14 | 13.10 |
    | 1000 | 0.1 | 208.14 | 201.68 | 184.78 | 175.13 | 149.37 |
    | 1000 | 1 | 186.09 | 176.80 | 157.13 | 157.60 | 149.37 |
    | 1000 | 10 | 199.96 | 168.18 | 154.57 | 150.27 | 149.37 |
    | 1000 | 100 | 204.70 | 153.89 | 154.57 | 149.37 | 149.37 |

    ### B. n = 1000, epsilon = 1: median cost vs k (thesis Fig. 8.3b)

    | k | m auto | random | random k++ | gupta | ssemauto | ssemauto k++ | local |
    |---|---|---|---|---|---|---|---|
    | 2 | 83 | 183.57 | 176.86 | 180.94 | 158.22 | 162.01 | 151.52 |
    | 4 | 166 | 133.98 | 133.83 | 135.88 | 112.92 | 116.42 | 100.29 |
    | 8 | 332 | 98.64 | 88.14 | 101.96 | 87.57 | 82.90 | 68.05 |
    | 16 | 664 | 69.46 | 61.42 | (too slow) | 65.10 | 58.95 | 45.34 |

    ### C. n = 1000, k = 2, epsilon = 1: median cost vs m (thesis Fig. 8.3c/d)

    | m | ssem | ssem k++ | em (reference) |
    |---|---|---|---|
    | 1 | 181.96 | 182.20 | 157.73 |
    | 3 | 175.15 | 167.49 | 157.73 |
    | 10 | 165.18 | 167.56 | 157.73 |
    | 30 | 163.14 | 160.03 | 157.73 |
    | 100 | 159.34 | 157.96 | 157.73 |
    | 300 | 156.30 | 157.54 | 157.73 |
    | 1000 | 158.47 | 158.43 | 157.73 |
    | 3000 | 156.66 | 158.30 | 157.73 |

    ### D. k = 2, epsilon = 1: minimum wall time per fit (thesis Fig. 8.5)

    | n | ssemauto (s) | em (s) | gupta (s) | em / ssemauto |
    |---|---|---|---|---|
    | 100 | 0.0008 | 0.0194 | 0.0204 | 24x |
    | 300 | 0.0014 | 0.2572 | 0.0459 | 181x |
    | 1000 | 0.0294 | 8.3759 | 0.5611 | 285x |

    (total 958 s, 20 replicates)

Table E: ``SubsampledExpMedian(n_clusters=k, epsilon=eps, bounds=(0, 1))``
and nothing else ("SSEM default"; "SSEM L1" adds ``metric="manhattan"``, the metric
scored) against diffprivlib 0.6.6's ``KMeans`` with the same public box, run through
``subprocess`` in a venv with scikit-learn 1.5.2 (``DPL_PYTHON``, default
``/tmp/dplvenv/bin/python``; diffprivlib does not import with scikit-learn 1.9), and
non-private k-means (``n_init=10``) and L1 k-medians (Lloyd with coordinate-wise medians
from the k-means centres). Score: mean L1 distance of the rows to the nearest centre,
mean/max over seeds 0-4. Data: a simulator (three Gaussian blobs, sd 0.08, clipped to
[0, 1]^3, new data per seed), statsmodels' randhie and fair (k = 3 and 5; columns and
codebook bounds in :func:`public_tables`; skipped with a note without statsmodels),
digits (public pixel range 0..16) and iris (declared range 0..8 cm); the public data
are fixed and only the mechanisms' seeds vary. ``cd benchmarks && OMP_NUM_THREADS=1
PYTHONPATH=.. python kmedian.py --table E --seeds 5`` (about 6 minutes). Results and
their reading: ``doc/benchmarks_models.rst`` (:ref:`benchmarks-kmedian`).

Shape against the thesis (§8.3): at epsilon = 0.1 and n = 100 no private method beats
``random`` by much; at n = 1000, epsilon >= 1, ``em`` is within ~5 % of the optimum
and ``ssemauto`` tracks ``em``; ``gupta`` is worse than both except at epsilon = 100;
``ssem`` improves with m and plateaus at the ``em`` level from m ~ 100-300; ``ssem``
is one to two orders of magnitude faster than ``em`` at n = 1000 and faster than
``gupta``. The k++ base helps for k >= 8 and is neutral or slightly worse for k <= 4.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import tempfile
import time

import numpy as np
from _kmedian_baselines import (  # benchmarks/_kmedian_baselines.py, beside this script
    all_subset_costs,
    gupta_local_search,
    local_search,
    random_centers,
    random_kpp_centers,
    subset_cost,
)
from _public_tables import statsmodels_table
from scipy.spatial.distance import cdist

from skdp.cluster import SubsampledExpMedian
from skdp.mechanisms import exponential_mechanism


def disc(n, rng):
    r = np.sqrt(rng.uniform(size=n))
    t = rng.uniform(0, 2 * np.pi, size=n)
    return np.column_stack([r * np.cos(t), r * np.sin(t)])


def instance(n, seed):
    rng = np.random.default_rng(seed)
    V = disc(n, rng)
    X = V[rng.choice(n, size=int(0.3 * n), replace=False)]
    return V, X, cdist(X, V)


def ssem_cost(V, X, k, eps, m, seed, base="uniform"):
    est = SubsampledExpMedian(
        n_clusters=k, epsilon=eps, candidates=V, n_candidates=m, base=base, random_state=seed
    )
    return -est.fit(X).score(X)


def summarise(values):
    q25, q50, q75 = np.percentile(values, [25, 50, 75])
    return f"{q50:.2f} [{q25:.2f}, {q75:.2f}]"


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


def table_a(R, ns):
    header = ["n", "epsilon", "random", "gupta", "ssemauto", "em", "optimal"]
    rows = []
    for n in ns:
        res = {key: {eps: [] for eps in (0.1, 1, 10, 100)} for key in header[2:]}
        for rep in range(R):
            V, X, D = instance(n, 1000 * n + rep)
            delta = float(cdist(V, V).max())
            subsets, costs = all_subset_costs(D, 2)
            opt = costs.min()
            rng = np.random.default_rng(rep)
            for eps in (0.1, 1, 10, 100):
                res["random"][eps].append(subset_cost(D, random_centers(n, 2, rng)))
                res["gupta"][eps].append(
                    subset_cost(
                        D, gupta_local_search(D, 2, epsilon=eps, sensitivity=delta, rng=rng)
                    )
                )
                res["ssemauto"][eps].append(ssem_cost(V, X, 2, eps, "auto", rep))
                j = exponential_mechanism(-costs, epsilon=eps, sensitivity=delta, rng=rng)
                res["em"][eps].append(costs[j])
                res["optimal"][eps].append(opt)
        for eps in (0.1, 1, 10, 100):
            rows.append([n, eps] + [summarise(res[key][eps]) for key in header[2:]])
    table("A. k = 2: median cost [25 %, 75 %] vs epsilon (thesis Fig. 8.3a)", header, rows)


def table_b(R, n, ks):
    header = ["k", "m auto", "random", "random k++", "gupta", "ssemauto", "ssemauto k++", "local"]
    rows = []
    for k in ks:
        res = {key: [] for key in header[2:]}
        for rep in range(R):
            V, X, D = instance(n, 7000 + rep)
            delta = float(cdist(V, V).max())
            rng = np.random.default_rng(rep)
            res["random"].append(subset_cost(D, random_centers(n, k, rng)))
            res["random k++"].append(subset_cost(D, random_kpp_centers(V, k, rng)))
            res["gupta"].append(
                subset_cost(D, gupta_local_search(D, k, epsilon=1.0, sensitivity=delta, rng=rng))
            )
            res["ssemauto"].append(ssem_cost(V, X, k, 1.0, "auto", rep))
            res["ssemauto k++"].append(ssem_cost(V, X, k, 1.0, "auto", rep, base="kmeans++"))
            res["local"].append(subset_cost(D, local_search(D, k, rng=rng, n_restarts=3)))
        m = math.ceil(6 * k * math.log(n))
        rows.append([k, m] + [summarise(res[key]) for key in header[2:]])
    table(f"B. n = {n}, epsilon = 1: median cost vs k (thesis Fig. 8.3b)", header, rows)


def table_c(R, n, ms):
    header = ["m", "ssem", "ssem k++", "em (reference)"]
    res = {m: {"ssem": [], "ssem k++": []} for m in ms}
    em = []
    for rep in range(R):
        V, X, D = instance(n, 9000 + rep)
        delta = float(cdist(V, V).max())
        _, costs = all_subset_costs(D, 2)
        em.append(
            costs[
                exponential_mechanism(
                    -costs, epsilon=1.0, sensitivity=delta, rng=np.random.default_rng(rep)
                )
            ]
        )
        for m in ms:
            res[m]["ssem"].append(ssem_cost(V, X, 2, 1.0, m, rep))
            res[m]["ssem k++"].append(ssem_cost(V, X, 2, 1.0, m, rep, base="kmeans++"))
    rows = [
        [m, summarise(res[m]["ssem"]), summarise(res[m]["ssem k++"]), summarise(em)] for m in ms
    ]
    table(f"C. n = {n}, k = 2, epsilon = 1: median cost vs m (thesis Fig. 8.3c/d)", header, rows)


def table_d(R, ns):
    header = ["n", "ssemauto (s)", "em (s)", "gupta (s)", "em / ssemauto"]
    rows = []
    for n in ns:
        t = {"ssemauto": [], "em": [], "gupta": []}
        for rep in range(R):
            V, X, _ = instance(n, 11000 + rep)
            t0 = time.perf_counter()
            SubsampledExpMedian(epsilon=1.0, candidates=V, random_state=rep).fit(X)
            t["ssemauto"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            SubsampledExpMedian(epsilon=1.0, candidates=V, n_candidates=None, random_state=rep).fit(
                X
            )
            t["em"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            D = cdist(X, V)
            gupta_local_search(
                D,
                2,
                epsilon=1.0,
                sensitivity=float(cdist(V, V).max()),
                rng=np.random.default_rng(rep),
            )
            t["gupta"].append(time.perf_counter() - t0)
        mins = {key: min(v) for key, v in t.items()}
        rows.append(
            [
                n,
                f"{mins['ssemauto']:.4f}",
                f"{mins['em']:.4f}",
                f"{mins['gupta']:.4f}",
                f"{mins['em'] / mins['ssemauto']:.0f}x",
            ]
        )
    table("D. k = 2, epsilon = 1: minimum wall time per fit (thesis Fig. 8.5)", header, rows)


# --------------------------------------------------------------------------- table E
# SubsampledExpMedian from a user's defaults against diffprivlib's KMeans

DPL_PYTHON = os.environ.get("DPL_PYTHON", "/tmp/dplvenv/bin/python")

_DPL_SCRIPT = """
import sys, warnings, numpy as np
warnings.simplefilter("ignore")
from diffprivlib.models import KMeans
X = np.load(sys.argv[1]); epsilons = [float(e) for e in sys.argv[2].split(",")]
seeds = [int(s) for s in sys.argv[3].split(",")]; k = int(sys.argv[4])
out = np.full((len(epsilons), len(seeds), k, X.shape[1]), np.nan)
for i, e in enumerate(epsilons):
    for j, s in enumerate(seeds):
        km = KMeans(n_clusters=k, epsilon=e, bounds=(np.zeros(X.shape[1]), np.ones(X.shape[1])),
                    random_state=s).fit(X)
        out[i, j] = km.cluster_centers_
np.save(sys.argv[5], out)
"""


def diffprivlib_centres(X, epsilons, seeds, k):
    """diffprivlib 0.6.6 KMeans centres, run in a venv with a scikit-learn it supports.

    Returns an array (len(epsilons), len(seeds), k, d), or None when the venv is missing.
    """
    if not os.path.exists(DPL_PYTHON):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        xin, out = os.path.join(tmp, "X.npy"), os.path.join(tmp, "C.npy")
        np.save(xin, X)
        args = [",".join(map(str, epsilons)), ",".join(map(str, seeds)), str(k), out]
        subprocess.run([DPL_PYTHON, "-c", _DPL_SCRIPT, xin, *args], check=True)
        return np.load(out)


def mean_l1(X, C):
    """Mean L1 distance of the rows of ``X`` to the nearest row of ``C``."""
    return float(cdist(X, C, metric="cityblock").min(axis=1).mean())


def l1_kmedians(X, C, n_iter=50):
    """Non-private L1 k-medians (Lloyd with coordinate-wise medians) from centres ``C``."""
    C = C.copy()
    for _ in range(n_iter):
        lab = cdist(X, C, metric="cityblock").argmin(axis=1)
        new = np.array(
            [np.median(X[lab == j], axis=0) if np.any(lab == j) else C[j] for j in range(len(C))]
        )
        if np.allclose(new, C):
            break
        C = new
    return C


def blobs(n, seed, k=3, d=3, sd=0.08):
    """Well-separated Gaussian blobs clipped to [0, 1]^d (centres fixed, data per seed)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.25, 0.25, 0.3], [0.75, 0.3, 0.7], [0.4, 0.75, 0.5]])[:k, :d]
    return np.clip(centres[rng.integers(k, size=n)] + rng.normal(0, sd, (n, d)), 0, 1)


def public_tables():
    """Package-shipped tables with n >= 5,000, numeric columns mapped onto [0, 1] by
    bounds from the codebook (``statsmodels.api.datasets.<name>.NOTE``) or, where it
    gives none, by a declared cap (values above it are clipped): never read off the data.

    * randhie (20,190 rows): lncoins = ln(coinsurance + 1) with coinsurance in 0..100
      (codebook), so [0, ln 101]; ln(1 + mdvis), MD visits capped at a declared 100 a
      year, so [0, ln 101]; disea, the number of chronic diseases, declared cap 100;
      physlm, 0/1.
    * fair (6,366 rows): rate_marriage 1..5, religious 1..4, educ 9..20 (codebook); age
      (16, 60), yrs_married (0, 40) and children (0, 10), declared caps.
    """
    out = []
    r = statsmodels_table("randhie")
    if r is not None:
        ln101 = math.log(101.0)
        R = np.column_stack(
            [
                r["lncoins"] / ln101,
                np.log1p(r["mdvis"].clip(0, 100)) / ln101,
                r["disea"].clip(0, 100) / 100.0,
                r["physlm"],
            ]
        )
        out.append(("randhie (20,190 x 4)", np.clip(R, 0, 1)))
    f = statsmodels_table("fair")
    if f is not None:
        cols = [
            ("rate_marriage", 1, 5),
            ("religious", 1, 4),
            ("educ", 9, 20),
            ("age", 16, 60),
            ("yrs_married", 0, 40),
            ("children", 0, 10),
        ]
        F = np.column_stack([(f[c].clip(lo, hi) - lo) / (hi - lo) for c, lo, hi in cols])
        out.append(("fair (6,366 x 6)", F))
    return out


def e_datasets(quick):
    """(name, X in [0, 1]^d by public bounds, varies with seed, values of k)."""
    from sklearn.datasets import load_digits, load_iris

    digits = load_digits().data / 16.0  # public pixel range 0..16
    iris = load_iris().data / 8.0  # declared public range 0..8 cm
    sets = [
        ("blobs n=12,588", lambda s: blobs(12_588, s), (3,)),
        ("blobs n=5,000", lambda s: blobs(5_000, s), (3,)),
    ]
    if quick:
        sets = [("blobs n=2,000", lambda s: blobs(2_000, s), (3,))]
    for name, X in public_tables():
        sets.append((name, lambda s, X=X: X, (3, 5)))
    sets += [
        ("digits (1,797 x 64, /16)", lambda s: digits, (3,)),
        ("iris (150 x 4, /8)", lambda s: iris, (3,)),
    ]
    return sets


def table_e(seeds, epsilons=(0.1, 1.0, 10.0), quick=False):
    """Mean L1 distance to the nearest of k centres, mean over seeds (lower is better)."""
    from sklearn.cluster import KMeans

    header = [
        "data",
        "k",
        "epsilon",
        "k-means",
        "L1 k-medians",
        "SSEM (L1)",
        "SSEM (default)",
        "diffprivlib KMeans",
        "SSEM (L1) / k-means",
        "diffprivlib / k-means",
        "s per SSEM fit",
    ]
    rows = []
    t_start = time.perf_counter()
    for name, make, ks in e_datasets(quick):
        for k in ks:
            rows += _table_e_rows(name, make, k, seeds, epsilons, KMeans)
    table(
        f"E. mean L1 distance to the nearest of k centres, mean over {len(seeds)} seeds "
        "(SubsampledExpMedian from k, epsilon and bounds=(0, 1) alone vs diffprivlib 0.6.6 "
        f"KMeans; {time.perf_counter() - t_start:.0f} s, load average "
        f"{os.getloadavg()[0]:.1f}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')})",
        header,
        rows,
    )


def _table_e_rows(name, make, k, seeds, epsilons, KMeans):
    base, kmed = [], []
    for s in seeds:
        X = make(s)
        km = KMeans(n_clusters=k, n_init=10, random_state=s).fit(X)
        base.append(mean_l1(X, km.cluster_centers_))
        kmed.append(mean_l1(X, l1_kmedians(X, km.cluster_centers_)))
    dpl = {}
    for s in seeds:  # one subprocess per seed keeps the data of that seed
        C = diffprivlib_centres(make(s), list(epsilons), [s], k)
        if C is not None:
            dpl[s] = C[:, 0]
    rows = []
    for i, eps in enumerate(epsilons):
        l1, dflt, times, dp = [], [], [], []
        for s in seeds:
            X = make(s)
            t0 = time.perf_counter()
            est = SubsampledExpMedian(
                n_clusters=k, epsilon=eps, bounds=(0, 1), metric="manhattan", random_state=s
            ).fit(X)
            times.append(time.perf_counter() - t0)
            l1.append(mean_l1(X, est.cluster_centers_))
            est = SubsampledExpMedian(n_clusters=k, epsilon=eps, bounds=(0, 1), random_state=s)
            dflt.append(mean_l1(X, est.fit(X).cluster_centers_))
            if s in dpl:
                dp.append(mean_l1(X, dpl[s][i]))
        rows.append(
            [
                name,
                k,
                f"{eps:g}",
                f"{np.mean(base):.4f}",
                f"{np.mean(kmed):.4f}",
                f"{np.mean(l1):.4f} (max {np.max(l1):.4f})",
                f"{np.mean(dflt):.4f}",
                f"{np.mean(dp):.4f} (max {np.max(dp):.4f})" if dp else "(no venv)",
                f"{np.mean(l1) / np.mean(base):.3f}",
                f"{np.mean(dp) / np.mean(base):.3f}" if dp else "",
                f"{np.mean(times):.2f}",
            ]
        )
        print(rows[-1], flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument(
        "--table", default="ABCDE", help="which tables to run, e.g. E (default: all)"
    )
    parser.add_argument("--seeds", type=int, default=5, help="seeds of table E")
    args = parser.parse_args(argv)
    R = args.replicates
    t0 = time.perf_counter()
    small = args.quick
    if "A" in args.table:
        table_a(R, [100] if small else [100, 1000])
    if "B" in args.table:
        table_b(R, 200, [2, 4]) if small else table_b(R, 1000, [2, 4, 8, 16])
    if "C" in args.table:
        ms = [1, 10, 100, 1000] if small else [1, 3, 10, 30, 100, 300, 1000, 3000]
        table_c(R, 200 if small else 1000, ms)
    if "D" in args.table:
        table_d(2, [100, 200]) if small else table_d(3, [100, 300, 1000])
    if "E" in args.table:
        table_e(list(range(2 if small else args.seeds)), quick=small)
    print(f"\n(total {time.perf_counter() - t0:.0f} s, {R} replicates)")


if __name__ == "__main__":
    main()
