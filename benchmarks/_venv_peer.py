"""A peer synthesizer fitted in its own virtual environment (a subprocess with one torch
thread), for peers whose pinned dependencies conflict with skdp's: smartnoise-synth
(``synthesizers.py``) and synthcity (``_synthcity.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import numpy as np
import pandas as pd

#: the start of every peer script: ``cfg`` (its JSON argument), seeded numpy and torch
#: on one thread, the training rows as ``df``
PREAMBLE = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np
import pandas as pd
import torch
cfg = json.loads(sys.argv[1])
torch.set_num_threads(1)
np.random.seed(cfg["seed"])
torch.manual_seed(cfg["seed"])
df = pd.read_csv(cfg["train"])
"""


def fit_in_venv(python, script, train, bounds, cats, seed, timeout, clip=False, **cfg):
    """Run ``PREAMBLE + script`` with ``python`` on ``train`` (bools as 0/1) and read
    the rows it writes to ``cfg["out"]``, in ``train``'s columns and kinds: bools and
    categories restored, numeric columns clipped to their declared bounds where
    ``clip``, integer columns rounded. ``cfg`` gets ``seed``, ``train``, ``out``,
    ``workspace`` (a scratch folder), ``bounds`` and ``categorical`` besides the extra
    keywords."""
    with tempfile.TemporaryDirectory() as d:
        df = train.copy()
        bools = [c for c in df.columns if df[c].dtype == bool]
        for c in bools:
            df[c] = df[c].astype(int)
        path, out = os.path.join(d, "train.csv"), os.path.join(d, "out.csv")
        df.to_csv(path, index=False)
        cfg.update(
            seed=int(seed),
            train=path,
            out=out,
            workspace=os.path.join(d, "workspace"),
            bounds={c: [float(lo), float(hi)] for c, (lo, hi) in bounds.items()},
            categorical=[c for c in df.columns if c not in bounds],
        )
        subprocess.run(
            [python, "-c", PREAMBLE + script, json.dumps(cfg)],
            env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
            check=True,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        syn = pd.read_csv(out)
    for c in bools:
        syn[c] = np.rint(syn[c]).astype(int).astype(bool)
    for c in cats:
        syn[c] = syn[c].astype(str)
    for c, (lo, hi) in bounds.items():
        if clip:
            syn[c] = syn[c].clip(lo, hi)
        if np.issubdtype(train[c].dtype, np.integer):
            syn[c] = np.rint(syn[c]).astype(train[c].dtype)
    return syn[train.columns]
