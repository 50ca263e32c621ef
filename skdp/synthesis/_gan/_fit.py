"""From the estimator's parameters to trained networks (plain values, no estimator).

:func:`check_params` checks what the parameter constraints cannot express;
:func:`train_networks` builds the networks, runs the DP-SGD loops of
:mod:`skdp.synthesis._gan._training` and the DP checkpoint selection.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from skdp.synthesis._gan._checkpoint import checkpoint_steps, select_checkpoints
from skdp.synthesis._gan._encoding import BinnedEncoder, softmax_blocks
from skdp.synthesis._gan._marginals import calibrate_generators

__all__ = [
    "check_params",
    "learning_rates",
    "max_grad_norm",
    "n_critic",
    "parameter_counts",
    "step_counts",
    "train_networks",
    "training_config",
]

#: Adam's betas of every network, fixed (Radford et al. 2016; Beaulieu-Jones et al. 2019).
BETAS = (0.5, 0.999)
#: Default Adam learning rate of each network (one critic step per generator step: see
#: :func:`n_critic`; measured in ``benchmarks/gan.py``).
_LEARNING_RATES = {"generator": 1e-3, "critic": 1e-3, "autoencoder": 1e-3}
#: Default clipping norm of the WGAN critic, in units of ``weight_clip``.
WGAN_CLIP_PER_WEIGHT_CLIP = 5.0


def n_critic(params):
    """Critic steps per generator step: ``n_critic``, or 1 (``None``)."""
    return int(params["n_critic"] or 1)


def max_grad_norm(params, module="critic"):
    """The clipping norm ``C`` of ``module`` (``"critic"`` or ``"autoencoder"``):
    ``max_grad_norm``, or (``None``) ``5 * weight_clip`` for the weight-clipped WGAN
    critic (whose per-record gradients are of about that size) and 1.0 otherwise (the
    autoencoder's reconstruction gradients are not limited by the critic's weight
    clipping)."""
    if params["max_grad_norm"] is not None:
        return float(params["max_grad_norm"])
    wgan_critic = module == "critic" and params["loss"] == "wgan"
    if wgan_critic and params["weight_clip"] is not None:
        return WGAN_CLIP_PER_WEIGHT_CLIP * float(params["weight_clip"])
    return 1.0


def learning_rates(value):
    """``{"generator", "critic", "autoencoder"}`` rates from ``learning_rate``.

    ``None``: the defaults; a float: that rate for every network; a dict: the named
    networks' rates, the others at their defaults.
    """
    if value is None:
        return dict(_LEARNING_RATES)
    if not isinstance(value, dict):
        return {k: float(value) for k in _LEARNING_RATES}
    unknown = set(value) - set(_LEARNING_RATES)
    if unknown:
        raise ValueError(
            f"learning_rate keys must be among {sorted(_LEARNING_RATES)}, got {sorted(unknown)}"
        )
    rates = {**_LEARNING_RATES, **value}
    for k, v in rates.items():
        if isinstance(v, bool) or not isinstance(v, Real) or not (0 < v < math.inf):
            raise ValueError(f"learning_rate[{k!r}] must be a positive finite number")
    return {k: float(v) for k, v in rates.items()}


def check_params(params):
    """``ValueError`` for parameter combinations the constraints cannot express."""
    if (
        math.isinf(params["epsilon"])
        and params["noise_multiplier"] is not None
        and params["noise_multiplier"] > 0
    ):
        raise ValueError("noise_multiplier must be None when epsilon=inf (no privacy)")
    if params["checkpoint_selection"] is not None and params["conditional"] != "acgan":
        raise ValueError("checkpoint_selection needs conditional='acgan' (labels)")
    if params["feature_shape"] is not None:
        fs = tuple(params["feature_shape"])
        if len(fs) != 2 or not all(isinstance(v, Integral) and v >= 1 for v in fs):
            raise ValueError("feature_shape must be (channels, length) positive integers")
    learning_rates(params["learning_rate"])


#: Expected passes over the data of the default critic and autoencoder step counts.
CRITIC_EPOCHS, AUTOENCODER_EPOCHS = 50, 10
#: Per-record passes of one critic step (real rows, fake rows, generator step) in the
#: compute term of the default step count.
GAN_STEP_COST = 3.0
#: The default expected batch is this many times the shared DP-SGD default (fewer,
#: larger steps at the same expected passes and compute) when that still leaves at
#: least :data:`MIN_LARGE_BATCH_STEPS` critic steps for the 50 expected passes; else
#: the shared default (measured in ``doc/benchmarks_synthesis.rst``: on a few hundred
#: rows the larger batch left 100 steps and the DP AC-GAN's label relation was lost).
BATCH_FACTOR = 4
MIN_LARGE_BATCH_STEPS = 300


def default_batch(n):
    """The default expected batch for ``n`` units (public): :data:`BATCH_FACTOR` times
    :func:`skdp.accounting._schedule.default_batch_size` (at most ``n``) when the 50
    expected passes then take at least :data:`MIN_LARGE_BATCH_STEPS` steps, else the
    shared default."""
    from skdp.accounting._schedule import default_batch_size

    base = default_batch_size(n)
    big = min(int(n), BATCH_FACTOR * base)
    return big if math.ceil(CRITIC_EPOCHS * n / big) >= MIN_LARGE_BATCH_STEPS else base


def parameter_counts(encoder, classes, params):
    """``{"gan": critic + generator parameters, "autoencoder": ...}`` of the networks a
    fit builds (public: they depend on the schema and the parameters only). Built under a
    forked torch RNG, so the global stream is left as it was."""
    import torch

    from skdp.utils._torch import n_parameters

    with torch.random.fork_rng(devices=[]):
        nets = _networks(params, encoder.n_encoded_features_, softmax_blocks(encoder), classes)
    return {
        # the critic's per-record gradients (real and fake rows) dominate a step's work;
        # the generator takes one batched backward pass
        "gan": 2 * n_parameters(nets["critic"]) + n_parameters(nets["generator"]),
        "autoencoder": n_parameters(nets["autoencoder"]) if nets["autoencoder"] else 0,
    }


def _networks(params, D, blocks, classes):
    """The critic, generator and optional autoencoder for the GAN's parameters."""
    from skdp.synthesis._gan._nets import build_networks

    return build_networks(
        D,
        blocks,
        0 if classes is None else len(classes),
        architecture=params["architecture"],
        feature_shape=params["feature_shape"],
        hidden_size=params["hidden_size"],
        autoencoder=params["autoencoder"],
        code_dim=params["code_dim"],
        latent_dim=params["latent_dim"],
        label_embedding=params["label_embedding"],
        critic_bias=params["loss"] != "wgan",  # WGAN: the head's bias cancels out
    )


def discrete_mask(encoder):
    """Coordinates of the encoded row that hold 0/1 indicators (binary, one-hot, bins)."""
    if isinstance(encoder, BinnedEncoder):
        return np.asarray(encoder.discrete_, dtype=bool)
    discrete = np.zeros(encoder.n_encoded_features_, dtype=bool)
    for c in encoder.schema:
        if c.kind in ("binary", "categorical"):
            discrete[encoder.slices_[c.name]] = True
    return discrete


def step_counts(params, n, *, n_params=None, rows_per_unit=1):
    """``(batch_size, q, T_ae, T_critic)`` from public quantities only.

    ``n`` counts the sampled units: rows, or patients of a patient-level fit, whose
    per-step work counts ``rows_per_unit = k`` rows (a larger step cost in the compute
    term).

    ``batch_size=None``: :func:`default_batch` (about ``4 sqrt(8 n)`` from about
    ``n = 2,600``, else about ``sqrt(8 n)``); ``q = min(1, batch_size / n)``.
    ``n_iter=None``:
    :func:`~skdp.accounting._schedule.default_n_iter` with 50 expected passes and the
    work count ``n_params["gan"]`` (``2 P_critic + P_generator``, see
    :func:`parameter_counts`; step cost 3); ``n_iter_autoencoder=None``: 10 expected
    passes and the autoencoder's count.
    Without ``n_params``: the expected passes alone, ``ceil(passes / q)``.
    """
    from skdp.accounting._schedule import default_n_iter

    batch = params["batch_size"] or default_batch(n)
    q = min(1.0, float(batch) / n)

    def steps(given, epochs, work, step_cost=1.0):
        if given:
            return given
        if n_params is None:
            return math.ceil(epochs / q)
        return default_n_iter(
            n, batch, epochs=epochs, n_parameters=n_params[work], step_cost=step_cost
        )

    k = int(rows_per_unit)
    t_critic = steps(params["n_iter"], CRITIC_EPOCHS, "gan", GAN_STEP_COST * k)
    t_ae = 0
    if params["autoencoder"]:
        t_ae = steps(params["n_iter_autoencoder"], AUTOENCODER_EPOCHS, "autoencoder", 1.0 * k)
    return int(batch), q, int(t_ae), int(t_critic)


#: ``aux_loss_weight="auto"`` per ``loss``: the non-saturating GAN's cross-entropy and the
#: auxiliary cross-entropy share each record's clipped critic gradient (their shares were
#: not measured); 0.1 gave the better TSTR in 10 of 10 cells and 2-way TV in 7 of 10 on
#: five tables (``doc/benchmarks_synthesis.rst``); the WGAN keeps the AC-GAN's weight 1.
AUTO_AUX_LOSS_WEIGHT = {"gan": 0.1, "wgan": 1.0}


def aux_loss_weight(params):
    """The auxiliary classifier's weight: the given number, or the ``"auto"`` rule
    (:data:`AUTO_AUX_LOSS_WEIGHT`, from ``loss`` only)."""
    weight = params["aux_loss_weight"]
    if isinstance(weight, str):  # "auto" (validated)
        return AUTO_AUX_LOSS_WEIGHT[params["loss"]]
    return float(weight)


def training_config(params):
    """The :class:`~skdp.synthesis._gan._training.TrainingConfig` of the parameters."""
    from skdp.synthesis._gan._training import TrainingConfig

    lr = learning_rates(params["learning_rate"])
    return TrainingConfig(
        loss=params["loss"],
        n_critic=n_critic(params),
        weight_clip=params["weight_clip"],
        aux_loss_weight=aux_loss_weight(params),
        clip_fake_gradients=bool(params["clip_fake_gradients"]),
        latent_dim=int(params["latent_dim"]),
        latent_distribution=params["latent_distribution"],
        max_grad_norm=max_grad_norm(params),
        max_grad_norm_autoencoder=max_grad_norm(params, "autoencoder"),
        lr_generator=lr["generator"],
        lr_critic=lr["critic"],
        lr_autoencoder=lr["autoencoder"],
        betas=BETAS,
        accountant=params["accountant"],
        delta=float(params["delta"]),
    )


def train_networks(Z, codes, prior, encoder, classes, params, *, q, sigma, private, t_ae,
                   t_critic, eps_sel, streams, units=None, sensitivity=1.0,
                   secure_mode=False, marginals=None):  # fmt: skip
    """Networks, training loops and checkpoint selection (torch).

    Parameters
    ----------
    Z : ndarray of shape (n, width)
        The encoded private rows.
    codes, prior, classes : ndarray or None
        Label codes, class prior and classes (conditional models).
    encoder : TabularEncoder
    params : dict
        The estimator's ``get_params(deep=False)`` (plain values).
    q, sigma : float
        Sampling rate and noise multiplier of every DP-SGD step.
    private : bool
    t_ae, t_critic : int
        Autoencoder and critic steps.
    eps_sel : float
        Budget of checkpoint selection.
    streams : dict of numpy.random.Generator
    units : (patient codes, k) or None, default=None
        A patient-level fit (:mod:`skdp.synthesis._gan._patients`); ``None`` per row.
    sensitivity : float, default=1.0
        Of each checkpoint utility (the plan's count sensitivity: 1, or ``k``).
    secure_mode : bool, default=False
        Checkpoint selection's noise: exact, from ``os.urandom``.
    marginals : (blocks, targets) or None, default=None
        The noisy 1-way marginals (:mod:`skdp.synthesis._gan._marginals`): every
        returned generator's output is calibrated to them (post-processing).

    Returns
    -------
    run : GANTraining
    generators : list of torch.nn.Module
    selected : list of (int, str) or None
        Every returned module is frozen in eval mode.
    """
    import torch

    from skdp.synthesis._gan._training import GANTraining
    from skdp.training._fit_context import freeze, torch_fit
    from skdp.utils._torch import n_parameters

    sel = params["checkpoint_selection"]
    at = checkpoint_steps(t_critic, sel.n_checkpoints) if sel is not None else ()
    if sel is not None and len(at) < sel.top_k:  # public: refused before any training
        raise ValueError(
            f"checkpoint_selection needs at least top_k={sel.top_k} distinct checkpoints, "
            f"but {t_critic} critic steps give {len(at)}: raise n_iter"
        )
    D = encoder.n_encoded_features_
    blocks = softmax_blocks(encoder)
    discrete = discrete_mask(encoder)  # BCE in the autoencoder loss, the rest MSE
    conditional = classes is not None
    config = training_config(params)
    # the networks are initialised by torch's global generator, seeded from "init"
    with torch_fit(params, streams, seed="init") as env:
        device, tdtype = env.device, env.dtype
        nets = _networks(params, D, blocks, classes)
        nets = {k: (env.to(v) if v is not None else None) for k, v in nets.items()}
        rows = int(params["batch_size"]) * (1 if units is None else int(units[1]))
        env.set_threads(min(rows, len(Z)) * n_parameters(*nets.values()))
        groups, weights = _patient_terms(units, env)
        run = GANTraining(
            nets,
            env.tensor(Z),
            torch.as_tensor(codes, dtype=torch.long, device=device) if conditional else None,
            torch.as_tensor(prior, dtype=tdtype, device=device) if conditional else None,
            torch.as_tensor(discrete),
            config=config,
            q=q,
            sigma=sigma,
            private=private,
            device=device,
            dtype=tdtype,
            streams=streams,
            groups=groups,
            weights=weights,
        )
        run.train_autoencoder(t_ae, config.lr_autoencoder)
        checkpoints = run.train_gan(t_critic, at)
        selected = None
        if sel is not None:
            gens, selected = select_checkpoints(
                checkpoints,
                run.generate,
                Z,
                codes,
                eps_sel,
                streams["selection"],
                scorers=sel.scorers,
                top_k=sel.top_k,
                n_samples=sel.n_samples,
                sensitivity=sensitivity,
                secure_mode=secure_mode,
            )
        else:
            gens = [nets["generator"]]
        if marginals is not None:
            calibrate_generators(gens, run, *marginals, streams["marginals"])
    freeze(*gens, nets["decoder"])
    return run, gens, selected


def _patient_terms(units, env):
    """``(RecordGroups, per-row weights k / |p|)`` of a patient-level fit, or
    ``(None, None)`` (:mod:`skdp.synthesis._gan._patients`)."""
    if units is None:
        return None, None
    from skdp.synthesis._gan._patients import per_patient_weights
    from skdp.training import RecordGroups

    codes, k = units
    return RecordGroups(codes, k), env.tensor(per_patient_weights(codes, k))
