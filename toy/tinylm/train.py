r"""Training the tiny thinking model: SFT warm-up, then RL (GRPO, Dr. GRPO, RFT, PPO).

``train_rl`` is one loop that takes every RL algorithm through the same three steps a batch,
and only step 2 differs:

1. sample: ``rollout`` draws G answers for each of ``n_prompts`` problems (one code path for all
   algorithms) and scores them with the verifier (or a ``reward_fn``);
2. advantages: ``toy.rl.advantages`` of each group's rewards, one per answer (GRPO, Dr. GRPO,
   and RFT, which keeps the accepted answers), or, for PPO, per token from a value head V(s_t)
   (GAE, ``toy.rl.gae``, on the final reward or, with ``kl_coef`` > 0, on LM-PPO's KL-shaped
   per-token reward, ``toy.rl.kl_shaped_rewards``);
3. update (``_update``): μ epochs (passes) over the batch, each one Adam step per minibatch
   (``n_minibatches``, one by default) on ``toy.rl.policy_loss``, the per-token loss
   −min(ρA, clip(ρ, 1−ε_low, 1+ε_high)A) + β·k3 reduced with ``toy.rl.aggregate_loss``, and its
   gradient with respect to each token's log-probability, which the model backpropagates
   (plus PPO's value loss).

Step 3 only runs the model on the rows that matter (``DistinctRows``): with β = 0 a row whose
advantage is 0 has no gradient, a repeated answer is computed once, and each prompt once per
group. The loss and the gradient are those of the whole batch (``tests/test_tinylm_train.py``).

The model is computed by the speed path ``toy.tinylm.runs``, for one run or for many at once:
``train_rl_many`` trains R runs (seeds, or configs that share ``shape_key``) in one loop, each
run bit for bit what ``train_rl`` gives alone (``tests/test_tinylm_runs.py``).
"""
import time
from dataclasses import dataclass, field, fields

import numpy as np

from .. import rl
from ..prob import log_softmax
from .._blas import single_thread_blas
from .._check_args import (as_array, flag, function, generator, has_methods, instance, int_array,
                           integer, one_of, real, seed as check_seed)
from .._check_args import checked, config_fields
from . import runs
from ..progress import Progress
from .model import Adam, ModelConfig, TinyLM, token_logprobs, token_logprobs_backward
from .task import (EOS, MAX_ANSWER_LEN, N_DIGITS, PROMPT_LEN, TEACHER_CHAIN_ACC, TEACHER_ERROR_RATE,
                   check_digits, decode_rows, encode, make_prompts, prompts_of, teacher_answers,
                   verify_tokens)

__all__ = ["SFTConfig", "train_sft", "RLConfig", "Rollout", "exact_reward", "rollout",
           "train_rl", "train_rl_many", "train_rl_seeds", "CurriculumSampler", "DistinctRows"]


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
        config_fields(self)                                  # 2.0 → 2, np.int64 → int (range, cache key)
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


def _check_train_sft(cfg, callback, progress):
    if cfg is not None:
        instance(cfg, SFTConfig, "cfg")
    if callback is not None:
        function(callback, "callback")


@checked(_check_train_sft)
@single_thread_blas
def train_sft(cfg=None, callback=None, progress=None):
    """Train a fresh ``TinyLM`` by imitating the teacher (cross-entropy on answer tokens).

    Returns ``(model, history)`` with ``history = {"step": [...], "loss": [...]}``;
    ``callback(step, loss)`` is called every step. (Use ``toy.tinylm.warmup_model()`` to get
    the cached result instead of training.) ``progress``: a ``toy.progress.Progress`` to count
    the steps, None for a bar of its own (shown only where a person watches), False for none.
    """
    cfg = cfg or SFTConfig()
    rng = np.random.default_rng(cfg.seed)
    model = TinyLM(cfg.model, seed=cfg.seed)
    opt = Adam(cfg.lr)
    hist = {"step": [], "loss": []}
    bar = _bar(progress, cfg.steps, "SFT warm-up", "steps")
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
        bar.update()
    _close(progress, bar)
    return model, hist


def _bar(progress, total, what, unit):
    """The bar to count with: ``progress`` itself, a new ``Progress`` (None), or a silent one (False)."""
    if progress is None:
        return Progress(total, what, unit)
    return progress if progress is not False else Progress(total, what, unit, after=float("inf"))


def _close(progress, bar):
    if progress is None:
        bar.close()


# ============================================================================ RL
@dataclass
class RLConfig:
    algo: str = "grpo"                   # "grpo", "dr_grpo", "rft" (SFT on correct samples) or "ppo"
    steps: int = 200                     # RL steps (one batch of rollouts each)
    n_prompts: int = 32                  # prompts per step
    G: int = 8                           # samples per prompt (the group)
    lr: float = 1e-4                     # Adam learning rate (the seed's)
    mu: int = 1                          # μ: epochs (passes) over each batch (PPO in the seed: 8)
    eps_low: float = 0.2                 # ε_low of the clipped surrogate (matters only if μ > 1)
    eps_high: float = None               # ε_high (None: = eps_low; DAPO's clip-higher: 0.28)
    beta: float = 0.0                    # weight of the k3 KL penalty to the starting model
    loss_type: str = None                # toy.rl.aggregate_loss type; None: DEFAULT_LOSS_TYPE[algo]
    vf_coef: float = 0.5                 # PPO: weight of the value loss ½(V − R)²
    kl_coef: float = 0.0                 # LM-PPO (AlpacaFarm): β of the reward −β·KL_t (> 0: on)
    kl_clamp: bool = True                # LM-PPO: clamp KL_t at ≥ 0
    n_minibatches: int = 1               # an epoch: one Adam step per random minibatch
    temperature: float = 1.0             # rollout temperature (the loss uses the T = 1 policy: ≠ 1 is off-policy)
    grad_clip: float = 1.0               # clip the global gradient norm (0 = off)
    min_digits: int = 10                 # problems have min_digits..10 digits (10: all the same task)
    # the loss variants practitioners use now (toy.rl.policy_loss; toy.tinylm.variants)
    ratio_level: str = "token"           # "sequence": GSPO's ratio s_i
    loss_mode: str = "clip"              # "cispo": CISPO's clipped weight, sg
    delta: float = None                  # TRL's two-sided clip δ (None: off)
    micro_batch: int = None              # loss_type="bnpo": answers per micro-batch
    top_entropy_quantile: float = 1.0    # < 1: policy loss on the top tokens by entropy
    kl_bias_correction: bool = False     # TRL's use_bias_correction_kl

    def __post_init__(self):
        config_fields(self)                                  # 2.0 → 2, np.int64 → int (range, cache key)
        one_of(self.algo, "algo", ALGOS)
        one_of(self.ratio_level, "ratio_level", rl.RATIO_LEVELS)
        one_of(self.loss_mode, "loss_mode", rl.LOSS_MODES)
        for name in ("steps", "n_prompts", "mu"):
            integer(getattr(self, name), name, lo=1)
        integer(self.G, "G", lo=2)
        real(self.lr, "lr", lo=0, lo_open=True)
        real(self.eps_low, "eps_low", 0, 1, hi_open=self.loss_mode != "cispo")   # CISPO: 1 = no lower bound
        if self.eps_high is not None:
            real(self.eps_high, "eps_high", lo=0)
        for name in ("beta", "vf_coef", "grad_clip", "kl_coef"):
            real(getattr(self, name), name, lo=0)
        if self.kl_coef > 0 and self.algo != "ppo":
            raise ValueError(f"kl_coef must be 0 unless algo='ppo' (LM-PPO), got {self.kl_coef} with algo={self.algo!r}")
        flag(self.kl_clamp, "kl_clamp")
        integer(self.n_minibatches, "n_minibatches", 1, self.n_prompts * self.G)
        if self.loss_type is not None:
            one_of(self.loss_type, "loss_type", rl.LOSS_TYPES + ("bnpo",))
        if self.delta is not None:
            real(self.delta, "delta", lo=1, lo_open=True)
            if self.loss_mode == "cispo":
                raise ValueError("delta must be None with loss_mode='cispo' (δ caps the clipped surrogate)")
        if self.micro_batch is not None:
            integer(self.micro_batch, "micro_batch", lo=1)
            if self.loss_type != "bnpo":
                raise ValueError(f"micro_batch is only used by loss_type='bnpo', got loss_type={self.loss_type!r}")
            if self.algo == "rft" or (self.n_prompts * self.G) % (self.n_minibatches * self.micro_batch):
                raise ValueError(f"micro_batch must divide each minibatch of answers (n_prompts·G / n_minibatches = "
                                 f"{self.n_prompts * self.G} / {self.n_minibatches}; not with algo='rft'), "
                                 f"got {self.micro_batch}")
        real(self.top_entropy_quantile, "top_entropy_quantile", 0, 1)
        flag(self.kl_bias_correction, "kl_bias_correction")
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


def _check_rollout(model, digits, G, rng, temperature, reward_fn):
    if isinstance(model, runs.Stack):
        return
    has_methods(model, "model", "generate"), integer(G, "G", lo=1), generator(rng)
    real(temperature, "temperature", lo=0, lo_open=True)
    if reward_fn is not None:
        function(reward_fn, "reward_fn")
    return {"digits": check_digits(digits)}


@checked(_check_rollout)
def rollout(model, digits, G, rng, temperature=1.0, reward_fn=None):
    """Sample ``G`` answers to each problem in ``digits`` (n, 10), verify them and score them
    with ``reward_fn(answer tokens (N, L), digits (N, 10))`` → (N,) (default: ``exact_reward``).
    ``model`` may also be a ``runs.Stack`` of R policies, with ``digits``, ``rng``,
    ``temperature`` and ``reward_fn`` lists (one per run): one sampling for all, a list of R
    rollouts (what ``train_rl`` does)."""
    if isinstance(model, runs.Stack):                                             # R runs at once
        ans = runs.generate(model, np.stack([prompts_of(d) for d in digits]), G, rng, temperature, MAX_ANSWER_LEN)
        return [_scored(d, a, G, f) for d, a, f in zip(digits, ans, reward_fn)]
    if isinstance(model, TinyLM):                                                 # the speed path
        ans = runs.sample(model, prompts_of(digits), MAX_ANSWER_LEN, rng, temperature, n_repeat=G)
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
    are consecutive (``runs.Layout`` then computes each prompt once). ``expand`` maps
    per-distinct-row arrays (U, ...) back to every row (N, ...) (0 for rows not needed);
    ``reduce`` sums per-row gradients (N, ...) into (U, ...)."""

    def __init__(self, seqs, needed):
        seqs = int_array(seqs, "seqs", ndim=2)
        if np.shape(needed) != seqs.shape[:1] or np.asarray(needed).dtype != bool:
            raise ValueError(f"needed must be a boolean array of shape {seqs.shape[:1]}, got {np.shape(needed)}")
        rows = np.flatnonzero(needed)
        self.seqs, inv = np.unique(seqs[rows], axis=0, return_inverse=True)     # (U, T)
        self.index = np.full(len(seqs), -1)                                     # row → distinct row
        self.index[rows] = inv.ravel()

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


def _check_sampler(self, pool, init, success_decay, floor):
    if np.ndim(pool) < 1 or len(pool) == 0:
        raise ValueError(f"pool must be a non-empty array of prompts (P, ...), got shape {np.shape(pool)}")
    real(init, "init", 0, 1), real(success_decay, "success_decay", 0, 1)
    real(floor, "floor", 0, 1, lo_open=True)


def _check_draw(self, n, rng):
    integer(n, "n", lo=1), generator(rng)


def _check_update(self, rewards):
    if self.last is None or as_array(rewards, "rewards", ndim=2).shape[0] != len(self.last):
        raise ValueError("rewards must be (n, G) for the n prompts of the last call (call the sampler first)")


class CurriculumSampler:
    """Kimi k1.5's curriculum: draw prompts from a fixed ``pool`` (P, 10) with probability
    ∝ (1 − success rate), the success rate being a running average (weight ``success_decay``
    on the old value) updated from each batch (``train_rl`` calls ``update`` after every
    rollout). Unseen prompts start at ``init``."""

    @checked(_check_sampler)
    def __init__(self, pool, init=0.5, success_decay=0.5, floor=0.02):
        self.pool = np.asarray(pool)
        self.success = np.full(len(self.pool), float(init))
        self.success_decay, self.floor = success_decay, floor
        self.last = None

    @checked(_check_draw)
    def __call__(self, n, rng):
        p = np.maximum(1 - self.success, self.floor)
        self.last = rng.choice(len(self.pool), size=n, replace=len(self.pool) < n, p=p / p.sum())
        return self.pool[self.last]

    @checked(_check_update)
    def update(self, rewards):                                                # (n, G)
        rate = np.asarray(rewards).mean(axis=1)
        d = self.success_decay
        self.success[self.last] = d * self.success[self.last] + (1 - d) * rate


class PoolSampler:
    """Draw each batch's problems from a fixed ``pool`` (P, 10): uniformly without replacement, or
    (``curriculum=True``) by Kimi's curriculum (``CurriculumSampler``). ``drawn`` lists the indices
    of each step's draw; ``key()`` names the sampler by its rule and the pool's bytes (a cached run
    is keyed by it); ``fresh()`` is a new sampler of the same pool and rule (each run needs its own)."""

    def __init__(self, pool, curriculum=False):
        try:
            self.pool = check_digits(pool)
        except ValueError as e:
            raise ValueError(f"pool must be problems (P, {N_DIGITS}) as make_prompts gives them: "
                             f"{str(e).replace('digits must', 'they must')}") from None
        self.curriculum, self.drawn = flag(curriculum, "curriculum"), []
        if curriculum:
            self._cur = CurriculumSampler(self.pool)
            self.update = self._cur.update                      # train_rl feeds it the rewards

    def __call__(self, n, rng):
        if self.curriculum:
            self._cur(n, rng)
            idx = self._cur.last
        else:
            if n > len(self.pool):
                raise ValueError(f"pool must hold at least n_prompts = {n} problems to draw without "
                                 f"replacement, got {len(self.pool)}")
            idx = rng.choice(len(self.pool), size=n, replace=False)
        self.drawn.append(idx)
        return self.pool[idx]

    def key(self):
        import hashlib
        p = np.ascontiguousarray(self.pool, dtype=np.int64)
        return {"sampler": "curriculum" if self.curriculum else "uniform", "pool_shape": list(p.shape),
                "pool_sha256": hashlib.sha256(p.tobytes()).hexdigest()}

    def fresh(self):
        return PoolSampler(self.pool, self.curriculum)


def watching(reward_fn, watch_fn, seen):
    """``reward_fn`` (None: the verifier, ``exact_reward``), appending to ``seen`` the batch mean
    of ``watch_fn(answers, digits)``: a reward that is only watched, never trained on."""
    def fn(ans, digits):
        seen.append(float(np.mean(watch_fn(ans, digits))))
        return exact_reward(ans, digits) if reward_fn is None else reward_fn(ans, digits)
    return fn


@single_thread_blas
def train_rl(model, cfg=None, seed=0, callback=None, prompt_sampler=None, verbose=False,
             reward_fn=None, progress=None):
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

    Many runs at once: ``train_rl_many`` passes lists (one config, seed, callback, sampler and
    reward function per run); the R policies then live in one ``runs.Stack`` and every step
    below is one numpy call for all of them, each run bit for bit what it is alone (with one
    run, the stack holds one policy). ``progress``: a ``toy.progress.Progress`` that counts
    run-steps, None for a bar of its own (shown only where a person watches), False for none.
    """
    cfgs, seeds, models, callbacks, samplers, reward_fns = _runs_of(      # checked, as lists of R runs
        model, cfg, seed, callback, prompt_sampler, reward_fn, verbose)     # (R = 1: one run)
    c0, many, ppo = cfgs[0], isinstance(cfg, list), cfgs[0].algo == "ppo"
    G, rngs = c0.G, [np.random.default_rng(s) for s in seeds]
    policy = runs.Stack([m.copy().add_value_head() for m in models] if ppo else models)   # PPO: + V(s_t), the critic
    ref = runs.Stack(models) if c0.beta > 0 or c0.kl_coef > 0 else None       # π_ref: the start
    opt = runs.StackAdam([c.lr for c in cfgs], [c.grad_clip for c in cfgs])
    histories, t0 = [{} for _ in cfgs], time.time()
    bar = _bar(progress, c0.steps * len(cfgs), f"{c0.algo}, {len(cfgs)} run{'s' * (len(cfgs) > 1)}", "run-steps")
    for step in range(c0.steps):
        # 1. sample G answers to each of n_prompts problems and score them (the verifier, or reward_fn)
        digits = [make_prompts(c.n_prompts, rng, c.min_digits)[0] if ps is None else check_digits(ps(c.n_prompts, rng))
                  for c, rng, ps in zip(cfgs, rngs, samplers)]
        ros = rollout(policy, digits, G, rngs, [c.temperature for c in cfgs], reward_fns)
        for ro, ps in zip(ros, samplers):
            if hasattr(ps, "update"):                                   # a curriculum learns the success rates
                ps.update(ro.reward.reshape(-1, G))
        recs = [_record(ro, f) for ro, f in zip(ros, reward_fns)]
        # 2. advantages: one per answer from its group's G rewards (RFT keeps the accepted answers) ...
        if not ppo:
            batches = [_answers(ro, rl.advantages(ro.reward.reshape(-1, G), c.algo).ravel(), c)
                       for ro, c in zip(ros, cfgs)]
        else:
            batches = [Batch(ro.seqs, np.ones(len(ro.seqs), bool), ro.mask, None) for ro in ros]
        if ref is not None:                                             # log π_ref (β·KL, LM-PPO's reward)
            for b, (lp, _) in zip(batches, _logprobs_many(ref, batches)):
                b.ref_logp = lp
        if ppo:                                                         # ... or (PPO) one per token: GAE on V(s_t)
            for b, ro, c, rec, (lp, V) in zip(batches, ros, cfgs, recs, _logprobs_many(policy, batches, value=True)):
                b.old_logp = lp
                if c.kl_coef > 0:                                       # LM-PPO: reward −β·KL_t per token
                    b.ret, b.adv = _lm_ppo_targets(ro.reward, V, ro.mask, b.old_logp - b.ref_logp, c, rec)
                else:
                    b.ret, b.adv = _ppo_targets(ro.reward, V, ro.mask)
        # 3. update: μ epochs of Adam steps on rl.policy_loss (+ PPO's value loss)
        for rec, info in zip(recs, _update(policy, opt, batches, cfgs, rngs)):
            rec.update(info)
        for rec, history, cb in zip(recs, histories, callbacks):
            rec["time"] = time.time() - t0
            for k, v in rec.items():
                history.setdefault(k, []).append(v)
            if cb:
                cb(step, rec)
            if verbose:
                _print(step, rec)
        bar.update(len(cfgs))
    _close(progress, bar)
    out = [(policy.model(r), history) for r, history in enumerate(histories)]
    return out if many else out[0]


def train_rl_many(model, cfgs, seeds, callbacks=None, prompt_samplers=None, reward_fns=None,
                  verbose=False, progress=None):
    """``[train_rl(model, cfg, seed, ...) for cfg, seed in zip(cfgs, seeds)]``, computed together:
    the R runs share every numpy call (``toy.tinylm.runs``), each with its own generator, data,
    advantages and Adam state. Run r gives the same policy and history, bit for bit, as
    ``train_rl(model, cfgs[r], seeds[r])`` (``tests/test_tinylm_runs.py``). ``model`` is one
    ``TinyLM`` or a list of R; the configs must share ``shape_key``; ``callbacks``,
    ``prompt_samplers``, ``reward_fns``: None or one per run. Returns a list of R
    ``(policy, history)``."""
    cfgs = list(cfgs) if isinstance(cfgs, (list, tuple)) else cfgs
    if not isinstance(cfgs, list) or not cfgs:
        raise ValueError(f"cfgs must be a non-empty list of RLConfig, got {cfgs!r}")
    for name, v in (("seeds", seeds), ("callbacks", callbacks), ("prompt_samplers", prompt_samplers),
                    ("reward_fns", reward_fns)):
        if v is not None and (not isinstance(v, (list, tuple)) or len(v) != len(cfgs)):
            raise ValueError(f"{name} must be a list of {len(cfgs)} (one per config), got {v!r}")
    R = len(cfgs)
    return train_rl(model, cfgs, list(seeds), list(callbacks or [None] * R), list(prompt_samplers or [None] * R),
                    verbose, list(reward_fns or [None] * R), progress)


def train_rl_seeds(model, cfg, seeds, reward_fn=None):
    """Several seeds of one config: ``train_rl(model, cfg, seed, reward_fn=...)`` for each of
    ``seeds`` → ``(policies, history)``, ``history`` a dict of arrays shaped (seeds, steps).
    ``model``: one TinyLM, or a list of W warm-up models, seed ``s`` starting from
    ``model[s % W]`` (as ``cache.cached_train_rl_seeds(..., warmups=W)`` does with
    ``[warmup_model(SFTConfig(seed=w)) for w in range(W)]``).
    ``reward_fn``: None, one function, or a list of one per seed (e.g. each with its own record)."""
    seeds = list(seeds)
    fns = list(reward_fn) if isinstance(reward_fn, (list, tuple)) else [reward_fn] * len(seeds)
    if len(fns) != len(seeds):
        raise ValueError(f"reward_fn must be one function or a list of {len(seeds)} (one per seed), got {len(fns)}")
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    if not models:
        raise ValueError("model must be a TinyLM or a non-empty list of TinyLM (one per warm-up), got []")
    seeds = [integer(s, "seeds", lo=0) for s in seeds]
    return stack_runs([train_rl(models[s % len(models)], cfg, s, reward_fn=f) for s, f in zip(seeds, fns)])


def stack_runs(got):
    """``[(policy, history), ...]`` of R runs → ``(policies, {key: array (R, steps)})``."""
    return [p for p, _ in got], {k: np.array([np.asarray(h[k], dtype=float) for _, h in got]) for k in got[0][1]}


def _runs_of(model, cfg, seed, callback, prompt_sampler, reward_fn, verbose):
    """``train_rl``'s arguments, checked, as lists of R runs (R = 1 unless ``cfg`` is a list)."""
    flag(verbose, "verbose")
    if not isinstance(cfg, list):
        cfg, seed, callback, prompt_sampler, reward_fn = [cfg or RLConfig()], [seed], [callback], [prompt_sampler], [reward_fn]
    R = len(cfg)
    models = list(model) if isinstance(model, (list, tuple)) else [model] * R
    if len(models) != R:
        raise ValueError(f"model must be one TinyLM or a list of {R}, got {len(models)}")
    for m in models:
        instance(m, TinyLM, "model")
    for c in cfg:
        instance(c, RLConfig, "cfg")
        if shape_key(c) != shape_key(cfg[0]):
            raise ValueError("cfgs must share steps, n_prompts, G, mu, n_minibatches, PPO or not, "
                             "and whether beta or kl_coef is > 0 (train.shape_key)")
    seeds = [check_seed(s) for s in seed]
    for fs, name in ((callback, "callback"), (prompt_sampler, "prompt_sampler"), (reward_fn, "reward_fn")):
        for f in fs:
            if f is not None:
                function(f, name)
    return cfg, seeds, models, callback, prompt_sampler, reward_fn


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


def _answers(ro, adv, cfg):
    """The ``Batch`` of a rollout's answers with their advantages ``adv`` (N,) (GRPO, Dr. GRPO,
    RFT); RFT keeps only the accepted answers (A = 1). With β = 0 a row whose advantage is 0
    (its group all right, or all wrong) has no loss and no gradient: the model skips it."""
    keep = adv > 0 if cfg.algo == "rft" else np.ones(len(adv), bool)
    every = cfg.beta > 0 or cfg.top_entropy_quantile < 1        # the entropy quantile counts every answer (TRL)
    needed = adv[keep] != 0 if not every else np.ones(keep.sum(), bool)
    return Batch(ro.seqs[keep], needed, ro.mask[keep], adv[keep])


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


def _loss(logp, old_logp, values, b, cfg, entropy=None):
    """One update's loss, ``toy.rl.policy_loss`` (+ ``vf_coef`` × PPO's value loss
    ½ · token-mean (V − R)²), its gradients with respect to ``logp`` and V (N, T) (None without a
    value loss), and what is recorded of it: ``clip_frac``, ``kl`` (β > 0), ``value_loss``.
    The variants (``ratio_level`` ... ``kl_bias_correction``) go to ``policy_loss`` as they are;
    with ``top_entropy_quantile`` < 1, ``entropy`` (N, T) of the current policy selects the tokens
    (``rl.high_entropy_mask``)."""
    loss_type = cfg.loss_type or DEFAULT_LOSS_TYPE[cfg.algo]
    max_len = MAX_ANSWER_LEN if loss_type == "dr_grpo" else None
    pg_mask = rl.high_entropy_mask(entropy, b.mask, cfg.top_entropy_quantile) if cfg.top_entropy_quantile < 1 else None
    variant = (dict(ratio_level=cfg.ratio_level, loss_mode=cfg.loss_mode, delta=cfg.delta, micro_batch=cfg.micro_batch,
                    pg_mask=pg_mask, kl_bias_correction=cfg.kl_bias_correction)
               if _is_variant(cfg) or cfg.kl_bias_correction else {})      # the default: the call it always was
    loss, dlogp = rl.policy_loss(logp, old_logp, b.adv, b.mask, loss_type, cfg.eps_low, cfg.eps_high,
                                 cfg.beta, b.ref_logp, max_len, **variant)
    adv = b.adv[:, None] if b.adv.ndim == 1 else b.adv
    info = (_variant_info(logp, old_logp, adv, b.mask, cfg) if _is_variant(cfg) else
            {"clip_frac": rl.clip_fraction(np.exp(logp - old_logp), adv, b.mask, cfg.eps_low, cfg.eps_high)})
    if cfg.beta > 0:
        info["kl"] = float((rl.kl_k3(b.ref_logp - logp) * b.mask).sum() / b.mask.sum())
    dvalues = None
    if b.ret is not None:
        c = rl.aggregate_weights(b.mask, "dapo")                              # token mean
        vloss = 0.5 * (c * (values - b.ret) ** 2).sum()
        loss += cfg.vf_coef * vloss
        dvalues, info["value_loss"] = cfg.vf_coef * c * (values - b.ret), float(vloss)
    return loss, dlogp, dvalues, info


def _is_variant(cfg):
    return (cfg.ratio_level != "token" or cfg.loss_mode != "clip" or cfg.delta is not None
            or cfg.loss_type == "bnpo" or cfg.top_entropy_quantile < 1)


def _variant_info(logp, old_logp, adv, mask, cfg):
    """A variant's record (the default's stays as it was): ``clip_frac`` the share of the tokens
    whose gradient the variant changes from the unclipped ρA, clipped to 0 (clip, δ; GSPO: by its
    sequence ratio) or capped (CISPO), and ``ratio_dev`` the token mean of |ρ − 1| for the ratio
    the loss uses (GSPO: s_i on each of its tokens), ``ratio_max`` its largest value."""
    ratio = np.exp(logp - old_logp)                                            # (N, T)
    if cfg.ratio_level == "sequence":
        ratio = np.broadcast_to(np.exp(rl.sequence_log_ratio(logp, old_logp, mask))[:, None], logp.shape)
    a = np.broadcast_to(adv, logp.shape)
    if cfg.loss_mode == "cispo":
        w = rl.cispo_weight(ratio, cfg.eps_low, cfg.eps_high if cfg.eps_high is not None else cfg.eps_low)
        touched = (w != ratio) & (a != 0)
    else:
        touched = (rl.two_sided_surrogate_grad(ratio, a, cfg.eps_low, cfg.eps_high, cfg.delta) == 0) & (a != 0)
    n = mask.sum()
    return {"clip_frac": float((touched * mask).sum() / n), "ratio_dev": float((np.abs(ratio - 1) * mask).sum() / n),
            "ratio_max": float(np.max(np.where(mask > 0, ratio, 0)))}


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
def shape_key(cfg):
    """Runs whose configs share this key train together in one stack (``train_rl_many``): the
    same steps, batch shape, epochs and minibatches, PPO or not, a reference model or not."""
    return (cfg.steps, cfg.n_prompts, cfg.G, cfg.mu, cfg.n_minibatches, cfg.algo == "ppo",
            cfg.beta > 0 or cfg.kl_coef > 0)


def _row_logprobs(logits, lay):
    """log π of each row's targets at positions P−1..L−2 (R, U, S+1) and the probabilities."""
    logp = log_softmax(logits)                                                # (float32 stays float32)
    lp = np.take_along_axis(logp, lay.targets[..., None], axis=-1)[..., 0]
    return lp, np.exp(logp)


def _expand(b, lay, r, x):
    """Run r's per-row values at positions P−1..L−2 (U_r, S+1) → every row of batch ``b``
    (N, T), 0 on the prompt's targets and on rows not computed."""
    out = np.zeros((lay.u[r], b.mask.shape[1]), x.dtype)
    out[:, lay.P - 1:] = x[r, :lay.u[r]]
    return b.rows.expand(out)


def _layout(batches):
    """The ``runs.Layout`` of every batch's distinct rows (None or an empty batch: no rows)."""
    L = next((b.seqs.shape[1] for b in batches if b is not None), PROMPT_LEN + 2)
    return runs.Layout([b.rows.seqs if b is not None else np.zeros((0, L), np.int64) for b in batches])


def _logprobs_many(st, batches, value=False, keep=False):
    """One forward of every run on its batch's distinct rows (None: a run without a batch):
    for each run ``(log π (N, T), V(s_t) (N, T) or None)`` (0 on rows not computed), and with
    ``keep`` also the layout, tape and probabilities the backward needs."""
    lay = _layout(batches)
    logits, values, tape = runs.forward(st, lay)
    lp, probs = _row_logprobs(logits, lay)
    out = [(None, None) if b is None else
           (_expand(b, lay, r, lp), _expand(b, lay, r, values) if value else None)
           for r, b in enumerate(batches)]
    return (out, lay, tape, probs) if keep else out


def _entropy(probs):
    """H = −Σ_v π_v log π_v of each next-token distribution, probs (..., V) → (...)."""
    return -(probs * np.log(np.where(probs > 0, probs, 1))).sum(axis=-1)


def _update(st, opt, batches, cfgs, rngs):
    """Step 3 for every run at once: μ epochs on its batch, each one Adam step descending
    ``_loss`` on each of ``n_minibatches`` random minibatches (drawn with the run's generator),
    backpropagated from the rows computed. π_old is the policy that sampled: PPO's step 2
    computed its log-probabilities, the others take the first step's (or, with minibatches, a
    pass before it). A run with nothing to train on (RFT: no answer accepted) takes no step.
    Returns each run's mean over its steps of ``loss``, ``clip_frac`` (and ``kl``,
    ``value_loss``, a variant's ``ratio_dev``; its ``ratio_max``: the largest), NaN if it took none."""
    c0 = cfgs[0]
    if c0.n_minibatches > 1:
        need = [b if len(b.mask) and b.old_logp is None else None for b in batches]
        if any(b is not None for b in need):
            for b, (lp, _) in zip(need, _logprobs_many(st, need)):
                if b is not None:
                    b.old_logp = lp
    infos = [[] for _ in batches]
    for _ in range(c0.mu):
        mbs = [b.minibatches(c0.n_minibatches, rng) if len(b.mask) else [] for b, rng in zip(batches, rngs)]
        for j in range(max(len(m) for m in mbs)):
            cur = [m[j] if j < len(m) else None for m in mbs]
            got, lay, tape, probs = _logprobs_many(st, cur, value=st.has_value_head, keep=True)
            ent = (_entropy(probs) if any(c.top_entropy_quantile < 1 for c in cfgs) else None)   # (R, U, S+1)
            dlp = np.zeros(lay.targets.shape, st.dtype)                           # (R, U, S+1)
            dval = np.zeros(lay.targets.shape, st.dtype) if st.has_value_head else None
            for r, (mb, (logp, values)) in enumerate(zip(cur, got)):
                if mb is None:
                    continue
                mb.old_logp = logp.copy() if mb.old_logp is None else mb.old_logp
                loss, dlogp, dvalues, info = _loss(logp, mb.old_logp, values, mb, cfgs[r],
                                                   None if ent is None else _expand(mb, lay, r, ent))
                if len(mb.rows.seqs):
                    dlp[r, :lay.u[r]] = mb.rows.reduce(dlogp)[:, lay.P - 1:]
                    if dvalues is not None:
                        dval[r, :lay.u[r]] = mb.rows.reduce(dvalues)[:, lay.P - 1:]
                infos[r].append({"loss": loss, **info})
            dz = -probs * dlp[..., None]                                          # d log π_y / dz = onehot(y) − π
            np.put_along_axis(dz, lay.targets[..., None],
                              np.take_along_axis(dz, lay.targets[..., None], axis=-1) + dlp[..., None], axis=-1)
            runs.backward(st, lay, tape, dz, dval)
            opt.step(st, [r for r, mb in enumerate(cur) if mb is not None])
    out = []
    for r, (b, c) in enumerate(zip(batches, cfgs)):
        keys = (["loss", "clip_frac"] + ["kl"] * (c.beta > 0) + ["value_loss"] * (b.ret is not None)
                + ["ratio_dev", "ratio_max"] * _is_variant(c))
        out.append({k: float((np.max if k == "ratio_max" else np.mean)([i[k] for i in infos[r]])) if infos[r]
                    else float("nan") for k in keys})
    return out
