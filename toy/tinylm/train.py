r"""Training the tiny thinking model: SFT warm-up, then RL (GRPO, Dr. GRPO, RFT, PPO).

``train_rl`` is the textbook loop, one run on one ``TinyLM``, and every RL algorithm goes through
the same three steps a batch; only step 2 differs:

1. sample: ``rollout`` draws G answers for each of ``n_prompts`` problems and scores them with
   the verifier (or a ``reward_fn``);
2. advantages: ``toy.rl.advantages`` of each group's rewards, one per answer (GRPO, Dr. GRPO,
   and RFT, which keeps the accepted answers), or, for PPO, per token from a value head V(s_t)
   (``toy.rl.ppo_targets``: R − V(s_t), or GAE on LM-PPO's KL-shaped per-token reward);
3. update: μ epochs (passes) over the batch, each one Adam step per minibatch (``n_minibatches``,
   one by default) on ``toy.rl.policy_loss`` (and PPO's ``toy.rl.value_loss``), backpropagated
   through ``TinyLM.backward``.

``toy.tinylm.many.train_rl_many`` trains R runs at once (the speed path every cached and recorded
run goes through); ``tests/test_tinylm_many.py`` shows each of its runs equals ``train_rl``.
"""
from dataclasses import dataclass, field

import numpy as np

from .. import rl
from .._blas import single_thread_blas
from .._check_args import (as_array, flag, function, generator, has_methods, instance,
                           integer, one_of, real, seed as check_seed)
from .._check_args import checked, config_fields
from . import runs
from .model import Adam, ModelConfig, TinyLM, token_logprobs, token_logprobs_backward
from .records import Records, close_bar, progress_bar
from .task import (EOS, MAX_ANSWER_LEN, N_DIGITS, PROMPT_LEN, TEACHER_ERROR_RATE,
                   check_digits, decode_rows, encode, make_prompts, prompts_of, teacher_answers,
                   verify_tokens)

__all__ = ["SFTConfig", "train_sft", "RLConfig", "ALGOS", "Rollouts", "exact_reward", "rollout",
           "train_rl", "CurriculumSampler", "PoolSampler"]


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
    bar = progress_bar(progress, cfg.steps, "SFT warm-up", "steps")
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
    close_bar(progress, bar)
    return model, hist


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
    loss_type: str = None                # toy.rl.aggregate_loss type; None: toy.rl.DEFAULT_LOSS_TYPE[algo]
    vf_coef: float = 0.5                 # PPO: weight of the value loss ½(V − R)²
    kl_coef: float = 0.0                 # LM-PPO (AlpacaFarm): β of the reward −β·KL_t (> 0: on)
    kl_clamp: bool = True                # LM-PPO: clamp KL_t at ≥ 0
    n_minibatches: int = 1               # an epoch: one Adam step per random minibatch
    temperature: float = 1.0             # rollout temperature (the loss uses the T = 1 policy: ≠ 1 is off-policy)
    grad_clip: float = 1.0               # clip the global gradient norm (0 = off)
    min_digits: int = 10                 # problems have min_digits..10 digits (10: all the same task)
    # the loss variants practitioners use now (toy.rl.policy_loss; toy.tinylm.variants)
    ratio_level: str = "token"           # "sequence": GSPO's ratio s_i
    loss_mode: str = "clip"              # "cispo": CISPO's clipped weight, sg; "sapo": SAPO's soft gate
    delta: float = None                  # TRL's two-sided clip δ (None: off)
    micro_batch: int = None              # loss_type="bnpo": answers per micro-batch
    top_entropy_quantile: float = 1.0    # < 1: policy loss on the top tokens by entropy
    kl_bias_correction: bool = False     # TRL's use_bias_correction_kl
    tau_pos: float = 1.0                 # loss_mode="sapo": the gate's τ where A > 0 (verl tau_pos)
    tau_neg: float = 1.05                # ... and where A ≤ 0 (verl tau_neg)
    cispo_cap: float = None              # loss_mode="cispo": the weight's cap itself, TRL's epsilon_high (None: 1 + eps_high)
    entropy_micro_batches: int = 1       # top_entropy_quantile < 1: a threshold per micro-batch, TRL's (k of each minibatch)

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
            if self.loss_mode != "clip":
                raise ValueError(f"delta must be None with loss_mode={self.loss_mode!r} (δ caps the clipped surrogate)")
        if self.micro_batch is not None:
            integer(self.micro_batch, "micro_batch", lo=1)
            if self.loss_type != "bnpo":
                raise ValueError(f"micro_batch is only used by loss_type='bnpo', got loss_type={self.loss_type!r}")
            self._divides_minibatches(self.micro_batch, "micro_batch")
        real(self.top_entropy_quantile, "top_entropy_quantile", 0, 1)
        real(self.tau_pos, "tau_pos", lo=0, lo_open=True), real(self.tau_neg, "tau_neg", lo=0, lo_open=True)
        if self.loss_mode == "sapo" and self.loss_type not in (None, "grpo"):
            raise ValueError(f"loss_type must be None or 'grpo' with loss_mode='sapo' (verl and TRL aggregate SAPO "
                             f"as the mean of per-answer token means), got {self.loss_type!r}")
        if self.cispo_cap is not None:
            real(self.cispo_cap, "cispo_cap", lo=0, lo_open=True)
            if self.loss_mode != "cispo" or self.eps_high is not None or self.cispo_cap < 1 - self.eps_low:
                raise ValueError(f"cispo_cap needs loss_mode='cispo', eps_high=None and eps_low >= 1 - cispo_cap "
                                 f"(TRL's CISPO: eps_low=1.0, no lower bound), got {self.cispo_cap} with "
                                 f"loss_mode={self.loss_mode!r}, eps_high={self.eps_high}, eps_low={self.eps_low}")
        if integer(self.entropy_micro_batches, "entropy_micro_batches", lo=1) > 1:
            if self.top_entropy_quantile == 1:
                raise ValueError("entropy_micro_batches is only used with top_entropy_quantile < 1")
            self._divides_minibatches(self.entropy_micro_batches, "entropy_micro_batches")
        flag(self.kl_bias_correction, "kl_bias_correction")
        real(self.temperature, "temperature", lo=0, lo_open=True)
        integer(self.min_digits, "min_digits", 1, N_DIGITS)

    def _divides_minibatches(self, k, name):
        """Refuse ``k`` (micro-batches, or answers per micro-batch) unless it divides each minibatch."""
        if self.algo == "rft" or (self.n_prompts * self.G) % (self.n_minibatches * k):
            raise ValueError(f"{name} must divide each minibatch of answers (n_prompts·G / n_minibatches = "
                             f"{self.n_prompts * self.G} / {self.n_minibatches}; not with algo='rft'), got {k}")

    def loss_args(self):
        """``rl.policy_loss``'s keywords for this config (``loss_type``: ``rl.DEFAULT_LOSS_TYPE[algo]``
        unless given, ``"grpo"`` for SAPO; Dr. GRPO's constant normaliser: ``MAX_ANSWER_LEN``)."""
        loss_type = self.loss_type or ("grpo" if self.loss_mode == "sapo" else rl.DEFAULT_LOSS_TYPE[self.algo])
        return dict(loss_type=loss_type, eps_low=self.eps_low, eps_high=self.eps_high, beta=self.beta,
                    max_len=MAX_ANSWER_LEN if loss_type == "dr_grpo" else None, ratio_level=self.ratio_level,
                    loss_mode=self.loss_mode, delta=self.delta, micro_batch=self.micro_batch,
                    kl_bias_correction=self.kl_bias_correction, tau_pos=self.tau_pos, tau_neg=self.tau_neg,
                    cispo_cap=self.cispo_cap)


ALGOS = ("grpo", "dr_grpo", "rft", "ppo")


@dataclass
class Rollouts:
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
    """The ``Rollouts`` of answer tokens ``ans`` (N, L) to the problems ``digits`` (n, 10), G each."""
    prompts = prompts_of(digits)                                                  # PAD shows as '$'
    digits, prompts = np.repeat(digits, G, axis=0), np.repeat(prompts, G, axis=0)  # (N, ...)
    answers = decode_rows(ans)
    v = verify_tokens(ans, digits)
    reward = v["reward"] if reward_fn is None else _checked_reward(reward_fn(ans, digits), len(ans))
    return Rollouts(digits, np.concatenate([prompts, ans], axis=1), _answer_mask(ans), answers,
                   reward, v["reward"], v["think"], v["chain_ok"], v["length"], G)


def _checked_reward(r, n):
    r = np.asarray(r, dtype=float)
    if r.shape != (n,) or not np.all(np.isfinite(r)):
        raise ValueError(f"reward_fn must return {n} finite rewards (one per answer), got shape {r.shape}")
    return r



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



def _check_train_rl(policy, cfg, seed, reward_fn, prompt_sampler, callback, verbose, progress):
    instance(policy, TinyLM, "policy")
    if cfg is not None:
        instance(cfg, RLConfig, "cfg")
    for f, name in ((reward_fn, "reward_fn"), (prompt_sampler, "prompt_sampler"), (callback, "callback")):
        if f is not None:
            function(f, name)
    return {"cfg": cfg or RLConfig(), "seed": check_seed(seed), "verbose": flag(verbose, "verbose")}


@checked(_check_train_rl)
@single_thread_blas
def train_rl(policy, cfg=None, seed=0, reward_fn=None, prompt_sampler=None, callback=None, verbose=False,
             progress=None):
    """RL fine-tuning of a copy of ``policy`` with ``cfg.algo``, one batch a step: sample and score
    (``reward_fn(answer tokens, digits)`` → (N,), default: the verifier; ``prompt_sampler(n, rng)``
    → the problems), advantages, μ epochs of Adam steps on ``rl.policy_loss``. Returns ``(policy,
    history)``, per step: ``reward``, ``accuracy`` (the verifier's), ``think_share``,
    ``mean_length``, ``chain_acc``, ``degenerate`` (groups with no signal: ``all_right`` +
    ``all_wrong``), ``loss``, ``clip_frac``, where they apply ``mean_abs_adv``, ``kl``,
    ``value_loss``, LM-PPO's ``score``/``kl_reward``/``total_reward``, ``ratio_dev``/``ratio_max``;
    and ``time``. ``callback(step, record)``."""
    rng, ppo = np.random.default_rng(seed), cfg.algo == "ppo"
    ref, policy = policy.copy(), policy.copy()                             # π_ref: the start, kept
    if ppo:
        policy.add_value_head()                                            # PPO's critic V(s_t)
    opt, log = Adam(cfg.lr, grad_clip=cfg.grad_clip), Records(cfg, prompt_sampler, callback, verbose, progress)
    for step in range(cfg.steps):
        # 1. sample G answers to each of n_prompts problems and score them (the verifier, or reward_fn)
        digits = draw_problems(cfg, rng, prompt_sampler)
        ro = rollout(policy, digits, cfg.G, rng, cfg.temperature, reward_fn)
        log.sampled(ro)
        # 2. advantages: one per answer from its group's G rewards (RFT keeps the accepted answers) ...
        x, y, mask = ro.seqs[:, :-1], ro.seqs[:, 1:], ro.mask                  # inputs, next tokens, answer tokens
        ref_logp = old_logp = None
        if not ppo:
            adv = rl.advantages(ro.reward.reshape(-1, cfg.G), cfg.algo).ravel()   # (B·G,)
            keep = adv > 0 if cfg.algo == "rft" else slice(None)
            x, y, mask, adv = x[keep], y[keep], mask[keep], adv[keep]
        if cfg.beta > 0 or cfg.kl_coef > 0:
            ref_logp = token_logprobs(ref.forward(x), y)[0]                # log π_ref
        if ppo:                                                            # ... or (PPO) per token, on V(s_t)
            logits, values = policy.forward(x, value=True)
            old_logp, r = token_logprobs(logits, y)[0], ro.reward
            if cfg.kl_coef > 0:                                            # LM-PPO: r_t = −β·KL_t, + the score at the end
                r = log.shaped(ro.reward, rl.kl_shaped_rewards(old_logp - ref_logp, ro.reward, mask, cfg.kl_coef,
                                                               cfg.kl_clamp))
            ret, adv = rl.ppo_targets(r, values, mask)
        elif cfg.n_minibatches > 1 and len(x):
            old_logp = token_logprobs(policy.forward(x), y)[0]             # π_old before the first step
        # 3. update: μ epochs, each one Adam step on rl.policy_loss (+ PPO's value loss) per minibatch
        for _ in range(cfg.mu if len(x) else 0):
            for i in minibatches(len(x), cfg.n_minibatches, rng):
                logits, values = policy.forward(x[i], value=True) if ppo else (policy.forward(x[i]), None)
                logp, probs = token_logprobs(logits, y[i])
                old_logp = logp.copy() if old_logp is None else old_logp   # π_old: the policy that sampled
                ref_i = None if ref_logp is None else ref_logp[i]
                pg_mask = (rl.high_entropy_mask(entropy(probs), mask[i], cfg.top_entropy_quantile,
                                                cfg.entropy_micro_batches) if cfg.top_entropy_quantile < 1 else None)
                loss, dlogp = rl.policy_loss(logp, old_logp[i], adv[i], mask[i], ref_logp=ref_i, pg_mask=pg_mask,
                                             **cfg.loss_args())
                vloss, dvalues = rl.value_loss(values, ret[i], mask[i], cfg.vf_coef) if ppo else (None, None)
                policy.backward(token_logprobs_backward(probs, y[i], dlogp), dvalues)
                opt.step(policy)
                log.updated(loss, vloss, logp, old_logp[i], adv[i], mask[i], ref_i)
        log.end_step(step)
    return policy, log.close()


def draw_problems(cfg, rng, prompt_sampler=None):
    """A step's ``n_prompts`` problems (n, 10): random ones with ``min_digits``..10 digits, or
    ``prompt_sampler(n, rng)``'s."""
    if prompt_sampler is None:
        return make_prompts(cfg.n_prompts, rng, cfg.min_digits)[0]
    return check_digits(prompt_sampler(cfg.n_prompts, rng))


def minibatches(n_rows, n, rng):
    """The rows of each of ``n`` random minibatches (``rng``'s permutation, split evenly; n = 1:
    every row, in order, and no draw)."""
    if n == 1:
        return [slice(None)]
    return [i for i in np.array_split(rng.permutation(n_rows), n) if len(i)]


def entropy(probs):
    """H = −Σ_v π_v log π_v of each next-token distribution, probs (..., V) → (...)."""
    return -(probs * np.log(np.where(probs > 0, probs, 1))).sum(axis=-1)
