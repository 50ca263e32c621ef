"""The DP GAN synthesizer (:class:`~skdp.synthesis.DPGANSynthesizer`), one module per part.

* :mod:`._estimator`: parameters, ``fit`` orchestration and ``sample``;
* :mod:`._budget`: the epsilon split, one function per share;
* :mod:`._label_prior`: labels and the DP/uniform/public class prior;
* :mod:`._fit`: from the parameters to trained networks (plain values, no estimator);
* :mod:`._training`: the DP-SGD training loops (plain values in, no estimator);
* :mod:`._losses`: per-record losses;
* :mod:`._encoding`: the binned numeric encoding (public bins from the declared bounds);
* :mod:`._checkpoint`: DP checkpoint selection and its parameter object
  :class:`~skdp.synthesis.CheckpointSelection`;
* :mod:`._nets`: the torch networks; :mod:`._sampling`: ``sample``/``sample_labeled``,
  generation and decoding;
* :mod:`._presets`: the papers' configurations.

Importing this package does not import torch (the networks and loops are imported by
``fit``).
"""

from __future__ import annotations

from skdp.synthesis._gan._checkpoint import CheckpointSelection
from skdp.synthesis._gan._estimator import DPGANSynthesizer

__all__ = ["CheckpointSelection", "DPGANSynthesizer"]
