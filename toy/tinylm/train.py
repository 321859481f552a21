r"""Training the tiny thinking model: SFT warm-up, then RL (GRPO, Dr. GRPO, RFT, PPO).

``train_rl`` takes every RL algorithm through the same three steps a batch, and only step 2
differs:

1. sample: ``rollout`` draws G answers for each of ``n_prompts`` problems (one code path for all
   algorithms) and scores them with the verifier (or a ``reward_fn``);
2. advantages: ``toy.rl.advantages`` of each group's rewards, one per answer (``_group_batch``:
   GRPO, Dr. GRPO, and RFT, which keeps the accepted answers), or, for PPO, per token from a
   value head V(s_t) (``_ppo_batch``: GAE, ``toy.rl.gae``, on the final reward or, with
   ``kl_coef`` > 0, on LM-PPO's KL-shaped per-token reward, ``toy.rl.kl_shaped_rewards``);
3. update (``_update``): μ Adam steps on ``toy.rl.policy_loss``, the per-token loss
   −min(ρA, clip(ρ, 1−ε_low, 1+ε_high)A) + β·k3 reduced with ``toy.rl.aggregate_loss``, and its
   gradient with respect to each token's log-probability, which the model backpropagates
   (plus PPO's value loss).

Step 3 only runs the model on the rows that matter (``DistinctRows``): with β = 0 a row whose
advantage is 0 has no gradient, a repeated answer is computed once, and each prompt once per
group. The loss and the gradient are those of the whole batch (``tests/test_tinylm_train.py``).
"""
import time
from dataclasses import dataclass, field, fields

import numpy as np

from .. import rl
from .._blas import single_thread_blas
from .._check_args import (as_array, flag, function, generator, has_methods, instance, int_array,
                           integer, one_of, real, seed as check_seed)
from . import runs
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
        # 1. data: the teacher's answers to a fresh batch of problems
        digits, prompts = make_prompts(cfg.batch_size, rng, cfg.min_digits)
        answers = teacher_answers(digits, rng, cfg.think_prob, cfg.teacher_error_rate)
        seqs, mask = _pad_answers(prompts, answers)                           # (n, T), (n, T-1)
        # 2. loss: the token-mean NLL of the answer tokens
        lp, probs = token_logprobs(model.forward(seqs[:, :-1]), seqs[:, 1:])  # (n, T-1)
        loss = -(lp * mask).sum() / mask.sum()
        # 3. update: backpropagate d loss / d log-prob = −mask / #tokens, one Adam step
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
    mu: int = 1                          # μ: epochs on each batch (PPO in the seed: 8)
    eps_low: float = 0.2                 # ε_low of the clipped surrogate (matters only if μ > 1)
    eps_high: float = None               # ε_high (None: = eps_low; DAPO's clip-higher: 0.28)
    beta: float = 0.0                    # weight of the k3 KL penalty to the starting model
    loss_type: str = ""                  # toy.rl.aggregate_loss type; "" = the algorithm's own
    vf_coef: float = 0.5                 # PPO: weight of the value loss ½(V − R)²
    # (the next three are left out of the repr, so that printed configs stay as they were)
    kl_coef: float = field(default=0.0, repr=False)   # LM-PPO (AlpacaFarm): β of the reward −β·KL_t (> 0: on)
    kl_clamp: bool = field(default=True, repr=False)  # LM-PPO: clamp KL_t at ≥ 0
    n_minibatches: int = field(default=1, repr=False)  # an epoch: one Adam step per random minibatch
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
        integer(self.n_minibatches, "n_minibatches", 1, self.n_prompts * self.G)
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
    st = runs.Stack([model]) if isinstance(model, TinyLM) else None
    if st is not None:                                                            # the speed path
        ans = runs.generate(st, prompts_of(digits)[None], G, [rng], [temperature], MAX_ANSWER_LEN)[0]
    else:
        ans = model.generate(prompts_of(digits), MAX_ANSWER_LEN, rng, temperature, n_repeat=G)  # (N, L)
    return _scored(digits, ans, G, reward_fn)


def _scored(digits, ans, G, reward_fn):
    """The ``Rollout`` of answer tokens ``ans`` (N, L) to the problems ``digits`` (n, 10), G each."""
    prompts = prompts_of(digits)                                                  # PAD shows as '$'
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
    """RL fine-tuning of a copy of ``model`` (the input is left untouched), one batch a step in
    three steps: sample and score, advantages, update.

    ``reward_fn(answer tokens (N, L), digits (N, 10))`` → (N,) is the reward trained on, one per
    answer (default: ``exact_reward``, the verifier); ``accuracy`` is always the verifier's.

    ``prompt_sampler(n, rng)`` → digits (n, 10) replaces uniform random problems (it may have
    an ``update(rewards (n, G))`` method, see ``CurriculumSampler``); ``callback(step, rec)``
    receives each step's record. Returns ``(policy, history)``, where ``history`` maps each
    quantity to a list over steps: ``accuracy``, ``think_share``, ``mean_length``,
    ``chain_acc`` (share of think-first answers whose bracket is all right; NaN if none),
    ``teacher_chain_acc``, ``all_right`` / ``all_wrong`` (share of groups whose G rewards are
    all 1 / all 0), ``loss``, ``clip_frac``, ``kl`` (if β > 0), ``value_loss`` (PPO), ``time``
    (seconds so far); ``reward`` (mean reward trained on) if a ``reward_fn`` is given; with
    ``kl_coef`` > 0 (LM-PPO) ``score`` (mean reward), ``kl_reward`` (mean over answers of
    Σ_t −β·KL_t) and ``total_reward`` (their sum).
    """
    instance(model, TinyLM, "model"), check_seed(seed), flag(verbose, "verbose")  # argcheck
    if cfg is not None:  # argcheck
        instance(cfg, RLConfig, "cfg")
    for f, name in ((callback, "callback"), (prompt_sampler, "prompt_sampler"), (reward_fn, "reward_fn")):  # argcheck
        if f is not None:
            function(f, name)
    cfg = cfg or RLConfig()
    if batched(cfg):                                                          # one run of the stacked trainer
        return train_rl_many(model, [cfg], [seed], [callback], [prompt_sampler], [reward_fn], verbose)[0]
    rng = np.random.default_rng(seed)
    policy = model.copy()
    if cfg.algo == "ppo":
        policy.add_value_head()                                               # V(s_t), the critic
    ref = model.copy() if cfg.beta > 0 or cfg.kl_coef > 0 else None           # π_ref, the start
    opt = Adam(cfg.lr, grad_clip=cfg.grad_clip)
    history, t0 = {}, time.time()
    for step in range(cfg.steps):
        # 1. sample G answers to each of n_prompts problems and score them
        if prompt_sampler is None:
            digits, _ = make_prompts(cfg.n_prompts, rng, cfg.min_digits)
        else:
            digits = prompt_sampler(cfg.n_prompts, rng)
        ro = rollout(policy, digits, cfg.G, rng, cfg.temperature, reward_fn)
        if hasattr(prompt_sampler, "update"):
            prompt_sampler.update(ro.reward.reshape(cfg.n_prompts, cfg.G))
        rec = _record(ro, reward_fn)
        # 2. advantages: per answer from its group's rewards, or (PPO) per token from V(s_t)
        batch = _ppo_batch(policy, ref, ro, cfg, rec) if cfg.algo == "ppo" else _group_batch(ro, ref, cfg)
        # 3. update: μ Adam steps on the clipped policy loss (+ PPO's value loss)
        rec.update(_update(policy, opt, batch, cfg, rng))
        rec["time"] = time.time() - t0
        for k, v in rec.items():
            history.setdefault(k, []).append(v)
        if callback:
            callback(step, rec)
        if verbose:
            _print(step, rec)
    return policy, history


@dataclass
class Batch:
    """What the update trains on: the rows of one rollout with their advantages."""
    seqs: np.ndarray            # (N, T + 1) prompt + answer tokens
    needed: np.ndarray          # (N,) the rows with a gradient (``rows`` computes only those)
    mask: np.ndarray            # (N, T) the loss mask
    adv: np.ndarray             # (N,) one advantage per answer, or (N, T) per token (PPO)
    ref_logp: np.ndarray = None  # (N, T) log π_ref (None if neither β nor kl_coef is > 0)
    old_logp: np.ndarray = None  # (N, T) log π_old (PPO's step 2; else set by the update)
    ret: np.ndarray = None      # (N, T) PPO's value targets (None: no value loss)

    def __post_init__(self):
        self.rows = DistinctRows(self.seqs, self.needed)    # the distinct rows the model computes

    def minibatches(self, n, rng):
        """The batch as ``n`` minibatches of random rows, drawn with ``rng`` (n = 1: itself)."""
        if n == 1:
            return [self]
        arrays = [getattr(self, f.name) for f in fields(self)]
        return [Batch(*(None if x is None else x[i] for x in arrays))
                for i in np.array_split(rng.permutation(len(self.mask)), n) if len(i)]


def _batch(seqs, mask, adv, needed, ref):
    """The rows to compute (``needed``, distinct, prompts shared) and log π_ref on them."""
    b = Batch(seqs, needed, mask, adv)
    if ref is not None and len(seqs):
        b.ref_logp = b.rows.expand(ref.logprobs(b.rows.seqs, **b.rows.share))
    return b


def _group_batch(ro, ref, cfg):
    """Step 2 of GRPO, Dr. GRPO and RFT: ``toy.rl.advantages`` of each group's G rewards, one per
    answer; RFT keeps only the accepted answers (A = 1). With β = 0 a row whose advantage is 0
    (its group all right, or all wrong) has no loss and no gradient: the model skips it."""
    adv = rl.advantages(ro.reward.reshape(-1, cfg.G), cfg.algo).ravel()       # (N,)
    keep = adv > 0 if cfg.algo == "rft" else np.ones(len(adv), bool)
    needed = adv[keep] != 0 if cfg.beta == 0 else np.ones(keep.sum(), bool)
    return _batch(ro.seqs[keep], ro.mask[keep], adv[keep], needed, ref)


def _ppo_batch(policy, ref, ro, cfg, rec):
    """Step 2 of PPO: log π_old and V(s_t) of every row, then per-token advantages and value
    targets, GAE with γ = λ = 1 (``toy.rl.gae``): A_t = (return to the end) − V(s_t), normalised
    over the batch. With ``kl_coef`` = 0 the return is the final reward (``_ppo_targets``); with
    ``kl_coef`` > 0 (LM-PPO) the per-token reward is shaped by the KL to π_ref
    (``_lm_ppo_targets``), whose parts are added to ``rec``."""
    b = _batch(ro.seqs, ro.mask, None, np.ones(len(ro.seqs), bool), ref)
    b.old_logp, _, values = _logprobs(policy, b.rows, ro.mask.shape, value=True)
    if cfg.kl_coef > 0:
        b.ret, b.adv = _lm_ppo_targets(ro.reward, values, ro.mask, b.old_logp - b.ref_logp, cfg, rec)
    else:
        b.ret, b.adv = _ppo_targets(ro.reward, values, ro.mask)
    return b


def _ppo_targets(reward, values, mask):
    """PPO's value targets and advantages, per token (GAE with γ = λ = 1): every token's return
    is its answer's final reward R (N,), A_t = R − V(s_t) with ``values`` (N, T), normalised
    over the tokens of ``mask`` (N, T) (as CleanRL). Returns ``(ret, adv)``, both (N, T)."""
    ret = np.broadcast_to(reward[:, None], values.shape)                      # return = final reward
    return ret, _normalised(ret - values, mask)                               # A_t = R − V(s_t)


def _lm_ppo_targets(reward, values, mask, kl, cfg, rec):
    """LM-PPO's (AlpacaFarm) targets: the per-token reward −β·max(KL_t, 0) plus the reward on the
    last token (``toy.rl.kl_shaped_rewards``, β = ``kl_coef``, KL_t = log π_old − log π_ref on
    the sampled tokens), then GAE. Records ``score``, ``total_reward`` and ``kl_reward`` in
    ``rec``. Returns ``(ret, adv)``, both (N, T)."""
    tok_r = rl.kl_shaped_rewards(kl, reward, mask, cfg.kl_coef, cfg.kl_clamp)  # (N, T)
    adv, ret = rl.gae(tok_r, values, mask)                                     # γ = λ = 1
    total = tok_r.sum(axis=1)                                                  # (N,)
    rec.update(score=float(reward.mean()), total_reward=float(total.mean()),
               kl_reward=float((total - reward).mean()))
    return ret, _normalised(adv, mask)


def _normalised(a, mask):
    """Advantages ``a`` (N, T) standardised over the tokens of ``mask`` (as CleanRL)."""
    mu = (a * mask).sum() / mask.sum()
    sd = np.sqrt((((a - mu) * mask) ** 2).sum() / mask.sum())
    return (a - mu) / (sd + 1e-8)


def _logprobs(policy, rows, shape, value=False):
    """One forward pass of ``policy`` on the distinct rows: log π(a_t | s_t) of every row
    (``shape`` (N, T); 0 on rows not needed), the distinct rows' probabilities (for the
    backward) and, with ``value``, V(s_t) (N, T) (else None)."""
    if len(rows.seqs) == 0:                                                   # nothing to compute
        return np.zeros(shape), None, np.zeros(shape) if value else None
    if value:
        logits, values = policy.forward(rows.seqs[:, :-1], value=True, **rows.share)   # (U, T, V), (U, T)
    else:
        logits, values = policy.forward(rows.seqs[:, :-1], **rows.share), None         # (U, T, V)
    logp, probs = token_logprobs(logits, rows.seqs[:, 1:])                    # (U, T)
    return rows.expand(logp), probs, None if values is None else rows.expand(values)


def _update(policy, opt, b, cfg, rng):
    """Step 3: μ epochs on the batch ``b``, each one Adam step descending ``_loss`` on each of
    ``cfg.n_minibatches`` random minibatches (drawn with ``rng``), backpropagated from the rows
    computed. π_old is the policy that sampled: PPO's step 2 computed its log-probabilities, the
    others take the first step's (or, with minibatches, a pass before it). Returns the mean over
    the steps of ``loss``, ``clip_frac`` (and ``kl``, ``value_loss``), NaN if there is nothing to
    train on (RFT: no answer accepted)."""
    if b.old_logp is None and cfg.n_minibatches > 1 and len(b.mask):
        b.old_logp = _logprobs(policy, b.rows, b.mask.shape)[0]
    infos = []
    for _ in range(cfg.mu if len(b.mask) else 0):
        for mb in b.minibatches(cfg.n_minibatches, rng):
            logp, probs, values = _logprobs(policy, mb.rows, mb.mask.shape, value=mb.ret is not None)
            mb.old_logp = logp.copy() if mb.old_logp is None else mb.old_logp
            loss, dlogp, dvalues, info = _loss(logp, mb.old_logp, values, mb, cfg)
            if len(mb.rows.seqs):
                dvalues = None if dvalues is None else mb.rows.reduce(dvalues)
                policy.backward(token_logprobs_backward(probs, mb.rows.seqs[:, 1:], mb.rows.reduce(dlogp)),
                                dvalues)
            else:
                policy.zero_grad()                                            # a zero gradient
            opt.step(policy)
            infos.append({"loss": loss, **info})
    keys = ["loss", "clip_frac"] + ["kl"] * (cfg.beta > 0) + ["value_loss"] * (b.ret is not None)
    return {k: float(np.mean([i[k] for i in infos])) if infos else float("nan") for k in keys}


def _loss(logp, old_logp, values, b, cfg):
    """One update's loss, ``toy.rl.policy_loss`` (+ ``vf_coef`` × PPO's value loss
    ½ · token-mean (V − R)²), its gradients with respect to ``logp`` and V (N, T) (None without a
    value loss), and what is recorded of it: ``clip_frac``, ``kl`` (β > 0), ``value_loss``."""
    loss_type = cfg.loss_type or DEFAULT_LOSS_TYPE[cfg.algo]
    max_len = MAX_ANSWER_LEN if loss_type == "dr_grpo" else None
    loss, dlogp = rl.policy_loss(logp, old_logp, b.adv, b.mask, loss_type, cfg.eps_low, cfg.eps_high,
                                 cfg.beta, b.ref_logp, max_len)
    adv = b.adv[:, None] if b.adv.ndim == 1 else b.adv
    info = {"clip_frac": rl.clip_fraction(np.exp(logp - old_logp), adv, b.mask, cfg.eps_low, cfg.eps_high)}
    if cfg.beta > 0:
        info["kl"] = float((rl.kl_k3(b.ref_logp - logp) * b.mask).sum() / b.mask.sum())
    dvalues = None
    if b.ret is not None:
        c = rl.aggregate_weights(b.mask, "dapo")                              # token mean
        vloss = 0.5 * (c * (values - b.ret) ** 2).sum()
        loss += cfg.vf_coef * vloss
        dvalues, info["value_loss"] = cfg.vf_coef * c * (values - b.ret), float(vloss)
    return loss, dlogp, dvalues, info


def _record(ro, reward_fn):
    """What step 1 sampled: the verifier's accuracy, the answers' format and length, and the
    shares of groups with no signal (``toy.rl.mixed_groups``), their G rewards all 1 or all 0."""
    R = ro.reward.reshape(-1, ro.G)                                           # (B, G)
    flat = ~rl.mixed_groups(R)                                                # (B,) all equal
    n_think = ro.think.sum()
    rec = {
        "accuracy": float(ro.correct.mean()),
        "think_share": float(ro.think.mean()),
        "mean_length": float(ro.length.mean()),
        "chain_acc": float(ro.chain_ok.sum() / n_think) if n_think else float("nan"),
        "teacher_chain_acc": TEACHER_CHAIN_ACC,
        "all_right": float(np.mean(flat & (R[:, 0] == 1))),
        "all_wrong": float(np.mean(flat & (R[:, 0] == 0))),
    }
    if reward_fn is not None:
        rec["reward"] = float(ro.reward.mean())
    return rec


def _print(step, rec):
    print(f"step {step:3d}  acc {rec['accuracy']:.3f}  think {rec['think_share']:.3f}  "
          f"chain {rec['chain_acc']:.3f}  len {rec['mean_length']:.1f}  "
          f"all-right {rec['all_right']:.2f}  all-wrong {rec['all_wrong']:.2f}  "
          f"{rec['time']:.1f}s", flush=True)


# ============================================================================ RL, many runs at once
def batched(cfg):
    """True if ``cfg`` trains through ``train_rl_many`` (every algorithm but PPO)."""
    return cfg.algo != "ppo"


def shape_key(cfg):
    """Runs whose configs share this key train together in one stack (``train_rl_many``)."""
    return (cfg.steps, cfg.n_prompts, cfg.G, cfg.mu, cfg.n_minibatches, cfg.beta > 0)


@single_thread_blas
def train_rl_many(model, cfgs, seeds, callbacks=None, prompt_samplers=None, reward_fns=None,
                  verbose=False, progress=None):
    """``[train_rl(model, cfg, seed, ...) for cfg, seed in zip(cfgs, seeds)]``, computed together:
    the R runs share every numpy call (``toy.tinylm.runs``), each with its own generator, data,
    advantages and Adam state. Run r gives the same policy and history, bit for bit, as
    ``train_rl(model, cfgs[r], seeds[r])`` (``tests/test_tinylm_runs.py``). ``model`` is one
    ``TinyLM`` or a list of R; the configs must share ``shape_key`` and not be PPO (``batched``);
    ``callbacks``, ``prompt_samplers``, ``reward_fns``: None or one per run. ``progress``
    (a ``toy.progress.Progress`` or None) is advanced once per step.
    Returns a list of R ``(policy, history)``."""
    cfgs, seeds = list(cfgs), [check_seed(s) for s in seeds]
    R = len(cfgs)
    if R == 0 or len(seeds) != R:
        raise ValueError(f"cfgs and seeds must be non-empty and of one length, got {R} and {len(seeds)}")
    for c in cfgs:
        instance(c, RLConfig, "cfgs")
        if not batched(c):
            raise ValueError(f"cfgs: train_rl_many does not train algo={c.algo!r} (use train_rl)")
        if shape_key(c) != shape_key(cfgs[0]):
            raise ValueError("cfgs must share steps, n_prompts, G, mu, n_minibatches and whether beta > 0")
    models = list(model) if isinstance(model, (list, tuple)) else [model] * R
    if len(models) != R:
        raise ValueError(f"model: one TinyLM or a list of {R}, got {len(models)}")
    for m in models:
        instance(m, TinyLM, "model")
    lists = {}
    for name, v in (("callbacks", callbacks), ("prompt_samplers", prompt_samplers), ("reward_fns", reward_fns)):
        v = [None] * R if v is None else list(v)
        if len(v) != R:
            raise ValueError(f"{name} must be None or a list of {R}, got {len(v)}")
        for f in v:
            if f is not None:
                function(f, name)
        lists[name] = v
    cb, samplers, rfs = lists["callbacks"], lists["prompt_samplers"], lists["reward_fns"]
    c0 = cfgs[0]
    rngs = [np.random.default_rng(s) for s in seeds]
    st = runs.Stack(models)
    ref = runs.Stack(models) if c0.beta > 0 else None
    opt = runs.StackAdam([c.lr for c in cfgs], [c.grad_clip for c in cfgs])
    hists, t0 = [{} for _ in range(R)], time.time()
    for step in range(c0.steps):
        # 1. sample G answers to each of n_prompts problems, every run at once, and score them
        digits = [make_prompts(c.n_prompts, rng, c.min_digits)[0] if f is None else _digits(f(c.n_prompts, rng))
                  for c, rng, f in zip(cfgs, rngs, samplers)]
        ans = runs.generate(st, np.stack([prompts_of(d) for d in digits]), c0.G, rngs,
                            [c.temperature for c in cfgs], MAX_ANSWER_LEN)
        ros = [_scored(d, a, c0.G, f) for d, a, f in zip(digits, ans, rfs)]
        recs = []
        for ro, f, smp in zip(ros, rfs, samplers):
            if hasattr(smp, "update"):
                smp.update(ro.reward.reshape(c0.n_prompts, c0.G))
            recs.append(_record(ro, f))
        # 2. advantages, per answer from its group's rewards
        batches = [_group_batch(ro, None, c) for ro, c in zip(ros, cfgs)]
        if ref is not None:
            _ref_logprobs(ref, batches)
        # 3. update: μ Adam steps on the clipped policy loss, every run at once
        for rec, info in zip(recs, _update_many(st, opt, batches, cfgs, rngs)):
            rec.update(info)
        for r, rec in enumerate(recs):
            rec["time"] = time.time() - t0
            for k, v in rec.items():
                hists[r].setdefault(k, []).append(v)
            if cb[r]:
                cb[r](step, rec)
            if verbose:
                _print(step, rec)
        if progress is not None:
            progress.update(R)
    return [(st.model(r), hists[r]) for r in range(R)]


def _row_logprobs(logits, lay):
    """log π of each row's targets at positions P−1..L−2 (R, U, S+1) and the probabilities."""
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    lp = np.take_along_axis(logp, lay.targets[..., None], axis=-1)[..., 0]
    return lp, np.exp(logp)


def _full(lay, r, lp, shape):
    """Run r's log-probs (U_r, S+1) as (U_r, T) (0 on the prompt's targets)."""
    out = np.zeros((lay.u[r], shape), np.float32)
    out[:, lay.P - 1:] = lp[r, :lay.u[r]]
    return out


def _ref_logprobs(ref, batches):
    """log π_ref (N, T) of every batch's rows, all runs in one forward."""
    lay = runs.Layout([b.rows.seqs for b in batches])
    lp, _ = _row_logprobs(runs.forward(ref, lay)[0], lay)
    for r, b in enumerate(batches):
        b.ref_logp = b.rows.expand(_full(lay, r, lp, b.mask.shape[1])) if len(b.seqs) else np.zeros(b.mask.shape)


def _update_many(st, opt, batches, cfgs, rngs):
    """``_update`` for every run at once: each run's μ epochs of minibatches, one Adam step per
    minibatch of every run that has one. Returns each run's record of the update."""
    R = len(batches)
    c0 = cfgs[0]
    if c0.n_minibatches > 1:                                                      # π_old: a pass before the first step
        _logprobs_many(st, [b if len(b.mask) else None for b in batches])
    infos = [[] for _ in range(R)]
    for _ in range(c0.mu):
        mbs = [b.minibatches(c0.n_minibatches, rng) if len(b.mask) else [] for b, rng in zip(batches, rngs)]
        for j in range(max(len(m) for m in mbs)):
            cur = [m[j] if j < len(m) else None for m in mbs]
            got = _logprobs_many(st, cur, keep=True)
            if got is None:
                break
            lay, tape, lp, probs = got
            drows = np.zeros(lp.shape, np.float32)
            for r, mb in enumerate(cur):
                if mb is None:
                    continue
                logp = mb.rows.expand(_full(lay, r, lp, mb.mask.shape[1])) if len(mb.rows.seqs) else np.zeros(mb.mask.shape)
                mb.old_logp = logp.copy() if mb.old_logp is None else mb.old_logp
                loss, dlogp, _, info = _loss(logp, mb.old_logp, None, mb, cfgs[r])
                if len(mb.rows.seqs):
                    drows[r, :lay.u[r]] = mb.rows.reduce(dlogp)[:, lay.P - 1:]
                infos[r].append({"loss": loss, **info})
            dz = -probs * drows[..., None]                                        # d log π_y / dz = onehot(y) − π
            np.put_along_axis(dz, lay.targets[..., None],
                              np.take_along_axis(dz, lay.targets[..., None], axis=-1) + drows[..., None], axis=-1)
            runs.backward(st, lay, tape, dz)
            opt.step(st, [r for r, mb in enumerate(cur) if mb is not None])
    out = []
    for r, c in enumerate(cfgs):
        keys = ["loss", "clip_frac"] + ["kl"] * (c.beta > 0)
        out.append({k: float(np.mean([i[k] for i in infos[r]])) if infos[r] else float("nan") for k in keys})
    return out


def _logprobs_many(st, batches, keep=False):
    """One forward of every run on its batch's distinct rows (None: a run without a batch).
    With ``keep``, returns (layout, tape, log-probs, probabilities); else sets each batch's
    ``old_logp``."""
    if all(b is None for b in batches):
        return None
    seqs = [b.rows.seqs if b is not None else None for b in batches]
    L = next(s.shape[1] for s in seqs if s is not None)
    lay = runs.Layout([s if s is not None else np.zeros((0, L), np.int64) for s in seqs])
    logits, tape = runs.forward(st, lay)
    lp, probs = _row_logprobs(logits, lay)
    if keep:
        return lay, tape, lp, probs
    for r, b in enumerate(batches):
        if b is not None:
            b.old_logp = b.rows.expand(_full(lay, r, lp, b.mask.shape[1])) if len(b.rows.seqs) else np.zeros(b.mask.shape)
    return None
