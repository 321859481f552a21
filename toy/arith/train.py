r"""Part II's algorithms on the arithmetic toy model (:mod:`toy.arith.model`).

Every trainer has the book's one shape, ``train_<algo>(policy, cfg=None, seed=0) -> (policy,
history)``: it trains a copy of ``policy`` (an :class:`toy.arith.Model`, usually the base
``Model()``) on the training problems and evaluates on the test problems (keywords ``train=``,
``test=``; by default :func:`toy.arith.make_dataset`'s split). ``train_<algo>_seeds(policy, cfg,
seeds)`` runs several seeds and returns (the final models, the history stacked over seeds: arrays
shaped (seeds, ...)). Every history holds ``reward`` (each batch's mean reward):

- :func:`train_sft`  (:class:`SFTConfig`) fine-tuning on kept solutions, STaR's inner step.
- :func:`train_star` STaR (:class:`STaRConfig`): sample → keep what the verifier accepts →
  fine-tune from the *original* model → repeat; optional rationalization (a hint while
  sampling) and a coarse verifier.
- :func:`train_reinforce` (:class:`ReinforceConfig`) one policy-gradient step per batch, with the
  advantage ``algo`` of :func:`toy.rl.advantages` ("rft" = SFT on the correct samples,
  "baseline", "rloo", "grpo", ...) under REINFORCE's loss.
- :func:`train_grpo` (:class:`GRPOConfig`) GRPO with PPO clipping, μ epochs over each batch and
  the k3 KL term; DAPO's clip-higher (``eps_high``), dynamic sampling, token-level loss
  (``loss_type="dapo"``) and overlong shaping are fields of the config.

Every trainer *descends a loss*. The loss and its gradient with respect to the
log-probabilities come from :mod:`toy.rl` (:func:`toy.rl.policy_loss`,
:func:`toy.rl.advantages`, :func:`toy.rl.aggregate_weights`); the only calculus here is the
model's chain rule from ∂L/∂log π to Δ, :func:`toy.prob.log_softmax_table_grad`. Each public
function checks its arguments on every call (``toy._check_args.checked``). Shapes: B groups (problems) × G samples × L steps.
"""
from dataclasses import dataclass, replace

import numpy as np

from .. import parallel, rl
from .._check_args import (as_array, checked, flag, function, instance, integer, one_of, positive, real,
                           seed as check_seed)
from ..prob import log_softmax, log_softmax_table_grad
from .model import (Model, Problems, Samples, VERIFIERS, as_samples, draw_methods, execute, make_dataset,
                    pass1_exact, sample, step_entropy, verify)

__all__ = ["SFTConfig", "train_sft", "STaRConfig", "train_star", "train_star_seeds", "ReinforceConfig", "matched_advantages", "pg_step",
           "train_reinforce", "train_reinforce_seeds", "stacked", "GRPOConfig", "dapo_config", "reward_with_overlong",
           "grpo_step", "train_grpo", "train_grpo_seeds"]

# The loss aggregation (``toy.rl.aggregate_weights``): ``train_reinforce`` keeps REINFORCE's
# ("sum": an answer's steps summed) for every advantage, so that only the advantage differs between
# its runs; ``GRPOConfig.loss_type = None`` means ``toy.rl.DEFAULT_LOSS_TYPE["grpo"]``.
REINFORCE_LOSS = rl.DEFAULT_LOSS_TYPE["reinforce"]


def _check_start(policy, train, test, n_prompts=None):
    """The policy a trainer starts from, and its (train, test) problems (None: ``make_dataset()``'s)."""
    instance(policy, Model, "policy")
    if train is None or test is None:
        default = make_dataset()
        train, test = (default[0] if train is None else train), (default[1] if test is None else test)
    instance(train, Problems, "train"), instance(test, Problems, "test")
    if n_prompts is not None and n_prompts > len(train):
        raise ValueError(f"n_prompts must be <= the number of training problems {len(train)}, got {n_prompts}")
    return {"train": train, "test": test}


def _check_seeds(seeds):
    if isinstance(seeds, (str, dict)) or not np.iterable(seeds):
        raise ValueError(f"seeds must be a list of seeds (integers >= 0), got {seeds!r}")
    seeds = [check_seed(x, "seeds") for x in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    return seeds


def stacked(results):
    """(the final models, the histories stacked over seeds: arrays shaped (seeds, ...)) of a list of
    one ``(model, history)`` per seed: what every ``train_*_seeds`` trainer returns."""
    return [m for m, _ in results], {k: np.stack([h[k] for _, h in results]) for k in results[0][1]}


# --------------------------------------------------------------------------------------------
# STaR
# --------------------------------------------------------------------------------------------

@dataclass
class SFTConfig:
    steps: int = 30                  # full-batch gradient steps (a fixed budget, not a fit to convergence)
    lr: float = 0.2                  # learning rate of gradient descent on Δ
    n_problems: float = None         # the normaliser N of the loss (None: the number of kept solutions)

    def __post_init__(self):
        integer(self.steps, "steps", lo=0), positive(self.lr, "lr")
        if self.n_problems is not None:
            positive(self.n_problems, "n_problems")


def _check_train_sft(base, samples, cfg, keep):
    instance(base, Model, "base"), instance(samples, Samples, "samples")
    cfg = SFTConfig() if cfg is None else instance(cfg, SFTConfig, "cfg")
    keep = np.ones(samples.answer.shape) if keep is None else as_array(keep, "keep")
    if keep.shape != samples.answer.shape:
        raise ValueError(f"keep must have shape {samples.answer.shape}, got {keep.shape}")
    return {"cfg": cfg, "keep": keep}


@checked(_check_train_sft)
def train_sft(base, samples, cfg=None, keep=None):
    r"""Fine-tune a copy of ``base`` on the kept solutions: ``cfg.steps`` full-batch gradient steps
    descending the mean negative log-likelihood

    .. math:: L = -\frac1N\sum_{\text{kept } i}\sum_t \log\pi(a_{it}\mid c_{it}),\qquad
              \Delta \leftarrow \Delta - \eta\,\nabla_\Delta L

    ``keep`` (P, n) is 1 for a kept solution (None: all); N = the number of kept solutions (or
    ``cfg.n_problems``). A fixed budget of steps, not a fit to convergence: a context that is
    rare in the kept data moves little, whatever the total amount of data.
    """
    N = max(keep.sum(), 1.0) if cfg.n_problems is None else cfg.n_problems
    model = base.copy()
    onehot, total = model.counts(samples.context, samples.method, keep[:, :, None])  # the data, once
    for _ in range(cfg.steps):
        pi = np.exp(log_softmax(model.base_logits + model.delta))     # (C, K) model.probs()
        model.delta -= cfg.lr * (total[:, None] * pi - onehot) / N     # ∇L = Σ (π − onehot) / N
    return model


@dataclass
class STaRConfig:
    rounds: int = 6                  # rounds of sample → keep → fine-tune from the original model
    hint: float = 0.0                # rationalization: + hint on the correct method's logit in a second try (0: off)
    verifier: object = "exact"       # "exact", "units" (units digit only) or f(answers (P, n), truth (P, 1)) -> bool
    sft_steps: int = 30              # fine-tuning steps per round (full batch): SFTConfig.steps
    sft_lr: float = 0.2              # fine-tuning learning rate: SFTConfig.lr
    temperature: float = 1.0         # sampling temperature

    def __post_init__(self):
        integer(self.rounds, "rounds", lo=1), real(self.hint, "hint", lo=0)
        if not callable(self.verifier):
            one_of(self.verifier, "verifier", VERIFIERS)
        integer(self.sft_steps, "sft_steps", lo=0), positive(self.sft_lr, "sft_lr")
        positive(self.temperature, "temperature")


def _check_star(policy, cfg, seed, train, test):
    return {"cfg": STaRConfig() if cfg is None else instance(cfg, STaRConfig, "cfg"), "seed": check_seed(seed),
            **_check_start(policy, train, test)}


@checked(_check_star)
def train_star(policy, cfg=None, seed=0, *, train=None, test=None):
    """STaR for ``cfg.rounds`` rounds; each round fine-tunes from the original ``policy``.

    Per round: one attempt per training problem with the current model; keep those the
    ``verifier`` accepts. With ``hint`` > 0 (rationalization), every failed problem gets a
    second attempt with +``hint`` on the correct method's logit; accepted ones are kept too,
    *recorded without the hint* (the same methods, trained as if unhinted).

    Returns (the last model, the history: arrays indexed by round, 0 = the original model):
    ``pass1`` (test, exact), ``p_correct`` (rounds+1, C), ``entropy``; and per round 1.. :
    ``reward`` (the share of first attempts the verifier accepts), ``kept``, ``kept_hint`` (from
    rationalization), ``kept_right`` (kept *and* truly correct).
    """
    T = cfg.temperature
    rng = np.random.default_rng(seed)
    base, sft_cfg = policy, SFTConfig(cfg.sft_steps, cfg.sft_lr)
    model = base
    h = {k: [] for k in ("pass1", "p_correct", "entropy", "reward", "kept", "kept_hint", "kept_right")}

    def log(m):
        h["pass1"].append(pass1_exact(m, test, T))
        h["p_correct"].append(m.p_correct(T))
        h["entropy"].append(step_entropy(m, test, T))

    log(base)
    for _ in range(cfg.rounds):
        s = sample(model, train, 1, rng, T)                            # (P, 1, L)
        keep = verify(s, train, cfg.verifier)                          # (P, 1)
        right = verify(s, train, "exact")
        h["reward"].append(float(keep.mean()))                         # the first attempts'
        n_hint = 0
        if cfg.hint > 0:
            s2 = sample(model, train, 1, rng, T, hint=cfg.hint)        # second try, hinted
            keep2 = verify(s2, train, cfg.verifier) * (1 - keep)       # only failed problems
            s.method = np.where(keep2[:, :, None] > 0, s2.method, s.method)
            right = np.where(keep2 > 0, verify(s2, train, "exact"), right)
            keep, n_hint = keep + keep2, int(keep2.sum())
        model = train_sft(base, s, sft_cfg, keep)
        h["kept"].append(int(keep.sum()))
        h["kept_hint"].append(n_hint)
        h["kept_right"].append(int((keep * right).sum()))
        log(model)
    return model, {k: np.array(v) for k, v in h.items()}


def _check_star_seeds(policy, cfg, seeds, train, test):
    checked_ = _check_star(policy, cfg, 0, train, test)
    return {"cfg": checked_["cfg"], "train": checked_["train"], "test": checked_["test"], "seeds": _check_seeds(seeds)}


@checked(_check_star_seeds)
def train_star_seeds(policy, cfg=None, seeds=range(10), *, train=None, test=None):
    """:func:`train_star` for each of ``seeds``: (the final models, the histories stacked over seeds:
    ``pass1`` (seeds, rounds + 1), ``p_correct`` (seeds, rounds + 1, C), ``kept`` (seeds, rounds), ...)."""
    return stacked([train_star(policy, cfg, x, train=train, test=test) for x in seeds])


# --------------------------------------------------------------------------------------------
# REINFORCE with one advantage switch
# --------------------------------------------------------------------------------------------

@dataclass
class ReinforceConfig:
    algo: str = "grpo"               # the advantage, a toy.rl.advantages kind: "rft" (SFT on correct), "baseline", "rloo", "grpo", ...
    steps: int = 30                  # batches, one update each
    n_prompts: int = 16              # problems per batch (B)
    G: int = 8                       # samples per problem (the group)
    lr: float = 4.0                  # learning rate of gradient descent on Δ
    baseline_decay: float = 0.9      # "baseline": b ← decay·b + (1 − decay)·mean reward (b starts at the first batch's mean)
    match_abs: str = None            # a control: rescale each batch's advantages to the mean |A| this kind gives it (None: off)

    def __post_init__(self):
        one_of(self.algo, "algo", rl.ADVANTAGES)
        integer(self.steps, "steps", lo=1), integer(self.n_prompts, "n_prompts", lo=1)
        integer(self.G, "G", lo=2), positive(self.lr, "lr")
        real(self.baseline_decay, "baseline_decay", 0, 1)
        if self.match_abs is not None:
            one_of(self.match_abs, "match_abs", rl.ADVANTAGES)
            if "baseline" in (self.algo, self.match_abs):
                raise ValueError("match_abs must not be combined with 'baseline' (its running b is not a batch's)")


def _check_matched_advantages(r, algo, match_abs):
    for x, name in ((algo, "algo"), (match_abs, "match_abs")):
        one_of(x, name, tuple(k for k in rl.ADVANTAGES if k != "baseline"))
    r = as_array(r, "r", ndim=2)
    if r.shape[1] < 2:
        raise ValueError(f"r must hold groups of G >= 2 rewards, shape (groups, G), got {r.shape}")
    return {"r": r}


@checked(_check_matched_advantages)
def matched_advantages(r, algo, match_abs):
    r"""The advantages ``algo`` gives the rewards ``r`` (groups, G), rescaled by one number so that
    their mean |A| is the one ``match_abs`` gives the same rewards:

    .. math:: A_i = A^{\text{algo}}_i \cdot \frac{\sum_j |A^{\text{match}}_j|}{\sum_j |A^{\text{algo}}_j|}

    (A batch whose ``algo`` advantages are all 0 stays 0.) With ``algo="dr_grpo"`` and
    ``match_abs="grpo"`` it is GRPO's step size without GRPO's per-problem division by σ: every
    group's r − r̄ is scaled by the same factor. ``r``: one batch; returns the same shape."""
    a = rl.advantages(r, algo)
    size_a, size_m = np.abs(a).sum(), np.abs(rl.advantages(r, match_abs)).sum()
    return a * (size_m / size_a) if size_a > 0 else a


def _draw(train, n_prompts, rng):
    return train.subset(rng.choice(len(train), size=n_prompts, replace=False))


def _new_history(*extra):
    return {k: [] for k in ("pass1", "entropy", "p_correct", "delta", "reward", "mean_abs_adv",
                            "degenerate", "samples", *extra)}


def _log_eval(h, model, test):
    h["pass1"].append(pass1_exact(model, test))
    h["entropy"].append(step_entropy(model, test))
    h["p_correct"].append(model.p_correct())
    h["delta"].append(model.delta.copy())


def _finish(h, model):
    return model, {k: np.array(v) for k, v in h.items()}


def _check_pg_step(model, s, adv, lr):
    instance(model, Model, "model"), instance(s, Samples, "s")
    adv = as_array(adv, "adv")
    if adv.shape != s.method.shape[:2]:
        raise ValueError(f"adv must have shape {s.method.shape[:2]}, got {adv.shape}")
    return {"adv": adv, "lr": positive(lr, "lr")}


@checked(_check_pg_step)
def pg_step(model, s, adv, lr):
    r"""One REINFORCE step on samples ``s`` (B, G, L) with advantages ``adv`` (B, G): descend

    .. math:: L = -\frac{1}{BG}\sum_i A_i \sum_t \log\pi(a_{it}\mid c_{it})

    (a sum over an answer's steps, a mean over answers: ``rl.aggregate_weights(mask, "sum")``).
    Updates ``model.delta`` in place."""
    B, G, L = s.method.shape
    _descend(model.delta, model.probs(), s.context.reshape(B * G, L), s.method.reshape(B * G, L),
             adv.reshape(B * G), lr)


def _descend(delta, probs, rows, method, adv, lr):
    """``delta -= lr·∇L`` for L = −Σ_it c_it A_i log π(a_it | row_it) with c = ``rl.aggregate_weights``'s
    "sum" (m/N: a sum over each answer's steps, a mean over the N answers of each batch).
    ``rows``, ``method`` (..., N, L) (rows −1 on padding), ``adv`` (..., N)."""
    real = rows >= 0
    dlogp = rl.aggregate_weights(real.astype(float), REINFORCE_LOSS) * -adv[..., None]  # ∂L/∂log π
    delta -= lr * log_softmax_table_grad(probs, rows[real], method[real], dlogp[real])


def _check_reinforce(policy, cfg, seed, train, test):
    cfg = ReinforceConfig() if cfg is None else instance(cfg, ReinforceConfig, "cfg")
    return {"cfg": cfg, "seed": check_seed(seed), **_check_start(policy, train, test, cfg.n_prompts)}


@checked(_check_reinforce)
def train_reinforce(policy, cfg=None, seed=0, *, train=None, test=None):
    r"""REINFORCE: per batch of ``cfg.n_prompts`` problems × ``cfg.G`` samples, one step of
    :func:`pg_step` with the advantage ``cfg.algo`` (:func:`toy.rl.advantages`); the run of
    one seed of :func:`train_reinforce_seeds`.

    Returns (the final model, the history: index 0 = before training for ``pass1``/``entropy``/
    ``p_correct``/``delta``; per batch otherwise): ``pass1`` (test, exact), ``entropy``,
    ``p_correct``, ``delta``, ``reward``, ``mean_abs_adv``, ``degenerate``, ``samples`` (cumulative).
    """
    models, h = train_reinforce_seeds(policy, cfg, [seed], train=train, test=test)
    return models[0], {k: v[0] for k, v in h.items()}


def _check_reinforce_seeds(policy, cfg, seeds, train, test):
    checked_ = _check_reinforce(policy, cfg, 0, train, test)
    return {"cfg": checked_["cfg"], "train": checked_["train"], "test": checked_["test"], "seeds": _check_seeds(seeds)}


@checked(_check_reinforce_seeds)
def train_reinforce_seeds(policy, cfg=None, seeds=range(10), *, train=None, test=None):
    r""":func:`train_reinforce` for several seeds at once, vectorised over seeds: seed s gives exactly
    the run ``train_reinforce(policy, cfg, seed=s)`` (each seed draws its batches and samples from
    its own ``default_rng(s)``), but all seeds' solutions are executed as one batch and their
    tables Δ, stacked (seeds · C, methods), take each step together. Returns (the final models,
    the histories stacked over seeds: ``pass1`` (seeds, steps + 1), ...)."""
    K, B, G = len(seeds), cfg.n_prompts, cfg.G
    rngs = [np.random.default_rng(x) for x in seeds]
    models = [policy.copy() for _ in seeds]
    delta = np.stack([m.delta for m in models])                       # (K, C, M): every seed's Δ
    for k, m in enumerate(models):
        m.delta = delta[k]                                            # a view: one step moves all
    C = delta.shape[1]
    hs, b = [_new_history() for _ in seeds], None
    for h, m in zip(hs, models):
        _log_eval(h, m, test)
    for step in range(cfg.steps):
        batches = [_draw(train, B, rng) for rng in rngs]
        tables = [m.log_probs() for m in models]                     # (C, M) each
        draws = [draw_methods(t, bt.context, G, rng) for t, bt, rng in zip(tables, batches, rngs)]
        batch = _concat(batches)                                      # (K·B) problems
        answer = execute(batch, np.concatenate([d[0] for d in draws]), np.concatenate([d[1] for d in draws]))
        s = _concat_samples([(as_samples(bt, d[0], answer[k * B:(k + 1) * B], t), slice(None))
                             for k, (bt, d, t) in enumerate(zip(batches, draws, tables))])   # (K·B, G, L)
        r = verify(s, batch)                                          # (K·B, G)
        rk = r.reshape(K, B, G)
        mean_r = np.array([x.mean() for x in rk])                     # (K,) per seed
        b = mean_r if b is None else b
        if cfg.match_abs is None:
            A = rl.advantages(r, cfg.algo, np.repeat(b, B)[:, None])     # (K·B, G)
        else:                                                        # each seed's batch rescaled on its own
            A = np.concatenate([matched_advantages.equation(rk, cfg.algo, cfg.match_abs) for rk in r.reshape(K, B, G)])
        b = cfg.baseline_decay * b + (1 - cfg.baseline_decay) * mean_r
        rows = np.where(s.context >= 0, s.context + C * np.repeat(np.arange(K), B)[:, None, None], -1)
        probs = np.concatenate([m.probs() for m in models])           # (K·C, M)
        _descend(delta.reshape(K * C, -1), probs, rows.reshape(K, B * G, -1), s.method.reshape(K, B * G, -1),
                 A.reshape(K, B * G), cfg.lr)                          # one batch per seed
        for k, (h, m) in enumerate(zip(hs, models)):
            h["reward"].append(mean_r[k])
            h["mean_abs_adv"].append(np.abs(A[k * B:(k + 1) * B]).mean())
            h["degenerate"].append(rl.degenerate_fraction(rk[k]))
            h["samples"].append((step + 1) * B * G)
            _log_eval(h, m, test)
    return stacked([_finish(h, m.copy()) for h, m in zip(hs, models)])


# --------------------------------------------------------------------------------------------
# GRPO and DAPO's switches
# --------------------------------------------------------------------------------------------

@dataclass
class GRPOConfig:
    """GRPO with PPO clipping; DAPO's four techniques are fields (defaults: off)."""
    steps: int = 30                  # batches (each: sample, then μ epochs over it)
    n_prompts: int = 16              # problems per batch (B)
    G: int = 8                       # samples per problem (the group)
    lr: float = 4.0                  # learning rate of gradient descent on Δ
    mu: int = 4                      # μ: epochs (passes) over each sampled batch, one full-batch update each
    eps_low: float = 0.2             # PPO clip: the ratio is kept above 1 − eps_low ...
    eps_high: float = None           # ... and below 1 + eps_high (None: = eps_low; DAPO's clip-higher: 0.28)
    beta: float = 0.0                # weight of the k3 KL penalty towards the original model
    loss_type: str = None            # rl.aggregate_loss: "grpo" (mean of answer means), "dapo" (token mean); None: "grpo"
    dynamic_sampling: bool = False   # DAPO: redraw until the batch has B mixed (not all-equal) groups
    drop_degenerate: bool = False    # control: drop the all-equal groups from the loss, no redraw (fewer groups)
    overlong: bool = False           # DAPO: soft overlong punishment added to the reward
    max_len: int = 12                # the maximum length (steps): overlong shaping, and "dr_grpo"'s normaliser
    overlong_buffer: int = 4         # overlong shaping: penalty ramps over the last this many steps
    max_draws: int = 10              # dynamic sampling: at most this many batches drawn per update

    def __post_init__(self):  # argcheck
        _check_config(self)


def dapo_config(**kw):
    """DAPO's four techniques on: ``eps_high=0.28``, dynamic sampling, ``loss_type="dapo"``,
    overlong shaping (plus any overrides)."""
    unknown = sorted(set(kw) - set(GRPOConfig.__dataclass_fields__))
    if unknown:
        raise ValueError(f"dapo_config got unknown GRPOConfig fields: {unknown}")
    return replace(GRPOConfig(eps_high=0.28, dynamic_sampling=True, loss_type="dapo", overlong=True), **kw)


def _check_config(cfg):
    if not isinstance(cfg, GRPOConfig):
        raise ValueError(f"cfg must be a GRPOConfig, got {type(cfg).__name__}")
    for name, lo in (("steps", 1), ("n_prompts", 1), ("G", 2), ("mu", 1), ("max_draws", 1)):
        integer(getattr(cfg, name), name, lo=lo)
    positive(cfg.lr, "lr")
    real(cfg.eps_low, "eps_low", 0, 1, hi_open=True)
    if cfg.eps_high is not None:
        real(cfg.eps_high, "eps_high", lo=0)
    real(cfg.beta, "beta", lo=0)
    if cfg.loss_type is not None:
        one_of(cfg.loss_type, "loss_type", rl.LOSS_TYPES)
    for name in ("dynamic_sampling", "drop_degenerate", "overlong"):
        flag(getattr(cfg, name), name)
    integer(cfg.overlong_buffer, "overlong_buffer", lo=1)
    if integer(cfg.max_len, "max_len", lo=1) < cfg.overlong_buffer:
        raise ValueError(f"max_len must be >= overlong_buffer, got {cfg.max_len} and {cfg.overlong_buffer}")


def _grpo_batch(train, cfg, model, rng):
    """Draw one batch; with dynamic sampling, keep only mixed groups (up to ``max_draws`` draws);
    with ``drop_degenerate`` (and no dynamic sampling), keep the mixed groups of one draw only.

    Returns (batch problems, samples, correctness (B, G), samples drawn, degenerate fraction)."""
    kept, drawn, degenerate = [], 0, []
    for _ in range(cfg.max_draws if cfg.dynamic_sampling else 1):
        batch = _draw(train, cfg.n_prompts, rng)
        s = sample(model, batch, cfg.G, rng)
        r = verify(s, batch)
        drawn += r.size
        degenerate.append(rl.degenerate_fraction(r))
        mixed = rl.mixed_groups(r) if cfg.dynamic_sampling or cfg.drop_degenerate else np.ones(len(r), bool)
        kept.append((batch.subset(mixed), s, r, mixed))
        if sum(k[3].sum() for k in kept) >= cfg.n_prompts:
            break
    batch = _concat([k[0] for k in kept])
    s = _concat_samples([(k[1], k[3]) for k in kept])
    r = np.concatenate([k[2][k[3]] for k in kept])
    n = min(cfg.n_prompts, len(r))
    return batch.subset(np.arange(n)), _take(s, n), r[:n], drawn, float(np.mean(degenerate))


def _concat(probs):
    return Problems(*(np.concatenate([getattr(p, f) for p in probs])
                      for f in ("start", "is_mul", "operand", "context", "answer")))


def _concat_samples(parts):
    return Samples(*(np.concatenate([getattr(s, f)[keep] for s, keep in parts])
                     for f in ("method", "context", "answer", "logp")))


def _take(s, n):
    return Samples(s.method[:n], s.context[:n], s.answer[:n], s.logp[:n])


def _check_reward_with_overlong(correct, n_steps, cfg):
    instance(cfg, GRPOConfig, "cfg")
    correct = as_array(correct, "correct", ndim=2)
    if np.shape(n_steps) != correct.shape[:1]:
        raise ValueError(f"n_steps must have shape {correct.shape[:1]} (one per group), got {np.shape(n_steps)}")
    return {"correct": correct, "n_steps": np.asarray(n_steps)}


@checked(_check_reward_with_overlong)
def reward_with_overlong(correct, n_steps, cfg):
    """(B, G) reward: 1 for a correct answer, plus DAPO's overlong penalty
    (``toy.rl.overlong_penalty``, by the problem's length in steps) when ``cfg.overlong``."""
    reward = np.array(correct, dtype=float)
    if cfg.overlong:
        reward += rl.overlong_penalty(n_steps, cfg.max_len, cfg.overlong_buffer)[:, None]
    return reward


def _check_grpo_step(model, s, adv, cfg, ref):
    instance(model, Model, "model"), instance(s, Samples, "s"), instance(cfg, GRPOConfig, "cfg")
    adv = as_array(adv, "adv")
    if adv.shape != s.method.shape[:2]:
        raise ValueError(f"adv must have shape {s.method.shape[:2]}, got {adv.shape}")
    if ref is not None:
        instance(ref, Model, "ref")
    return {"adv": adv}


@checked(_check_grpo_step)
def grpo_step(model, s, adv, cfg, ref=None):
    r"""One GRPO update on samples ``s`` (B, G, L) drawn from π_old, advantages ``adv`` (B, G):
    the loss of :func:`toy.rl.policy_loss`

    .. math:: L = \mathrm{agg}_{i,t}\Big[-\min\big(\rho_{it}A_i,\ \mathrm{clip}(\rho_{it}, 1-\varepsilon_{low}, 1+\varepsilon_{high})A_i\big)
              + \beta\, k_3(\log\pi_{ref} - \log\pi_\theta)\Big],\quad \rho_{it} = \frac{\pi_\theta(a_{it}\mid c_{it})}{\pi_{old}(a_{it}\mid c_{it})}

    (agg = ``cfg.loss_type``, default ``rl.DEFAULT_LOSS_TYPE["grpo"]``), then the model's chain rule
    and a step down the gradient.
    Updates ``model.delta`` in place; returns (L, the ratio ρ (B, G, L), the clip fraction:
    the share of all generated steps whose gradient the clip removes, as TRL and verl log it).
    """
    B, G, L = s.method.shape
    real = s.context >= 0
    ctx, a = np.where(real, s.context, 0), np.where(real, s.method, 0)
    logp = model.log_probs()[ctx, a]                                  # (B, G, L) log π_θ
    ref_logp = None if cfg.beta == 0 else (ref or Model()).log_probs()[ctx, a].reshape(B * G, L)
    loss, dlogp = rl.policy_loss(logp.reshape(B * G, L), s.logp.reshape(B * G, L), adv.reshape(B * G),
                                 s.mask.reshape(B * G, L), cfg.loss_type or rl.DEFAULT_LOSS_TYPE["grpo"],
                                 cfg.eps_low, cfg.eps_high, cfg.beta, ref_logp, cfg.max_len)
    ratio = np.exp(logp - s.logp)                                     # ρ = π_θ / π_old
    clip = rl.clip_fraction(ratio, adv[:, :, None], s.mask, cfg.eps_low, cfg.eps_high)
    dlogp = dlogp.reshape(B, G, L)[real]                              # ∂L/∂log π on the real steps
    model.delta -= cfg.lr * log_softmax_table_grad(model.probs(), s.context[real], s.method[real], dlogp)
    return loss, ratio, clip


def _check_grpo(policy, cfg, seed, train, test, callback):
    cfg = GRPOConfig() if cfg is None else cfg
    _check_config(cfg)
    if callback is not None:
        function(callback, "callback")
    return {"cfg": cfg, "seed": check_seed(seed), **_check_start(policy, train, test, cfg.n_prompts)}


@checked(_check_grpo)
def train_grpo(policy, cfg=None, seed=0, *, train=None, test=None, callback=None):
    r"""GRPO / DAPO on the arithmetic model: for each of ``cfg.steps`` sampled batches,
    ``cfg.mu`` epochs over it, each one full-batch update of :func:`grpo_step`, with
    :math:`A_i` = the GRPO advantage of the reward (correct = 1, plus the overlong penalty if on).

    ``callback(step, update, samples, adv, ratio)``, if given, is called after each update with
    the ratio that update saw (B, G, L).

    Returns (the final model, the history as :func:`train_reinforce`'s, plus ``clip_frac`` (the
    mean over the μ updates of :func:`toy.rl.clip_fraction`: clipped steps / all generated steps)
    and ``samples`` (cumulative samples drawn, dynamic sampling's redraws included)).
    """
    rng = np.random.default_rng(seed)
    ref = policy                                                      # π_ref: the start, kept
    model, h, total = policy.copy(), _new_history("clip_frac"), 0
    _log_eval(h, model, test)
    for step in range(cfg.steps):
        batch, s, correct, drawn, degenerate = _grpo_batch(train, cfg, model, rng)
        total += drawn
        reward = reward_with_overlong(correct, batch.n_steps, cfg) if len(correct) else correct
        A = rl.grpo_advantages(reward) if len(reward) else reward    # (B, G)
        clipped = []
        for u in range(cfg.mu if len(A) else 0):
            _, ratio, clip = grpo_step(model, s, A, cfg, ref)
            clipped.append(clip)
            if callback is not None:
                callback(step, u, s, A, ratio)
        h["reward"].append(correct.mean() if correct.size else np.nan)
        h["mean_abs_adv"].append(np.abs(A).mean() if A.size else 0.0)
        h["clip_frac"].append(float(np.mean(clipped)) if clipped else 0.0)
        h["degenerate"].append(degenerate)
        h["samples"].append(total)
        _log_eval(h, model, test)
    return _finish(h, model)


def _check_grpo_seeds(policy, cfg, seeds, train, test, processes):
    checked_ = _check_grpo(policy, cfg, 0, train, test, None)
    return {"cfg": checked_["cfg"], "train": checked_["train"], "test": checked_["test"], "seeds": _check_seeds(seeds),
            "processes": integer(processes, "processes", lo=1)}


@checked(_check_grpo_seeds)
def train_grpo_seeds(policy, cfg=None, seeds=range(10), *, train=None, test=None, processes=2):
    """:func:`train_grpo` for each of ``seeds``, ``processes`` at a time (``toy.parallel``: the same
    numbers as one after another): (the final models, the histories stacked over seeds:
    ``pass1`` (seeds, steps + 1), ``clip_frac`` (seeds, steps), ...)."""
    return stacked(parallel.starmap(_grpo_run, [(policy, cfg, x, train, test) for x in seeds], processes))


def _grpo_run(policy, cfg, seed, train, test):                      # a module function: workers can pickle it
    return train_grpo.equation(policy, cfg, seed, train=train, test=test)
