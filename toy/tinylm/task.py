r"""The task of Part III §5: sum ten digits, answer the units digit.

A prompt is 10 random digits followed by ``=``, e.g. ``9458073021=`` (sum 39, answer 9).
With ``min_digits`` < 10 (the task of varying difficulty) a problem has k digits, k uniform in
``min_digits``..10, padded on the right with ``$`` to the same 10 positions: ``9458$$$$$$=``
(sum 26, answer 6); the digit arrays hold ``PAD`` (−1) there, and a think-first chain has k
digits. (Padding on the right keeps chain digit j next to prompt digit j, as in the 10-digit
task; with padding on the left the tiny model has to find where a problem starts, and after the
warm-up its chains were never right.)
An answer comes in one of two formats:

- direct:       ``#9$``
- think-first:  ``[9386636689]#9$`` — the bracket holds the running sum's units digit after
  each digit (9, 9+4=13→3, 3+5=8, ...), then ``#``, the answer digit and ``$`` (end); one
  bracket digit per digit of the problem (a chain of any other length is malformed).

Reward 1 iff the answer parses in one of the two formats and its final digit is right; a
malformed answer gets 0 (never an exception). The chain inside the bracket is *not* checked by
the reward: only the final digit counts.

The SFT teacher writes half the answers direct (always right) and half think-first, where each
thinking step is wrong with probability 0.1. A wrong step writes one of the 9 wrong digits
uniformly at random and the teacher *carries on from what it wrote* (like a person who slipped
once and keeps adding), and its final answer is the last digit of its own chain. So a chain is
entirely right with probability 0.9^10 ≈ 0.35 (``TEACHER_CHAIN_ACC``); because every step is
"previous written digit + next digit" 90 % of the time, the most likely next digit is always
the right continuation, which is why greedy decoding of the imitating model writes right chains.
"""
import numpy as np

from .._check_args import generator, int_array, integer, real, size

__all__ = [
    "VOCAB", "STOI", "EOS", "PAD", "N_DIGITS", "PROMPT_LEN", "MAX_ANSWER_LEN", "TEACHER_ERROR_RATE",
    "TEACHER_CHAIN_ACC", "encode", "decode", "decode_rows", "make_prompts", "prompts_of", "n_digits",
    "true_answers", "running_sums",
    "think_answer", "direct_answer", "teacher_answers", "parse_answer", "verify",
    "verify_batch", "verify_tokens",
]

VOCAB = "0123456789=[]#$"                  # 15 symbols; '$' ends an answer and pads after it
STOI = {ch: i for i, ch in enumerate(VOCAB)}
EOS = STOI["$"]
N_DIGITS = 10                              # digits per prompt (at most, with min_digits < 10)
PAD = -1                                   # a digit array's padding (a short problem's prompt shows '$')
PROMPT_LEN = N_DIGITS + 1                  # "dddddddddd="
MAX_ANSWER_LEN = N_DIGITS + 6              # "[" + 10 + "]#d$" = 15, plus one spare token
TEACHER_ERROR_RATE = 0.1                   # P(a thinking step of the teacher is wrong)
TEACHER_CHAIN_ACC = (1 - TEACHER_ERROR_RATE) ** N_DIGITS   # ≈ 0.349


def encode(s):
    """String → int array of token ids; raises ValueError naming ``s`` on an unknown symbol."""
    if not isinstance(s, str):
        raise ValueError(f"s must be a str, got {type(s).__name__}")
    bad = sorted(set(s) - set(VOCAB))
    if bad:
        raise ValueError(f"s contains symbols outside the vocabulary {VOCAB!r}: {bad}")
    return np.array([STOI[ch] for ch in s], dtype=np.int64)


_BYTES = np.frombuffer(VOCAB.encode("ascii"), dtype=np.uint8)


def decode(ids):
    """Token ids (1-D) → string."""
    ids = int_array(ids, "ids")
    if ids.ndim != 1 or np.any((ids < 0) | (ids >= len(VOCAB))):
        raise ValueError(f"ids must be a 1-D array of ids in [0, {len(VOCAB)}), got {ids!r}")
    return _BYTES[ids].tobytes().decode("ascii")


def decode_rows(ids):
    """Token ids (n, L) → n strings, in one vectorised step (``decode`` row by row is ~40× slower)."""
    ids = int_array(ids, "ids")
    if ids.ndim != 2 or np.any((ids < 0) | (ids >= len(VOCAB))):
        raise ValueError(f"ids must be a 2-D array of ids in [0, {len(VOCAB)}), got shape {ids.shape}")
    return _BYTES[ids].view(f"S{ids.shape[1]}")[:, 0].astype(str).tolist()   # (n, L) bytes → n str


def make_prompts(n, rng, min_digits=N_DIGITS):
    """A batch of problems: ``digits`` (n, 10) ints in 0..9 and ``prompts`` (n, 11) token ids
    (the digits followed by ``=``). Returns ``(digits, prompts)``.

    With ``min_digits`` < 10 each problem has k digits, k uniform in ``min_digits``..10, and
    ``PAD`` in its last 10 − k positions (``$`` in the prompt)."""
    n = integer(n, "n", lo=1)
    size(n * N_DIGITS, "n", what="digits")
    integer(min_digits, "min_digits", 1, N_DIGITS)
    generator(rng)
    digits = rng.integers(0, 10, size=(int(n), N_DIGITS))               # (n, 10)
    if min_digits < N_DIGITS:
        k = rng.integers(int(min_digits), N_DIGITS + 1, size=int(n))     # digits of each problem
        digits = np.where(np.arange(N_DIGITS) >= k[:, None], PAD, digits)
    return digits, prompts_of(digits)


def prompts_of(digits):
    """The prompt token ids (n, 11) of problems ``digits`` (n, 10): the digits (``$`` for
    ``PAD``) followed by ``=``."""
    d = check_digits(digits)
    return np.concatenate([np.where(d == PAD, STOI["$"], d), np.full((len(d), 1), STOI["="])], axis=1)


def check_digits(digits):
    d = int_array(digits, "digits")
    if d.ndim == 1:
        d = d[None]
    if d.ndim != 2 or d.shape[1] != N_DIGITS or np.any((d < PAD) | (d > 9)):
        raise ValueError(f"digits must have shape (n, {N_DIGITS}) with entries 0..9 (or PAD = {PAD} "
                         f"as left padding), got shape {d.shape}")
    pad = d == PAD
    if np.any(pad[:, :-1] & ~pad[:, 1:]) or np.any(pad[:, 0]):
        raise ValueError("digits may hold PAD only after the last digit (right padding), with at least one digit")
    return d.astype(np.int64)


def n_digits(digits):
    """The number of digits of each problem (10 unless it is padded), (n,)."""
    return (check_digits(digits) != PAD).sum(axis=1)


def _values(digits):
    d = check_digits(digits)
    return np.where(d == PAD, 0, d)                                     # padding adds nothing


def true_answers(digits):
    """Units digit of the sum of each row of ``digits`` (n, 10) → (n,)."""
    return _values(digits).sum(axis=1) % 10


def running_sums(digits):
    """The correct chain: units digit of the running sum after each digit, (n, 10). For a
    padded problem of k digits the chain is the first k entries."""
    return np.cumsum(_values(digits), axis=1) % 10


def think_answer(chain):
    """The think-first answer string for a chain (one digit per digit of the problem):
    ``[chain]#last$``."""
    chain = int_array(chain, "chain", 0, 9, ndim=1)
    if not 1 <= len(chain) <= N_DIGITS:
        raise ValueError(f"chain must hold 1..{N_DIGITS} digits, got {len(chain)}")
    c = "".join(str(int(x)) for x in chain)
    return f"[{c}]#{c[-1]}$"


def direct_answer(answer):
    """The direct answer string ``#d$``."""
    integer(answer, "answer", 0, 9)
    return f"#{int(answer)}$"


def teacher_answers(digits, rng, think_prob=0.5, error_rate=TEACHER_ERROR_RATE):
    """The SFT teacher's answer strings for each row of ``digits``.

    With probability ``think_prob`` it thinks first; each thinking step is wrong with
    probability ``error_rate`` (a uniformly random wrong digit, and the teacher carries on from
    what it wrote); the final answer is the chain's last digit. Direct answers are always right.
    """
    d = check_digits(digits)
    real(think_prob, "think_prob", 0, 1), real(error_rate, "error_rate", 0, 1)
    generator(rng)
    n = len(d)
    think = rng.random(n) < think_prob                                  # (n,)
    slip = rng.random((n, N_DIGITS)) < error_rate                       # (n, 10)
    offset = rng.integers(1, 10, size=(n, N_DIGITS))                    # a wrong digit = right + 1..9
    out = []
    for i in range(n):
        if not think[i]:
            out.append(direct_answer(np.where(d[i] == PAD, 0, d[i]).sum() % 10))
            continue
        s, chain = 0, []
        for j in range(N_DIGITS):
            if d[i, j] == PAD:
                break                                                   # the problem has ended
            s = (s + d[i, j]) % 10
            if slip[i, j]:
                s = (s + offset[i, j]) % 10                             # write a wrong digit, carry on
            chain.append(s)
        out.append(think_answer(chain))
    return out


def parse_answer(answer, k=N_DIGITS):
    """Parse an answer string → ``(fmt, final_digit, chain)``.

    ``fmt`` is ``"think"``, ``"direct"`` or ``"malformed"``; ``final_digit`` an int or None;
    ``chain`` the bracket's ``k`` digits (the problem's number of digits) as a string
    (think-first only) or None. Text after the first ``$`` is ignored (it is padding). Never
    raises on a string.
    """
    integer(k, "k", 1, N_DIGITS)
    if not isinstance(answer, str):
        return "malformed", None, None
    end = answer.find("$")
    if end < 0:
        return "malformed", None, None
    a = answer[: end + 1]
    if len(a) == 3 and a[0] == "#" and a[1].isdigit():
        return "direct", int(a[1]), None
    if (len(a) == k + 5 and a[0] == "[" and a[k + 1] == "]" and a[k + 2] == "#"
            and a[1: k + 1].isdigit() and a[k + 3].isdigit()):
        return "think", int(a[k + 3]), a[1: k + 1]
    return "malformed", None, None


def verify(answer, digits):
    """Reward of one answer string for one problem (10 digits): 1.0 iff it parses and its final
    digit is the units digit of the sum, else 0.0. Malformed answers get 0, never an exception."""
    if len(check_digits(digits)) != 1:
        raise ValueError(f"digits must be one problem (10 digits), got shape {np.shape(digits)}")
    fmt, final, _ = parse_answer(answer, int(n_digits(digits)[0]))
    if fmt == "malformed":
        return 0.0
    return float(final == int(true_answers(digits)[0]))


def verify_batch(answers, digits):
    """Rewards and diagnostics for a batch of answer strings (n,) and problems (n, 10).

    Returns a dict of arrays (n,): ``reward`` (0/1), ``think`` (think-first format),
    ``direct``, ``chain_ok`` (think-first *and* every bracket digit right), ``length``
    (tokens up to and including the first ``$``, or the whole string if none).
    """
    d = check_digits(digits)
    if isinstance(answers, str) or not hasattr(answers, "__len__"):
        raise ValueError(f"answers must be a list of answer strings, got {type(answers).__name__}")
    if len(answers) != len(d):
        raise ValueError(f"answers and digits must have the same length, got {len(answers)} and {len(d)}")
    truth, chains, ks = true_answers(d), running_sums(d), n_digits(d)
    out = {k: np.zeros(len(d)) for k in ("reward", "think", "direct", "chain_ok", "length")}
    for i, a in enumerate(answers):
        fmt, final, chain = parse_answer(a, int(ks[i]))
        end = a.find("$") if isinstance(a, str) else -1
        out["length"][i] = end + 1 if end >= 0 else len(a)
        if fmt == "malformed":
            continue
        out["reward"][i] = float(final == truth[i])
        out["think"][i] = fmt == "think"
        out["direct"][i] = fmt == "direct"
        if fmt == "think":
            out["chain_ok"][i] = all(int(c) == x for c, x in zip(chain, chains[i][:ks[i]]))
    return out


def verify_tokens(ans, digits):
    """``verify_batch`` for token arrays, vectorised (what training uses): answer tokens
    (n, L) (as returned by ``TinyLM.generate``) and problems (n, 10) → the same dict of arrays.
    ``tests/test_tinylm_task.py`` checks it against ``verify_batch`` on the strings."""
    d = check_digits(digits)
    ans = int_array(ans, "ans", 0, len(VOCAB) - 1, ndim=2)
    n, L = ans.shape
    if len(d) != n:
        raise ValueError(f"ans and digits must have the same number of rows, got {n} and {len(d)}")
    k = n_digits(d)                                                    # (n,) chain length of each problem
    K = N_DIGITS + 5                                                   # longest think-first answer
    a = np.pad(ans, ((0, 0), (0, max(0, K - L))), constant_values=-1)  # (n, ≥ 15)
    is_eos = a == EOS
    end = np.where(is_eos.any(axis=1), is_eos.argmax(axis=1), -1)      # index of the first '$'
    length = np.where(end >= 0, end + 1, L).astype(float)
    isdig = (a >= 0) & (a <= 9)
    at = lambda pos: np.take_along_axis(a, pos[:, None], axis=1)[:, 0]  # noqa: E731  a[i, pos[i]]
    in_chain = np.arange(N_DIGITS) < k[:, None]                        # (n, 10) bracket positions
    direct = (end == 2) & (a[:, 0] == STOI["#"]) & isdig[:, 1]
    think = ((end == k + 4) & (a[:, 0] == STOI["["]) & (isdig[:, 1:N_DIGITS + 1] | ~in_chain).all(axis=1)
             & (at(k + 1) == STOI["]"]) & (at(k + 2) == STOI["#"]) & (at(k + 3) >= 0) & (at(k + 3) <= 9))
    final = np.where(direct, a[:, 1], np.where(think, at(k + 3), -1))
    chain_ok = think & ((a[:, 1:N_DIGITS + 1] == running_sums(d)) | ~in_chain).all(axis=1)
    return {"reward": (final == true_answers(d)).astype(float), "think": think.astype(float),
            "direct": direct.astype(float), "chain_ok": chain_ok.astype(float), "length": length}
