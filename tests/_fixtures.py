"""Plain helpers shared by several test files: fast estimator settings and simulated
tables (fixtures proper are in ``tests/conftest.py``).

Import them as ``from tests._fixtures import ...``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Fast DPGANSynthesizer settings: tiny nets, three critic steps, CPU float64, seeded.
#: A file that checks other step counts overrides ``n_iter`` / ``n_critic`` on top.
GAN_FAST = dict(
    hidden_size=8,
    latent_dim=4,
    code_dim=4,
    n_iter=3,
    batch_size=20,
    n_critic=1,
    device="cpu",
    dtype="float64",
    random_state=0,
)

#: Declared bounds and levels of :func:`clinical_frame`.
CLINICAL_BOUNDS = {"age": (18, 90), "bmi": (15.0, 50.0), "visits": (0, 9)}
CLINICAL_CATS = {"sex": ["F", "M"], "blood": ["A", "B", "AB", "O"]}


def clinical_frame(n=2000, seed=0):
    """A small 7-column clinical table with strong pairwise dependences (age, sex, BMI,
    blood group, smoker, a visit count and the outcome they depend on)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 85, size=n)
    outcome = rng.random(n) < 1 / (1 + np.exp(-(age - 60) / 8))
    return pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], size=n),
            "bmi": np.clip(rng.normal(22 + age / 10, 3), 15, 50),
            "blood": rng.choice(["A", "B", "AB", "O"], size=n, p=[0.4, 0.1, 0.05, 0.45]),
            "smoker": rng.random(n) < 0.3,
            "visits": np.clip(rng.poisson(1 + 6 * outcome), 0, 9),
            "outcome": outcome,
        }
    )


REGIONS = list("NSEWC")


def clinical_table(n, seed=0):
    """The 10-column mixed table of the collapse report (as ``benchmarks/marginal.py``'s
    ``clinical``): integer age, sex, BMI, smoker, blood pressure, a rare binary (diabetes,
    ~8 %), cholesterol, a 5-level region (one level ~10 %), a visit count and a rare
    outcome (~5 %). At n = 3,000 and seed 0 the GAN's old defaults returned an outcome
    that was 100 % one class and a constant diabetes column, even at ``epsilon=inf``."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    bmi = np.clip(rng.normal(24 + 0.05 * (age - 50), 4, n), 15, 50)
    smoker = rng.random(n) < 0.25
    sbp = np.clip(100 + 0.5 * age + 0.8 * (bmi - 25) + 5 * smoker + rng.normal(0, 10, n), 80, 220)
    diab = rng.random(n) < 1 / (1 + np.exp(-(bmi - 32) / 2))
    logit = -4 + 0.04 * (age - 50) + 0.03 * (sbp - 130) + 1.0 * smoker + 1.2 * diab
    outcome = rng.random(n) < 1 / (1 + np.exp(-logit))
    df = pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "bmi": bmi,
            "smoker": smoker,
            "sbp": sbp,
            "diabetes": diab,
            "chol": np.clip(rng.normal(5 + 0.02 * (age - 50) + 0.3 * diab, 1.0), 2, 10),
            "region": rng.choice(REGIONS, n, p=[0.3, 0.2, 0.2, 0.2, 0.1]),
            "visits": np.clip(rng.poisson(2 + 5 * outcome), 0, 9),
            "outcome": outcome,
        }
    )
    bounds = {
        "age": (18, 90),
        "bmi": (15.0, 50.0),
        "sbp": (80.0, 220.0),
        "chol": (2.0, 10.0),
        "visits": (0, 9),
    }
    return df, bounds, {"sex": ["F", "M"], "region": REGIONS}


def collapse_problems(real, syn, *, min_share=0.05):
    """Human-readable collapse findings (empty when there is none)."""
    problems = []
    for c in real.columns:
        r, s = real[c], syn[c]
        if r.nunique() > 1 and s.nunique() <= 1:
            problems.append(f"column {c!r} is constant")
        if r.dtype == bool or not pd.api.types.is_numeric_dtype(r):
            shares = r.value_counts(normalize=True)
            missing = [v for v, p in shares.items() if p >= min_share and not (s == v).any()]
            if missing:
                problems.append(f"column {c!r} lacks levels {missing}")
    return problems
