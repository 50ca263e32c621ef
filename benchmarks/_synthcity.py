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
are clipped to the declared bounds (synthcity's encoder does not know them) and
integer columns rounded, as the smartnoise peers' are.
"""

from __future__ import annotations

from _venv_peer import fit_in_venv

SCVENV = "/tmp/scvenv/bin/python"
SC_PEERS = {"sc_dpgan": "dpgan", "sc_pategan": "pategan"}

SC_SCRIPT = r"""
from synthcity.plugins import Plugins
for c in cfg["categorical"]:
    df[c] = df[c].astype(str)
plugin = Plugins().get(cfg["plugin"], epsilon=cfg["epsilon"], delta=cfg["delta"],
                       random_state=cfg["seed"], workspace=cfg["workspace"], **cfg["options"])
plugin.fit(df)
plugin.generate(count=len(df)).dataframe().to_csv(cfg["out"], index=False)
"""


def run_synthcity(python, name, train, eps, bounds, cats, seed, delta, timeout, n_iter=None):
    """One synthcity fit in its venv; the synthetic rows in ``train``'s columns and kinds
    (clipped to the declared bounds)."""
    return fit_in_venv(
        python, SC_SCRIPT, train, bounds, cats, seed, timeout, clip=True,
        plugin=SC_PEERS[name], epsilon=float(eps), delta=float(delta),
        options={} if n_iter is None else {"n_iter": int(n_iter)},
    )  # fmt: skip
