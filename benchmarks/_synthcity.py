"""synthcity's DP deep generators as peers of ``benchmarks/synthesizers.py``: ``sc_dpgan``
(synthcity's ``dpgan``: a GAN whose discriminator is trained with DP-SGD through
opacus) and ``sc_pategan`` (``pategan``: PATE-GAN, Jordon, Yoon & van der Schaar 2019).

synthcity pins ``torch < 2.3`` and ``numpy < 2``, which conflict with skdp's, so each fit
runs in its own virtual environment (``--synthcity-python``; default
``/tmp/scvenv/bin/python`` when it exists), one torch thread, as a subprocess::

    python -m venv /tmp/scvenv
    /tmp/scvenv/bin/pip install --index-url https://download.pytorch.org/whl/cpu torch==2.2.2
    /tmp/scvenv/bin/pip install synthcity==0.2.12 "numpy<2" opacus==1.4.1

(opacus 1.5 needs ``torch.nn.RMSNorm``, absent from torch 2.2.) Each peer runs at its
defaults, ``delta = 1e-5``, except the number of iterations (``--sc-iter``; their
defaults: 2,000 for ``dpgan``, 200 for ``pategan``). synthcity fits its own encoder on
the training rows (a Bayesian Gaussian mixture per continuous column, the category set
of each categorical one) without privacy, and ``dpgan`` may stop early on a metric of
the training rows: both only help the peers against skdp, whose estimators get
declared bounds and categories and spend their whole budget on the rows. The samples
are clipped to the declared bounds and integer columns rounded, as the smartnoise
peers' are.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import numpy as np
import pandas as pd

SCVENV = "/tmp/scvenv/bin/python"
SC_PEERS = {"sc_dpgan": "dpgan", "sc_pategan": "pategan"}

SC_SCRIPT = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np
import pandas as pd
import torch
cfg = json.loads(sys.argv[1])
torch.set_num_threads(1)
np.random.seed(cfg["seed"])
torch.manual_seed(cfg["seed"])
from synthcity.plugins import Plugins
df = pd.read_csv(cfg["train"])
for c in cfg["categorical"]:
    df[c] = df[c].astype(str)
plugin = Plugins().get(cfg["plugin"], epsilon=cfg["epsilon"], delta=cfg["delta"],
                       random_state=cfg["seed"], workspace=cfg["workspace"], **cfg["options"])
plugin.fit(df)
plugin.generate(count=len(df)).dataframe().to_csv(cfg["out"], index=False)
"""


def run_synthcity(python, name, train, eps, bounds, cats, seed, delta, timeout, n_iter=None):
    """One synthcity fit in its venv; the synthetic rows in ``train``'s columns and kinds."""
    with tempfile.TemporaryDirectory() as d:
        df = train.copy()
        bools = [c for c in df.columns if df[c].dtype == bool]
        for c in bools:
            df[c] = df[c].astype(int)
        path, out = os.path.join(d, "train.csv"), os.path.join(d, "out.csv")
        df.to_csv(path, index=False)
        cfg = dict(
            plugin=SC_PEERS[name],
            seed=int(seed),
            epsilon=float(eps),
            delta=float(delta),
            train=path,
            out=out,
            workspace=os.path.join(d, "workspace"),
            categorical=[c for c in df.columns if c not in bounds],
            options={} if n_iter is None else {"n_iter": int(n_iter)},
        )
        subprocess.run(
            [python, "-c", SC_SCRIPT, json.dumps(cfg)],
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
        syn[c] = syn[c].clip(lo, hi)
        if np.issubdtype(train[c].dtype, np.integer):
            syn[c] = np.rint(syn[c]).astype(train[c].dtype)
    return syn[train.columns]
