"""DPILPClassifier on a simulated relational task (Lantz 2016 §6.6, spec ``lantz.md`` §4.4).

The thesis learns eastbound/westbound trains from Muggleton's (1995) generator at
epsilon = 1. Here a trains-like generator draws each train with 2-4 cars, each car with
a length (short/long), body shape (5 values), roof (5 values, "none" = open),
wheels (2/3) and load shape (4 values). Trains are propositionalised per train (one
individual per row, which keeps the neighbour relation "one train"): 19 binary atoms
"some car of the train has property p", plus ``closed`` (some car has a roof) and
``many_cars`` (3 or more cars). The label is a planted theory over these atoms
(conjunctions of ``length`` atoms, a disjunction for several clauses), drawn at random
per replicate (atoms weighted by frequency^length) among theories whose positive
rate lies in [0.3, 0.7] so that the naive
"majority" guess is weak. The non-private learner (epsilon = inf) recovers the theory
exactly, as in the thesis.

Tables (accuracy on 5,000 fresh test trains, mean over replicates; epsilon = 1):

A (Fig. 6.2)   one clause of length l in {1, 2, 3, 4}: smart vs naive search vs n.
B (Fig. 6.3a)  c clauses of 3 atoms, c in {1, 2, 3}, vs one clause of 6 atoms, vs n.
C (Fig. 6.3b)  error reduction over the majority guess as the number of clauses grows.

Run: ``python benchmarks/ilp.py [--replicates 20] [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from skdp.ilp import DPILPClassifier

LENGTH = ["short", "long"]
SHAPE = ["rectangle", "u_shaped", "bucket", "hexagon", "ellipse"]
ROOF = ["none", "flat", "jagged", "peaked", "arc"]
LOAD = ["circle", "triangle", "rectangle_load", "hexagon_load"]
ATOMS = (
    [f"has_{v}" for v in LENGTH]
    + [f"has_{v}" for v in SHAPE]
    + [f"has_{v}_roof" for v in ROOF[1:]]
    + ["has_three_wheels"]
    + [f"has_{v}" for v in LOAD]
    + ["closed", "many_cars"]
)


def trains(n, rng):
    """Propositionalised random trains: (n, len(ATOMS)) 0/1 matrix."""
    X = np.zeros((n, len(ATOMS)), dtype=np.int8)
    n_cars = rng.integers(2, 5, size=n)
    col = {a: j for j, a in enumerate(ATOMS)}
    for c in range(4):
        present = n_cars > c
        length = rng.integers(0, 2, size=n)
        shape = rng.integers(0, 5, size=n)
        roof = rng.integers(0, 5, size=n)
        wheels = rng.integers(2, 4, size=n)
        load = rng.integers(0, 4, size=n)
        rows = np.nonzero(present)[0]
        X[rows, [col[f"has_{LENGTH[v]}"] for v in length[rows]]] = 1
        X[rows, [col[f"has_{SHAPE[v]}"] for v in shape[rows]]] = 1
        roofed = rows[roof[rows] > 0]
        X[roofed, [col[f"has_{ROOF[v]}_roof"] for v in roof[roofed]]] = 1
        X[roofed, col["closed"]] = 1
        X[rows[wheels[rows] == 3], col["has_three_wheels"]] = 1
        X[rows, [col[f"has_{LOAD[v]}"] for v in load[rows]]] = 1
    X[:, col["many_cars"]] = n_cars >= 3
    return X


def label(X, theory):
    return np.any([X[:, list(c)].all(axis=1) for c in theory], axis=0).astype(int)


def planted_theory(n_clauses, length, rng, pool):
    """A random theory with positive rate in [0.3, 0.7] on a public reference sample.

    Atoms are drawn with probability proportional to their frequency to the power
    ``length`` so that long conjunctions are not almost always false.
    """
    w = pool.mean(axis=0) ** length
    w /= w.sum()
    for _ in range(10_000):
        theory = [
            tuple(sorted(rng.choice(len(ATOMS), size=length, replace=False, p=w)))
            for _ in range(n_clauses)
        ]
        rate = label(pool, theory).mean()
        if 0.3 <= rate <= 0.7:
            return theory
    raise RuntimeError("no balanced theory found")


def run(n, n_clauses, length, search, rep, *, epsilon=1.0, learn_length=None):
    rng = np.random.default_rng(rep)
    pool = trains(5000, rng)
    theory = planted_theory(n_clauses, length, rng, pool)
    X, Xt = trains(n, rng), trains(5000, rng)
    y, yt = label(X, theory), label(Xt, theory)
    clf = DPILPClassifier(
        epsilon=epsilon,
        n_clauses=n_clauses,
        max_clause_length=learn_length or length,
        search=search,
        random_state=rep,
    ).fit(X, y)
    acc = float((clf.predict(Xt) == yt).mean())
    majority = float(max(yt.mean(), 1 - yt.mean()))
    return acc, majority


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


def table_a(R, ns, lengths):
    header = ["clause length", "n", "smart", "naive", "eps=inf", "majority"]
    rows = []
    for length in lengths:
        for n in ns:
            out = {k: [] for k in ("smart", "naive", "inf", "maj")}
            for rep in range(R):
                for search in ("smart", "naive"):
                    acc, maj = run(n, 1, length, search, rep)
                    out[search].append(acc)
                out["inf"].append(run(n, 1, length, "smart", rep, epsilon=np.inf)[0])
                out["maj"].append(maj)
            rows.append([length, n] + [f"{np.mean(out[k]):.3f}" for k in out])
    table("A. one clause, epsilon = 1: test accuracy vs n (thesis Fig. 6.2)", header, rows)


def table_b(R, ns):
    header = ["target", "n", "smart", "eps=inf", "majority"]
    rows = []
    settings = [
        ("1 x 3 atoms", 1, 3, None),
        ("2 x 3 atoms", 2, 3, None),
        ("3 x 3 atoms", 3, 3, None),
        ("1 x 6 atoms", 1, 6, None),
    ]
    reductions = {}
    for name, c, length, learn in settings:
        for n in ns:
            acc, inf, maj = [], [], []
            for rep in range(R):
                a, m = run(n, c, length, "smart", rep, learn_length=learn)
                acc.append(a)
                maj.append(m)
                inf.append(run(n, c, length, "smart", rep, epsilon=np.inf, learn_length=learn)[0])
            rows.append(
                [name, n, f"{np.mean(acc):.3f}", f"{np.mean(inf):.3f}", f"{np.mean(maj):.3f}"]
            )
            reductions[(name, n)] = 100 * (1 - (1 - np.mean(acc)) / (1 - np.mean(maj)))
    table("B. several clauses, epsilon = 1: test accuracy vs n (thesis Fig. 6.3a)", header, rows)
    header = ["target"] + [f"n = {n}" for n in ns]
    rows = [[name] + [f"{reductions[(name, n)]:.0f} %" for n in ns] for name, *_ in settings]
    table(
        "C. error reduction over the majority guess, epsilon = 1 (thesis Fig. 6.3b)", header, rows
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.quick:
        table_a(args.replicates, [300, 3000], [2, 3])
        table_b(args.replicates, [3000])
    else:
        table_a(args.replicates, [100, 1000, 10_000, 100_000], [1, 2, 3, 4])
        table_b(args.replicates, [1000, 10_000, 100_000])
    print(f"\n(total {time.perf_counter() - t0:.0f} s, {args.replicates} replicates)")


if __name__ == "__main__":
    main()
