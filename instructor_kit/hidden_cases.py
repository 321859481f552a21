"""Hidden test cases of the autograded exercises (instructor-side: not in the ``toy`` package).

``hidden(checker, seed)`` → ``(cases, forbidden, adapt)`` for ``instructor_kit.grading.Grade.hidden``:

- ``cases``: fresh arguments drawn from ``numpy.random.default_rng(seed)`` (the course's own seed,
  written once by ``make_assignments.py``), each a ``setup`` snippet that sets ``args`` (run again
  at grading time, with a private copy of toy) and the ``expected`` value computed here, now,
  from toy's reference implementation; both are written into the instructor's test cell between
  ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``, which nbgrader removes from the release;
- ``forbidden``: the ``(module, function)`` pairs of toy that *are* the exercise's answer
  (``rl.clipped_surrogate_grad`` for the clipped gradient): an answer that uses them scores 0;
- ``adapt``: how the answer's value is compared (``"pair"``: a tuple of two arrays, stacked).

Some cases have a known shape whatever the seed (e.g. ``clip_cap``: the last two of six exceed
probability 1 without the ``min``), so that ``make grade-demo`` can predict a partial score.
Every generator is tested against the book's own solutions (tests/test_make_assignments.py).
"""
import numpy as np

from toy import bandit, numsearch as ns, prob, rl
from toy.numsearch import train as nt
from toy.check import part1_numsearch as _check_ns

N_HIDDEN = 6        # hidden cases per function checker (fewer where the argument space is small)


def _f(x, digits=3):
    """A float as short, exact source text."""
    return repr(round(float(x), digits))


def _arr(a, digits=3):
    return f"np.array({[round(float(v), digits) for v in np.ravel(a)]!r})"


def _eval(setup):
    env = {"np": np, "ns": ns, "nt": nt, "rl": rl, "prob": prob, "bandit": bandit,
           "check": __import__("toy.check", fromlist=["_"])}
    exec(setup, env)                                                           # noqa: S102
    return env["args"]


def _case(name, setup, ref, **tol):
    args = _eval(setup)
    return dict(name=name, setup=setup, expected=ref(*args), **tol)


def _logit(p):
    return np.log(p / (1 - p))


def bandit_estimates(rng):
    out = []
    for i in range(N_HIDDEN):
        p, b, a = rng.uniform(0.05, 0.95), rng.uniform(0, 1), i % 2
        out.append(_case(f"hidden {i + 1}", f"args = ({_f(p)}, {a}, {_f(b)})",
                         lambda p, a, b: float(bandit.estimates(_logit(p), a, b))))
    return out, [("bandit", "estimates")]


def optimal_baseline(rng):
    return [_case(f"hidden {i + 1}", f"args = ({_f(rng.uniform(0.02, 0.98))},)",
                  lambda p: float(bandit.optimal_baseline(_logit(p)))) for i in range(4)], \
        [("bandit", "optimal_baseline")]


WORDS = {"higher": ns.HIGHER, "lower": ns.LOWER, "correct": ns.FOUND}


def narrow_interval(rng):
    out = []
    for i in range(N_HIDDEN):
        lo = int(rng.integers(1, 15))
        hi = int(rng.integers(lo + 1, 17))
        g = int(rng.integers(1, 17))
        word = ["higher", "lower", "correct"][i % 3]
        out.append(_case(f"hidden {i + 1}", f"args = ({lo}, {hi}, {g}, {word!r})",
                         lambda lo, hi, g, w: [int(v) for v in ns.narrow(lo, hi, g, WORDS[w])]))
    return out, [("numsearch", "narrow")]


def _theta(seed):
    return f"ns.weak_prior() + 0.5 * np.random.default_rng({seed}).normal(size=(ns.S, ns.A))"


def _game(rng):
    target = int(rng.integers(1, 17))
    k = int(rng.integers(1, ns.T + 1))
    others = [g for g in range(1, 17) if g != target]
    guesses = [int(g) for g in rng.choice(others, size=k, replace=False)]
    if rng.random() < 0.5:
        guesses[-1] = target
    return guesses, target


def trajectory_logprob(rng):
    out = []
    for i in range(5):
        guesses, target = _game(rng)
        seed = int(rng.integers(1 << 30))
        out.append(_case(f"hidden {i + 1}", f"args = ({_theta(seed)}, {guesses!r}, {target})",
                         lambda th, gs, x: float(ns.action_logprobs(th, ns.replay([gs], x)).sum())))
    return out, [("numsearch", "action_logprobs")]


def rest_filter(rng):
    return [_case(f"hidden {i + 1}", f"args = ({_arr((rng.random(int(rng.integers(3, 9))) < 0.5).astype(float))},)",
                  lambda r: (np.asarray(r) == 1).astype(float)) for i in range(4)], []


def _batch(seed, n):
    return (f"_rng = np.random.default_rng({seed}); _th = {_theta(seed)}; "
            f"_tr = ns.rollout(ns.policy_probs(_th), _rng.integers(1, 17, size={n}), _rng)")


def masked_pg_loss(rng):
    out = []
    for i in range(4):
        seed, n = int(rng.integers(1 << 30)), int(rng.integers(3, 12))
        rewards = "_tr.reward" if i % 2 == 0 else f"np.random.default_rng({seed + 1}).normal(size={n})"
        setup = (_batch(seed, n) + f"\nargs = (check.part1_numsearch.token_case(_th, _tr), _tr.token_mask, {rewards})")
        out.append(_case(f"hidden {i + 1}", setup,
                         lambda logp, m, R: -float(np.sum(np.asarray(R)[:, None] * m * logp)) / len(R)))
    return out, []


def reinforce_estimate(rng):
    out = []
    for i in range(4):
        seed, n = int(rng.integers(1 << 30)), int(rng.integers(3, 20))
        out.append(_case(f"hidden {i + 1}", _batch(seed, n) + "\nargs = (_th, _tr)", nt.reinforce_estimate))
    return out, [("numsearch_train", "reinforce_estimate")]


def grpo_advantages(rng):
    out = []
    for i in range(4):
        B, G = int(rng.integers(1, 5)), int(rng.integers(2, 9))
        R = (rng.random((B, G)) < 0.5).astype(float) if i % 2 == 0 else rng.normal(size=(B, G))
        out.append(_case(f"hidden {i + 1}", f"args = ({_arr(R)}.reshape({B}, {G}),)", rl.grpo_advantages))
    return out, [("rl", "grpo_advantages"), ("rl", "advantages")]


def dr_grpo_token_weights(rng):
    out = []
    for i in range(3):
        seed, G = int(rng.integers(1 << 30)), int(rng.integers(2, 9))
        setup = (f"_rng = np.random.default_rng({seed})\n"
                 f"_tr = ns.rollout(ns.policy_probs(ns.weak_prior()), np.repeat(_rng.integers(1, 17), {G}), _rng)\n"
                 "args = (_tr.reward, _tr.mask.astype(float))")
        out.append(_case(f"hidden {i + 1}", setup,
                         lambda R, m: rl.aggregate_weights(m, "dr_grpo") * rl.dr_grpo_advantages(R)[:, None]))
    return out, [("rl", "dr_grpo_advantages"), ("rl", "aggregate_weights")]


def expected_tries(rng):
    out = [_case("hidden 1", f"args = (0.0, {int(rng.integers(2, 30))})", lambda p, N: float(N))]
    for i in range(1, N_HIDDEN):
        p, N = rng.uniform(0.01, 0.99), int(rng.integers(1, 40))
        out.append(_case(f"hidden {i + 1}", f"args = ({_f(p)}, {N})", lambda p, N: (1 - (1 - p) ** N) / p))
    return out, []


def softmax_log_grad(rng):
    out = []
    for i in range(4):
        K = int(rng.integers(2, 7))
        out.append(_case(f"hidden {i + 1}", f"args = ({_arr(rng.normal(scale=2, size=K))}, {int(rng.integers(K))})",
                         lambda z, a: np.eye(len(z))[a] - prob.softmax(z)))
    return out, [("prob", "log_softmax_table_grad")]


def clip_cap(rng):
    """Four cases below the cap, then two where p_old·(1 + ε) > 1 (an answer without the min
    passes exactly the first four)."""
    out = []
    for i in range(N_HIDDEN):
        eps = rng.uniform(0.05, 0.4)
        p = rng.uniform(0.01, 0.7 / (1 + eps)) if i < 4 else rng.uniform(1.02 / (1 + eps), 0.99)
        out.append(_case(f"hidden {i + 1}", f"args = ({_f(p)}, {_f(eps)})",
                         lambda p, e: float(min(p * (1 + e), 1.0))))
    return out, []


def _ratios(rng, eps, n=6):
    """Ratios at least 0.02 away from the kinks 1 ± ε (where the derivative is not defined)."""
    r = rng.uniform(0.2, 2.0, size=4 * n)
    r = r[(np.abs(r - (1 + eps)) > 0.02) & (np.abs(r - (1 - eps)) > 0.02)][:n]
    return np.round(r, 3)


def _clip_cases(rng, n, n_scalar, fn):
    """n cases (ratios, advantage, ε): the first n_scalar with one advantage, the rest with six."""
    out = []
    for i in range(n):
        eps = round(rng.uniform(0.05, 0.4), 3)
        adv = _f(rng.normal(scale=2)) if i < n_scalar else _arr(rng.normal(scale=2, size=6))
        out.append(_case(f"hidden {i + 1}", f"args = ({_arr(_ratios(rng, eps))}, {adv}, {eps!r})", fn))
    return out, [("rl", "clipped_surrogate_grad")]


def clipped_grad(rng):
    return _clip_cases(rng, 5, 3, rl.clipped_surrogate_grad)


def dynamic_sampling_groups(rng):
    def ref(p, G, n):
        p = np.asarray(p, dtype=float)
        return float(n / (1 - np.mean(p ** G + (1 - p) ** G)))
    out = []
    for i in range(4):
        G, n = int(rng.integers(2, 12)), int(rng.integers(1, 40))
        p = _f(rng.uniform(0.1, 0.9)) if i < 2 else _arr(rng.uniform(0.05, 0.95, size=int(rng.integers(2, 6))))
        out.append(_case(f"hidden {i + 1}", f"args = ({p}, {G}, {n})", ref))
    return out, []


def degenerate_prob(rng):
    out = []
    for i in range(4):
        G = int(rng.integers(2, 20))
        p = _f(rng.uniform(0.05, 0.95)) if i < 2 else _arr(rng.uniform(0, 1, size=4))
        out.append(_case(f"hidden {i + 1}", f"args = ({p}, {G})",
                         lambda p, G: np.asarray(p, float) ** G + (1 - np.asarray(p, float)) ** G, atol=1e-9))
    return out, [("rl", "degenerate_fraction")]


def per_token_weights(rng):
    def ref(lengths, adv, loss_type, max_len):
        mask = (np.arange(max_len) < np.asarray(lengths)[:, None]).astype(float)
        return rl.aggregate_weights(mask, loss_type, max_len)[:, 0] * len(mask) * np.asarray(adv, float)
    out = []
    for i in range(4):
        n = int(rng.integers(2, 6))
        lengths = sorted(int(v) for v in rng.integers(5, 300, size=n))
        adv = _arr(rng.normal(size=n))
        kind = ["grpo", "dr_grpo"][i % 2]
        out.append(_case(f"hidden {i + 1}", f"args = ({lengths!r}, {adv}, {kind!r}, {max(lengths) + int(rng.integers(0, 50))})",
                         ref))
    return out, [("rl", "aggregate_weights")]


def kimi_length_reward(rng):
    out = []
    for i in range(4):
        n = int(rng.integers(3, 7))
        lengths = [int(v) for v in rng.choice(np.arange(10, 1000, 10), size=n, replace=False)]
        correct = [bool(v) for v in rng.random(n) < 0.5]
        out.append(_case(f"hidden {i + 1}", f"args = (np.array({lengths!r}), np.array({correct!r}))",
                         rl.kimi_length_reward))
    return out, [("rl", "kimi_length_reward")]


def score_vectors(rng):
    out = []
    for i in range(4):
        p = rng.dirichlet(np.ones(int(rng.integers(2, 6))))
        p = np.round(p, 3)
        p[-1] = round(1 - p[:-1].sum(), 3)
        out.append(_case(f"hidden {i + 1}", f"args = ({_arr(p)},)", lambda p: np.eye(len(p)) - p))
    return out, [("prob", "log_softmax_table_grad")]


def baseline_scale(rng):
    out = []
    for i, method in enumerate(["mean", "rloo", "mean", "rloo"]):
        G = int(rng.integers(2, 65))
        out.append(_case(f"hidden {i + 1}", f"args = ({G}, {method!r})",
                         lambda G, m: (G - 1) / G if m == "mean" else 1.0))
    return out, []


def clip_objective_grad(rng):
    return _clip_cases(rng, 4, 2, lambda r, a, e: np.stack([rl.clipped_surrogate(r, a, e),
                                                           rl.clipped_surrogate_grad(r, a, e)]))


def pass_at_k_single(rng):
    out = []
    for i in range(4):
        k = int(rng.integers(1, 64))
        p = _f(rng.uniform(0.01, 0.99)) if i < 2 else _arr(rng.uniform(0, 1, size=4))
        out.append(_case(f"hidden {i + 1}", f"args = ({p}, {k})",
                         lambda p, k: 1 - (1 - np.asarray(p, float)) ** k, atol=1e-9))
    return out, []


def sequence_ratio(rng):
    out = []
    for i in range(4):
        n, t = int(rng.integers(1, 4)), int(rng.integers(2, 7))
        mask = (np.arange(t) < rng.integers(1, t + 1, size=n)[:, None]).astype(float)   # answers of 1..t tokens
        logp, old = np.log(rng.uniform(0.05, 1, (n, t))), np.log(rng.uniform(0.05, 1, (n, t)))
        setup = (f"args = ({_arr(logp, 4)}.reshape({n}, {t}), {_arr(old, 4)}.reshape({n}, {t}), "
                 f"{_arr(mask)}.reshape({n}, {t}))")
        out.append(_case(f"hidden {i + 1}", setup, lambda lp, o, m: np.exp(rl.sequence_log_ratio(lp, o, m)),
                         atol=1e-9))
    return out, [("rl", "sequence_log_ratio")]


GENERATORS = {f.__name__: f for f in (
    bandit_estimates, optimal_baseline, narrow_interval, trajectory_logprob, rest_filter, masked_pg_loss,
    reinforce_estimate, grpo_advantages, dr_grpo_token_weights, expected_tries, softmax_log_grad, clip_cap,
    clipped_grad, dynamic_sampling_groups, degenerate_prob, per_token_weights, kimi_length_reward,
    score_vectors, baseline_scale, clip_objective_grad, pass_at_k_single, sequence_ratio)}
ADAPT = {"clip_objective_grad": "pair"}
NO_HIDDEN = {"hard_problem_advantages"}      # the answer is two fixed vectors: nothing fresh to ask


def hidden(checker, seed):
    """(cases, forbidden, adapt) of ``checker`` for the course seed ``seed``."""
    if checker in NO_HIDDEN:
        return [], [], None
    if checker not in GENERATORS:
        raise ValueError(f"checker must be one of {sorted(GENERATORS) + sorted(NO_HIDDEN)}, got {checker!r}")
    rng = np.random.default_rng([seed, sum(map(ord, checker))])
    with np.errstate(all="raise"):
        cases, forbidden = GENERATORS[checker](rng)
    return cases, forbidden, ADAPT.get(checker)


assert _check_ns.token_case       # the helper masked_pg_loss's hidden cases build their arguments with
