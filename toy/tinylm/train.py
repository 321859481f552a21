r"""Training the tiny thinking model: SFT warm-up, then RL (GRPO, Dr. GRPO, RFT, PPO).

Every RL algorithm goes through the same three steps, and only step 2 differs:

1. ``rollout``: sample G answers for each of B prompts (one code path for all algorithms)
   and score them with the verifier;
2. advantages: ``toy.rl.grpo_advantages`` (GRPO), ``toy.rl.dr_grpo_advantages`` (Dr. GRPO),
   the reward itself on the correct samples only (RFT), or R − V(s_t) from a value head (PPO;
   with ``kl_coef`` > 0, GAE on a KL-shaped per-token reward, ``toy.rl.gae``);
3. ``toy.rl.policy_loss``: the per-token loss −min(ρA, clip(ρ, 1−ε, 1+ε)A) + β·k3
   (``toy.rl.clipped_surrogate``, ``toy.rl.kl_k3``), reduced with ``toy.rl.aggregate_loss``,
   and its gradient with respect to each token's log-probability, which the model
   backpropagates.

Step 3 only runs the model on the rows that matter (``DistinctRows``): with β = 0 a row whose
advantage is 0 has no gradient, a repeated answer is computed once, and each prompt once per
group. The loss and the gradient are those of the whole batch (``tests/test_tinylm.py``).
"""
import time
from dataclasses import dataclass, field

import numpy as np

from .. import rl
from .._blas import single_thread_blas
from .._check_args import (as_array, flag, function, generator, has_methods, instance, int_array,
                           integer, one_of, real, seed as check_seed)
from .model import Adam, ModelConfig, TinyLM, token_logprobs, token_logprobs_backward
from .task import (EOS, MAX_ANSWER_LEN, N_DIGITS, PROMPT_LEN, TEACHER_CHAIN_ACC, TEACHER_ERROR_RATE,
                   _digits, decode_rows, encode, make_prompts, prompts_of, teacher_answers,
                   verify_tokens)

__all__ = ["SFTConfig", "sft_warmup", "RLConfig", "Rollout", "exact_reward", "rollout",
           "train_rl", "CurriculumSampler", "DistinctRows"]


# ============================================================================ SFT warm-up
@dataclass
class SFTConfig:
    model: ModelConfig = field(default_factory=ModelConfig)  # the architecture
    steps: int = 800                     # Adam steps, each on a fresh batch of teacher answers
    batch_size: int = 32                 # problems per step
    lr: float = 3e-3                     # peak learning rate (linear warm-up, cosine decay to 10 %)
    warmup_steps: int = 50               # steps of linear learning-rate warm-up
    think_prob: float = 0.5              # share of think-first answers in the teacher's data
    teacher_error_rate: float = TEACHER_ERROR_RATE   # P(a teacher's thinking step is wrong)
    seed: int = 0                        # seeds the init and the data
    min_digits: int = 10                 # problems have min_digits..10 digits (10: all the same task)

    def __post_init__(self):
        instance(self.model, ModelConfig, "model")
        integer(self.steps, "steps", lo=1), integer(self.batch_size, "batch_size", lo=1)
        integer(self.warmup_steps, "warmup_steps", lo=0), check_seed(self.seed)
        real(self.lr, "lr", lo=0, lo_open=True)
        real(self.think_prob, "think_prob", 0, 1), real(self.teacher_error_rate, "teacher_error_rate", 0, 1)
        integer(self.min_digits, "min_digits", 1, N_DIGITS)


def _pad_answers(prompts, answers):
    """Prompt tokens (n, 11) + answer strings → sequences (n, 11 + L), padded with ``$``, and
    the loss mask (n, 11 + L − 1) that is 1 where the *target* is an answer token up to and
    including its first ``$``."""
    ids = [encode(a) for a in answers]
    L = max(len(a) for a in ids)
    ans = np.full((len(ids), L), EOS, dtype=np.int64)
    for i, a in enumerate(ids):
        ans[i, :len(a)] = a
    return np.concatenate([prompts, ans], axis=1), _answer_mask(ans)


def _answer_mask(ans):
    """(n, L) answer tokens → loss mask over targets (n, PROMPT_LEN + L − 1)."""
    n, L = ans.shape
    is_eos = ans == EOS
    first_eos = np.where(is_eos.any(axis=1), is_eos.argmax(axis=1), L - 1)    # (n,)
    m_ans = np.arange(L)[None, :] <= first_eos[:, None]                       # (n, L)
    return np.concatenate([np.zeros((n, PROMPT_LEN - 1)), m_ans], axis=1).astype(np.float32)


def _lr_at(step, cfg):
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    frac = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * frac)))


@single_thread_blas
def sft_warmup(cfg=None, callback=None):
    """Train a fresh ``TinyLM`` by imitating the teacher (cross-entropy on answer tokens).

    Returns ``(model, history)`` with ``history = {"step": [...], "loss": [...]}``;
    ``callback(step, loss)`` is called every step. (Use ``toy.tinylm.warmup_model()`` to get
    the cached result instead of training.)
    """
    if cfg is not None:  # argcheck
        instance(cfg, SFTConfig, "cfg")
    if callback is not None:  # argcheck
        function(callback, "callback")
    cfg = cfg or SFTConfig()
    rng = np.random.default_rng(cfg.seed)
    model = TinyLM(cfg.model, seed=cfg.seed)
    opt = Adam(cfg.lr)
    hist = {"step": [], "loss": []}
    for step in range(cfg.steps):
        digits, prompts = make_prompts(cfg.batch_size, rng, cfg.min_digits)
        answers = teacher_answers(digits, rng, cfg.think_prob, cfg.teacher_error_rate)
        seqs, mask = _pad_answers(prompts, answers)                           # (n, T), (n, T-1)
        lp, probs = token_logprobs(model.forward(seqs[:, :-1]), seqs[:, 1:])  # (n, T-1)
        loss = -(lp * mask).sum() / mask.sum()                                # token-mean NLL
        model.backward(token_logprobs_backward(probs, seqs[:, 1:], -mask / mask.sum()))
        opt.step(model, lr=_lr_at(step, cfg))
        hist["step"].append(step)
        hist["loss"].append(float(loss))
        if callback:
            callback(step, float(loss))
    return model, hist


# ============================================================================ RL
@dataclass
class RLConfig:
    algo: str = "grpo"                   # "grpo", "dr_grpo", "rft" (SFT on correct samples) or "ppo"
    steps: int = 200                     # RL steps (one batch of rollouts each)
    n_prompts: int = 32                  # prompts per step
    G: int = 8                           # samples per prompt (the group)
    lr: float = 1e-4                     # Adam learning rate (the seed's)
    mu: int = 1                          # μ: gradient steps on each batch (PPO in the seed: 8)
    eps_low: float = 0.2                 # ε_low of the clipped surrogate (matters only if μ > 1)
    eps_high: float = None               # ε_high (None: = eps_low; DAPO's clip-higher: 0.28)
    beta: float = 0.0                    # weight of the k3 KL penalty to the starting model
    loss_type: str = ""                  # toy.rl.aggregate_loss type; "" = the algorithm's own
    vf_coef: float = 0.5                 # PPO: weight of the value loss ½(V − R)²
    # LM-PPO (AlpacaFarm): kl_coef = β of the per-token reward −β·KL_t, > 0 switches it on;
    # kl_clamp: clamp KL_t at ≥ 0. Left out of the repr, so that printed configs stay as they were.
    kl_coef: float = field(default=0.0, repr=False)
    kl_clamp: bool = field(default=True, repr=False)
    temperature: float = 1.0             # rollout temperature (the loss uses the T = 1 policy: ≠ 1 is off-policy)
    grad_clip: float = 1.0               # clip the global gradient norm (0 = off)
    min_digits: int = 10                 # problems have min_digits..10 digits (10: all the same task)

    def __post_init__(self):
        one_of(self.algo, "algo", ALGOS)
        for name in ("steps", "n_prompts", "mu"):
            integer(getattr(self, name), name, lo=1)
        integer(self.G, "G", lo=2)
        real(self.lr, "lr", lo=0, lo_open=True)
        real(self.eps_low, "eps_low", 0, 1, hi_open=True)
        if self.eps_high is not None:
            real(self.eps_high, "eps_high", lo=0)
        for name in ("beta", "vf_coef", "grad_clip", "kl_coef"):
            real(getattr(self, name), name, lo=0)
        if self.kl_coef > 0 and self.algo != "ppo":
            raise ValueError(f"kl_coef must be 0 unless algo='ppo' (LM-PPO), got {self.kl_coef} with algo={self.algo!r}")
        flag(self.kl_clamp, "kl_clamp")
        if self.loss_type != "":
            one_of(self.loss_type, "loss_type", ("",) + rl.LOSS_TYPES)
        real(self.temperature, "temperature", lo=0, lo_open=True)
        integer(self.min_digits, "min_digits", 1, N_DIGITS)


ALGOS = ("grpo", "dr_grpo", "rft", "ppo")
DEFAULT_LOSS_TYPE = {"grpo": "grpo", "dr_grpo": "dr_grpo", "rft": "grpo", "ppo": "dapo"}


@dataclass
class Rollout:
    """One batch of sampled answers (N = prompts × G rows, grouped prompt by prompt)."""
    digits: np.ndarray     # (N, 10) the problems
    seqs: np.ndarray       # (N, T) prompt + answer tokens, padded with '$'
    mask: np.ndarray       # (N, T-1) 1 where the target seqs[:, t+1] is a generated answer token
    answers: list          # N answer strings
    reward: np.ndarray     # (N,) the reward trained on: ``reward_fn``'s, by default the verifier's 0/1
    correct: np.ndarray    # (N,) 0/1 the exact verifier (= reward unless a reward_fn is given)
    think: np.ndarray      # (N,) 1 if think-first format
    chain_ok: np.ndarray   # (N,) 1 if think-first and the whole bracket is right
    length: np.ndarray     # (N,) answer length in tokens (up to and including '$')
    G: int                 # samples per prompt


def exact_reward(ans, digits):
    """The default ``reward_fn``: the exact verifier, 1 iff the answer tokens (N, L) parse and
    their final digit is the units digit of the sum of ``digits`` (N, 10), else 0."""
    return verify_tokens(ans, digits)["reward"]


def rollout(model, digits, G, rng, temperature=1.0, reward_fn=None):
    """Sample ``G`` answers to each problem in ``digits`` (n, 10), verify them and score them
    with ``reward_fn(answer tokens (N, L), digits (N, 10))`` → (N,) (default: ``exact_reward``)."""
    has_methods(model, "model", "generate"), integer(G, "G", lo=1), generator(rng)
    real(temperature, "temperature", lo=0, lo_open=True)
    if reward_fn is not None:
        function(reward_fn, "reward_fn")
    digits = _digits(digits)
    prompts = prompts_of(digits)                                                  # PAD shows as '$'
    ans = model.generate(prompts, MAX_ANSWER_LEN, rng, temperature, n_repeat=G)  # (N, L)
    digits, prompts = np.repeat(digits, G, axis=0), np.repeat(prompts, G, axis=0)  # (N, ...)
    answers = decode_rows(ans)
    v = verify_tokens(ans, digits)
    reward = v["reward"] if reward_fn is None else _checked_reward(reward_fn(ans, digits), len(ans))
    return Rollout(digits, np.concatenate([prompts, ans], axis=1), _answer_mask(ans), answers,
                   reward, v["reward"], v["think"], v["chain_ok"], v["length"], G)


def _checked_reward(r, n):
    r = np.asarray(r, dtype=float)
    if r.shape != (n,) or not np.all(np.isfinite(r)):
        raise ValueError(f"reward_fn must return {n} finite rewards (one per answer), got shape {r.shape}")
    return r


def _ppo_targets(reward, values, mask):
    """PPO's value targets and advantages, per token (GAE with γ = λ = 1): every token's return
    is its answer's final reward R (N,), A_t = R − V(s_t) with ``values`` (N, T), normalised
    over the tokens of ``mask`` (N, T) (as CleanRL). Returns ``(ret, adv)``, both (N, T)."""
    ret = np.broadcast_to(reward[:, None], values.shape)                      # return = final reward
    return ret, _normalised(ret - values, mask)                               # A_t = R − V(s_t)


def _normalised(a, mask):
    """Advantages ``a`` (N, T) standardised over the tokens of ``mask`` (as CleanRL)."""
    mu = (a * mask).sum() / mask.sum()
    sd = np.sqrt((((a - mu) * mask) ** 2).sum() / mask.sum())
    return (a - mu) / (sd + 1e-8)


class DistinctRows:
    """The distinct rows among ``seqs[needed]`` (N, T), sorted, so that rows with the same prompt
    are consecutive and ``share`` (keyword arguments for ``TinyLM.forward``) lets the model run
    each prompt once. ``expand`` maps per-distinct-row arrays (U, ...) back to every row (N, ...)
    (0 for rows not needed); ``reduce`` sums per-row gradients (N, ...) into (U, ...)."""

    def __init__(self, seqs, needed):
        seqs = int_array(seqs, "seqs", ndim=2)
        if np.shape(needed) != seqs.shape[:1] or np.asarray(needed).dtype != bool:
            raise ValueError(f"needed must be a boolean array of shape {seqs.shape[:1]}, got {np.shape(needed)}")
        rows = np.flatnonzero(needed)
        self.seqs, inv = np.unique(seqs[rows], axis=0, return_inverse=True)     # (U, T)
        self.index = np.full(len(seqs), -1)                                     # row → distinct row
        self.index[rows] = inv.ravel()
        _, sizes = np.unique(self.seqs[:, :PROMPT_LEN], axis=0, return_counts=True)
        self.share = {"shared_prefix": PROMPT_LEN, "group_size": sizes}

    def expand(self, x):                                                        # (U, ...) → (N, ...)
        out = np.zeros((len(self.index),) + x.shape[1:], x.dtype)
        got = self.index >= 0
        out[got] = x[self.index[got]]
        return out

    def reduce(self, x):                                                        # (N, ...) → (U, ...)
        out = np.zeros((len(self.seqs),) + x.shape[1:], x.dtype)
        got = self.index >= 0
        np.add.at(out, self.index[got], x[got])
        return out


class CurriculumSampler:
    """Kimi k1.5's curriculum: draw prompts from a fixed ``pool`` (P, 10) with probability
    ∝ (1 − success rate), the success rate being a running average updated from each batch
    (``train_rl`` calls ``update`` after every rollout). Unseen prompts start at ``init``."""

    def __init__(self, pool, init=0.5, decay=0.5, floor=0.02):
        if np.ndim(pool) < 1 or len(pool) == 0:  # argcheck
            raise ValueError(f"pool must be a non-empty array of prompts (P, ...), got shape {np.shape(pool)}")
        real(init, "init", 0, 1), real(decay, "decay", 0, 1)  # argcheck
        real(floor, "floor", 0, 1, lo_open=True)  # argcheck
        self.pool = np.asarray(pool)
        self.success = np.full(len(self.pool), float(init))
        self.decay, self.floor = decay, floor
        self.last = None

    def __call__(self, n, rng):
        integer(n, "n", lo=1), generator(rng)  # argcheck
        p = np.maximum(1 - self.success, self.floor)
        self.last = rng.choice(len(self.pool), size=n, replace=len(self.pool) < n, p=p / p.sum())
        return self.pool[self.last]

    def update(self, rewards):                                                # (n, G)
        if self.last is None or as_array(rewards, "rewards", ndim=2).shape[0] != len(self.last):  # argcheck
            raise ValueError("rewards must be (n, G) for the n prompts of the last call (call the sampler first)")
        rate = np.asarray(rewards).mean(axis=1)
        self.success[self.last] = self.decay * self.success[self.last] + (1 - self.decay) * rate


@single_thread_blas
def train_rl(model, cfg=None, seed=0, callback=None, prompt_sampler=None, verbose=False,
             reward_fn=None):
    """RL fine-tuning of a copy of ``model`` (the input is left untouched).

    ``reward_fn(answer tokens (N, L), digits (N, 10))`` → (N,) is the reward trained on, one per
    answer (default: ``exact_reward``, the verifier); ``accuracy`` is always the verifier's.

    ``prompt_sampler(n, rng)`` → digits (n, 10) replaces uniform random problems (it may have
    an ``update(rewards (n, G))`` method, see ``CurriculumSampler``); ``callback(step, rec)``
    receives each step's record. Returns ``(policy, history)``, where ``history`` maps each
    quantity to a list over steps: ``accuracy``, ``think_share``, ``mean_length``,
    ``chain_acc`` (share of think-first answers whose bracket is all right; NaN if none),
    ``teacher_chain_acc``, ``all_right`` / ``all_wrong`` (share of groups), ``loss``,
    ``clip_frac``, ``kl`` (if β > 0), ``value_loss`` (PPO), ``time`` (seconds so far);
    ``reward`` (mean reward trained on) if a ``reward_fn`` is given; with ``kl_coef`` > 0 (LM-PPO)
    ``score`` (mean reward), ``kl_reward`` (mean over answers of Σ_t −β·KL_t) and
    ``total_reward`` (their sum).

    PPO's advantages are GAE with γ = λ = 1 (``toy.rl.gae``): A_t = (return to the end) − V(s_t),
    normalised over the batch. With ``kl_coef`` = 0 the return is the final reward; with
    ``kl_coef`` > 0 (LM-PPO) the per-token reward is −β·max(KL_t, 0), KL_t = log π_old(a_t) −
    log π_ref(a_t) to the starting model, plus the reward on the last token
    (``toy.rl.kl_shaped_rewards``).
    """
    instance(model, TinyLM, "model"), check_seed(seed), flag(verbose, "verbose")
    if cfg is not None:
        instance(cfg, RLConfig, "cfg")
    for f, name in ((callback, "callback"), (prompt_sampler, "prompt_sampler"), (reward_fn, "reward_fn")):
        if f is not None:
            function(f, name)
    cfg = cfg or RLConfig()
    rng = np.random.default_rng(seed)
    policy = model.copy()
    if cfg.algo == "ppo":
        policy.add_value_head()
    ref = model.copy() if cfg.beta > 0 or cfg.kl_coef > 0 else None
    opt = Adam(cfg.lr, grad_clip=cfg.grad_clip)
    loss_type = cfg.loss_type or DEFAULT_LOSS_TYPE[cfg.algo]
    max_len = MAX_ANSWER_LEN if loss_type == "dr_grpo" else None
    history, t0 = {}, time.time()
    for step in range(cfg.steps):
        # 1. rollouts
        if prompt_sampler is None:
            digits, _ = make_prompts(cfg.n_prompts, rng, cfg.min_digits)
        else:
            digits = prompt_sampler(cfg.n_prompts, rng)
        ro = rollout(policy, digits, cfg.G, rng, cfg.temperature, reward_fn)
        R = ro.reward.reshape(cfg.n_prompts, cfg.G)                  # (B, G)
        if hasattr(prompt_sampler, "update"):
            prompt_sampler.update(R)
        rec = _record(ro, R, reward_fn)
        # 2. advantages (per answer; PPO's are per token, set below)
        seqs, mask = ro.seqs, ro.mask
        if cfg.algo == "grpo":
            adv = rl.grpo_advantages(R).ravel()
        elif cfg.algo == "dr_grpo":
            adv = rl.dr_grpo_advantages(R).ravel()
        elif cfg.algo == "rft":                                               # keep correct answers only
            keep = ro.reward > 0
            seqs, mask, adv = seqs[keep], mask[keep], np.ones(keep.sum())
        # the rows the model must compute (same loss and gradient, less work): with β = 0 a row
        # whose advantage is 0 (a group whose answers are all right, or all wrong) has zero loss
        # and zero gradient, so it is left out (PPO's advantages, per token, come later: it
        # keeps every row); an answer sampled twice is computed once; and each prompt once.
        needed = adv != 0 if cfg.algo != "ppo" and cfg.beta == 0 else np.ones(len(seqs), bool)
        rows = DistinctRows(seqs, needed)
        ref_logp = None
        if ref is not None and len(seqs):
            ref_logp = rows.expand(ref.logprobs(rows.seqs, **rows.share))
        # 3. updates on this batch
        losses, infos = [], []
        for u in range(cfg.mu if len(seqs) else 0):
            if len(rows.seqs) == 0:                                           # nothing to compute:
                logp = values = np.zeros(mask.shape)                          # a zero gradient
            elif cfg.algo == "ppo":
                logits, values = policy.forward(rows.seqs[:, :-1], value=True, **rows.share)   # (U, T, V), (U, T)
                values = rows.expand(values)                                  # (N, T)
            else:
                logits = policy.forward(rows.seqs[:, :-1], **rows.share)      # (U, T, V)
            if len(rows.seqs):
                logp_u, probs = token_logprobs(logits, rows.seqs[:, 1:])      # (U, T)
                logp = rows.expand(logp_u)                                    # (N, T), 0 if not needed
            if u == 0:
                old_logp = logp.copy()                                        # π_old: the sampler
                if cfg.algo == "ppo" and cfg.kl_coef > 0:                     # LM-PPO: shaped reward
                    tok_r = rl.kl_shaped_rewards(old_logp - ref_logp, ro.reward, mask, cfg.kl_coef,
                                                 cfg.kl_clamp)                # (N, T)
                    a, ret = rl.gae(tok_r, values, mask)                      # γ = λ = 1
                    adv = _normalised(a, mask)
                    total = tok_r.sum(axis=1)                                 # (N,)
                    rec.update(score=float(ro.reward.mean()), total_reward=float(total.mean()),
                               kl_reward=float((total - ro.reward).mean()))
                elif cfg.algo == "ppo":
                    ret, adv = _ppo_targets(ro.reward, values, mask)
            loss, dlogp = rl.policy_loss(logp, old_logp, adv, mask, loss_type, cfg.eps_low, cfg.eps_high,
                                         cfg.beta, ref_logp, max_len)
            info = {"clip_frac": rl.clip_fraction(np.exp(logp - old_logp), adv[:, None] if adv.ndim == 1 else adv,
                                                  mask, cfg.eps_low, cfg.eps_high)}
            if cfg.beta > 0:
                info["kl"] = float((rl.kl_k3(ref_logp - logp) * mask).sum() / mask.sum())
            dvalues = None
            if cfg.algo == "ppo":
                wv = rl.aggregate_weights(mask, "dapo")
                vloss = 0.5 * (wv * (values - ret) ** 2).sum()
                dvalues = rows.reduce(cfg.vf_coef * wv * (values - ret))
                loss += cfg.vf_coef * vloss
                info["value_loss"] = float(vloss)
            if len(rows.seqs):
                policy.backward(token_logprobs_backward(probs, rows.seqs[:, 1:], rows.reduce(dlogp)), dvalues)
            else:
                policy.zero_grad()
            opt.step(policy)
            losses.append(loss)
            infos.append(info)
        rec["loss"] = float(np.mean(losses)) if losses else float("nan")
        for k in (infos[0] if infos else {}):
            rec[k] = float(np.mean([i[k] for i in infos]))
        rec["time"] = time.time() - t0
        for k, v in rec.items():
            history.setdefault(k, []).append(v)
        if callback:
            callback(step, rec)
        if verbose:
            print(f"step {step:3d}  acc {rec['accuracy']:.3f}  think {rec['think_share']:.3f}  "
                  f"chain {rec['chain_acc']:.3f}  len {rec['mean_length']:.1f}  "
                  f"all-right {rec['all_right']:.2f}  all-wrong {rec['all_wrong']:.2f}  "
                  f"{rec['time']:.1f}s", flush=True)
    return policy, history


def _record(ro, R, reward_fn):
    n_think = ro.think.sum()
    rec = {
        "accuracy": float(ro.correct.mean()),
        "think_share": float(ro.think.mean()),
        "mean_length": float(ro.length.mean()),
        "chain_acc": float(ro.chain_ok.sum() / n_think) if n_think else float("nan"),
        "teacher_chain_acc": TEACHER_CHAIN_ACC,
        "all_right": float(np.mean(R.min(axis=1) == 1)),
        "all_wrong": float(np.mean(R.max(axis=1) == 0)),
    }
    if reward_fn is not None:
        rec["reward"] = float(ro.reward.mean())
    return rec
