"""``make bench``: time the fast trainers and the Part III trainer, execute every notebook, and
print each time against its budget (CONTRIBUTING.md, "Budgets"):

- each trainer of ``trainers()`` ≤ its budget (1 s: the notebooks and the unit tests re-run them);
- Part III (``part3()``), on one core (the process is pinned to one CPU where it can be): one
  200-step GRPO run (32 prompts × 8 answers) ≤ 4 s; ten seeds × 200 steps through
  ``tinylm.cached_train_rl_many`` with an empty RL cache ≤ 20 s (this one on both cores; the SFT
  warm-up model is taken from the cache, and the time with an empty cache including the warm-up
  is printed too); and the *matmul floor*: the CPU time the matrix products of a step take
  alone (the same shapes, replayed on random arrays), with the ratio step CPU time / floor;
- each notebook ≤ 15 s; a Part III notebook ≤ 30 s with an empty model cache and ≤ 15 s with
  the cache it leaves (warm), run once each way;
- each slider update (one frame: compute + render) ≤ 0.1 s, as logged by ``toy.widgets``;
- each executed notebook ≤ 1.5 MB;
- the kernel's peak memory (VmHWM, Linux) ≤ 1 GB.

    python scripts/bench.py [NOTEBOOK ...]      # default: notebooks/**/*.ipynb
    python scripts/bench.py --trainers          # only the trainers (and Part III's)
    python scripts/bench.py --commands          # CI ≤ 15 min and make test ≤ 8 min from fresh clones,
                                                # make evidence-check ≤ 4 min, make assignments ≤ 2 min

Timing lives here, not in the unit tests: a wall-clock assert fails on a busy machine and
passes on a fast one whatever the code does. On a shared machine the numbers are inflated:
say so when you quote them.

Exits 1 when a budget is exceeded. Notebooks run in a temporary copy; nothing is rewritten.
"""
import json
import os
import pathlib
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient

DEFAULT_BUDGET_S, SLIDER_BUDGET_S, SIZE_BUDGET_MB, MEMORY_BUDGET_MB = 15.0, 0.1, 1.5, 1024
PART3_COLD_S, PART3_WARM_S = 30.0, 15.0           # a Part III notebook: empty model cache / warm
GRPO_RUN_S, TEN_SEEDS_S = 4.0, 20.0               # one 200-step GRPO run (one core); ten seeds (two cores)


def peak_memory_mb(pid):
    """Peak resident memory of a process (Linux /proc VmHWM), in MB; NaN elsewhere."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def trainers():
    """(name, budget in s, function) of each fast trainer that is timed."""
    from toy import arith as A
    from toy.arith import train as T
    train, test = A.make_dataset()
    return [
        ("arith_train.train_reinforce, GRPO advantages, 30 batches", 1.0,
         lambda: T.train_reinforce(A.Model(), T.ReinforceConfig("grpo", steps=30), seed=1, train=train, test=test)),
        ("arith_train.train_grpo, GRPOConfig(), 30 batches", 1.0,
         lambda: T.train_grpo(A.Model(), T.GRPOConfig(steps=30), seed=0, train=train, test=test)),
    ]


def time_trainers(repeat=3):
    """Print each trainer's best time of ``repeat`` runs against its budget; returns the number over."""
    bad = 0
    print("trainers (best of %d runs):" % repeat)
    for name, budget, fn in trainers():
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        ok = best <= budget
        bad += not ok
        print(f"{'ok ' if ok else 'OVER'} {best:6.2f} s / {budget:4.1f} s  {name}", flush=True)
    print()
    return bad


def _pin_one_cpu():
    """Pin this process to one CPU (the last it may use), so that "one core" means one core."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[-1]})
        return cpus
    except (AttributeError, OSError):
        return None


def _matmul_floor(layouts, decodes, cfg, repeat=3):
    """Seconds that the matrix products of the recorded training forwards/backwards (``layouts``:
    (R, N rows, B0 prompts, U answers, P, S)) and sampling steps (``decodes``: (R, rows, T, pos))
    take alone, replayed on random float32 arrays of the same shapes (best of ``repeat``)."""
    import numpy as np
    rng = np.random.default_rng(0)
    C, H, V, nh = cfg.n_embd, cfg.mlp_hidden, cfg.vocab_size, cfg.n_head
    hs = C // nh
    linears = [(C, 3 * C), (C, C), (C, H), (H, C)] * cfg.n_layer + [(C, V)]
    cache = {}

    def arr(*shape):
        if shape not in cache:
            cache[shape] = rng.normal(size=shape).astype(np.float32)
        return cache[shape]

    def products(backward):
        ops = []
        for R, N, B0, U, P, S in layouts:
            for n_in, n_out in linears:
                ops.append((arr(R, N, n_in), arr(R, n_in, n_out)))                     # y = x W
                if backward:
                    ops.append((arr(R, N, n_out), arr(R, n_out, n_in)))                # dx = dy Wᵀ
                    ops += [(arr(N, n_in).T, arr(N, n_out))] * R                       # dW = xᵀ dy
            for _ in range(cfg.n_layer):
                for B, T, K in ((B0, P, P), (U, S, P + S)):                           # prompts, answers
                    q, k, a = arr(R, B, nh, T, hs), arr(R, B, nh, hs, K), arr(R, B, nh, T, K)
                    ops += [(q, k), (a, arr(R, B, nh, K, hs))]
                    if backward:
                        ops += [(arr(R, B, nh, T, hs), arr(R, B, nh, hs, K)), (arr(R, B, nh, K, T), q),
                                (a, arr(R, B, nh, K, hs)), (arr(R, B, nh, K, T), q)]
        return ops

    train = products(backward=True)
    decode = []
    for R, B, T, pos in decodes:
        for n_in, n_out in linears:
            decode.append((arr(R, B * T, n_in), arr(R, n_in, n_out)))
        for _ in range(cfg.n_layer):
            decode += [(arr(R, B, nh, T, hs), arr(R, B, nh, hs, pos + T)), (arr(R, B, nh, T, pos + T), arr(R, B, nh, pos + T, hs))]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()                      # CPU time: comparable on a shared machine
        for a, b in train + decode:
            a @ b
        best = min(best, time.process_time() - t0)
    return best


def part3(steps=200, seeds=10):
    """Part III's trainer: one GRPO run on one core (``train_rl_many`` with one run: the loop every
    cached and recorded run goes through), ten seeds through ``cached_train_rl_many``,
    and the matmul floor. Prints each against its budget; returns the number over."""
    import shutil
    from toy.record import cache as tc
    from toy.tinylm import many, runs, train as tt
    bad = 0
    cpus = _pin_one_cpu()
    print(f"Part III trainer ({'one core: CPU %d' % sorted(os.sched_getaffinity(0))[0] if cpus else 'not pinned'}):")
    sft = tc.warmup_model(verbose=False)                                         # from the cache (or trained, untimed)
    # one 200-step GRPO run, recording the shapes of its matrix products
    layouts, decodes = [], []
    real_forward, real_decode = runs.forward, runs._decode

    def forward(st, lay):
        layouts.append((lay.R, lay.N, lay.B0, lay.U, lay.P, lay.S))
        return real_forward(st, lay)

    def decode(st, tokens, positions, kv, pos):
        decodes.append((tokens.shape[0], tokens.shape[1], tokens.shape[2], pos))
        return real_decode(st, tokens, positions, kv, pos)
    cfg = tt.RLConfig(algo="grpo", steps=steps)
    times = []
    for i in range(3):
        runs.forward, runs._decode = (forward, decode) if i == 0 else (real_forward, real_decode)
        t0, c0 = time.perf_counter(), time.process_time()
        many.train_rl_many(sft, [cfg], [0], progress=False)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    runs.forward, runs._decode = real_forward, real_decode
    wall = sorted(t for t, _ in times)[1]
    cpu = sorted(c for _, c in times)[1]
    ok = wall <= GRPO_RUN_S
    bad += not ok
    print(f"{'ok ' if ok else 'OVER'} {wall:6.2f} s / {GRPO_RUN_S:4.1f} s  one {steps}-step GRPO run, "
          f"median of 3 (CPU time {cpu:.2f} s)", flush=True)
    floor = _matmul_floor(layouts, decodes, sft.config)
    print(f"     matmul floor {1e3 * floor / steps:6.1f} ms a step ({floor:.2f} s a run, CPU time): "
          f"step time / floor = {cpu / floor:.2f} (CPU time / CPU time)", flush=True)
    if cpus:
        os.sched_setaffinity(0, set(cpus))                                       # both cores again
    # ten seeds through cached_train_rl_many, empty RL cache (the SFT model copied in)
    old = os.environ.get("TOY_CACHE_DIR")
    sft_file = next(tc.cache_dir().glob(f"tinylm-sft-{tc.config_hash(tt.SFTConfig())}.npz"), None)
    runs_ = [(cfg, s) for s in range(seeds)]
    for with_sft in (False, True):
        d = tempfile.mkdtemp(prefix="bench-cache-")
        try:
            if not with_sft and sft_file is not None:
                shutil.copy(sft_file, d)
            os.environ["TOY_CACHE_DIR"] = d
            t0 = time.perf_counter()
            tc.cached_train_rl_many(runs_, processes=2)
            seconds = time.perf_counter() - t0
        finally:
            shutil.rmtree(d, ignore_errors=True)
            if old is None:
                os.environ.pop("TOY_CACHE_DIR", None)
            else:
                os.environ["TOY_CACHE_DIR"] = old
        if with_sft:
            print(f"     {seconds:6.2f} s         the same with an empty cache, SFT warm-up included", flush=True)
        else:
            ok = seconds <= TEN_SEEDS_S
            bad += not ok
            print(f"{'ok ' if ok else 'OVER'} {seconds:6.2f} s / {TEN_SEEDS_S:4.1f} s  {seeds} seeds × {steps} steps, "
                  f"cached_train_rl_many, empty RL cache, 2 processes", flush=True)
    print()
    return bad


def run(path, log, cache=None):
    nb = nbformat.read(path, as_version=4)
    budget = nb.metadata.get("rl_by_hand", {}).get("budget_s", DEFAULT_BUDGET_S)
    os.environ["TOY_BENCH_LOG"] = log
    old_cache = os.environ.get("TOY_CACHE_DIR")
    if cache is not None:                                 # a Part III notebook: its own model cache
        os.environ["TOY_CACHE_DIR"] = cache
    os.environ["TOY_BENCH_NOTEBOOK"] = str(path)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute(cleanup_kc=False)
    seconds = time.perf_counter() - t0
    memory = peak_memory_mb(client.km.provisioner.process.pid)
    client._cleanup_kernel()          # nbclient's own (sync) kernel shutdown
    if cache is not None:
        if old_cache is None:
            os.environ.pop("TOY_CACHE_DIR", None)
        else:
            os.environ["TOY_CACHE_DIR"] = old_cache
    return seconds, budget, memory


COMMAND_BUDGETS_S = {"ci": 15 * 60, "make test": 6 * 60, "make evidence-check": 3 * 60, "make grade-demo": 90,
                     "make assignments": 2 * 60}


def time_command(name, cmd, cwd, env=None):
    """Run ``cmd`` (a shell line) in ``cwd``; print its time against ``COMMAND_BUDGETS_S[name]``."""
    import subprocess
    t0 = time.perf_counter()
    rc = subprocess.run(cmd, shell=True, cwd=cwd, env={**os.environ, **(env or {})},
                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT).returncode
    seconds, budget = time.perf_counter() - t0, COMMAND_BUDGETS_S[name]
    ok = rc == 0 and seconds <= budget
    print(f"{'ok ' if ok else 'OVER' if rc == 0 else 'FAIL'} {seconds:6.0f} s / {budget:4.0f} s  {name} "
          f"({'exit ' + str(rc) if rc else 'passed'})", flush=True)
    return not ok


def commands():
    """``--commands``: each command's budget, from a fresh clone of HEAD with empty caches (about
    35 min in all): ``CI=true bash .ci/run`` ≤ 15 min, ``make test`` ≤ 8 min (in a second fresh
    clone), ``make evidence-check`` ≤ 4 min, ``make assignments`` ≤ 2 min (here, into a
    temporary course)."""
    import shutil
    import subprocess
    root = pathlib.Path(__file__).resolve().parent.parent
    bad = 0
    print("commands (fresh clones of HEAD, empty caches):")
    for name, cmd in (("ci", "CI=true bash .ci/run"), ("make test", "make test")):
        tmp = tempfile.mkdtemp(prefix="bench-clone-")
        subprocess.run(["git", "clone", "-q", str(root), tmp], check=True)
        bad += time_command(name, cmd, tmp, {"TOY_CACHE_DIR": os.path.join(tmp, "_build", "toy-cache")})
        shutil.rmtree(tmp, ignore_errors=True)
    bad += time_command("make evidence-check", "make evidence-check", root)
    bad += time_command("make grade-demo", "make grade-demo", root)
    course = tempfile.mkdtemp(prefix="bench-course-")
    bad += time_command("make assignments", f"make assignments COURSE={course}", root)
    shutil.rmtree(course, ignore_errors=True)
    print()
    return bad


def main(args):
    if args == ["--commands"]:
        return 1 if commands() else 0
    bad = time_trainers() + part3()
    if args == ["--trainers"]:
        return 1 if bad else 0
    paths = [pathlib.Path(p) for p in args] or sorted(
        p for p in pathlib.Path("notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    log = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    rows = []
    t_all = time.perf_counter()
    import shutil
    for p in paths:
        part3_nb = "part3" in p.parts
        cache = tempfile.mkdtemp(prefix="bench-cache-") if part3_nb else None
        for label, budget_over in ((("empty cache", PART3_COLD_S), ("warm cache", PART3_WARM_S))
                                   if part3_nb else ((None, None),)):
            seconds, budget, memory = run(p, log, cache)
            budget = budget if budget_over is None else budget_over
            size = p.stat().st_size / 1e6
            ok = seconds <= budget and size <= SIZE_BUDGET_MB and not memory > MEMORY_BUDGET_MB
            bad += not ok
            rows.append((str(p), seconds, budget, size, memory, ok))
            print(f"{'ok ' if ok else 'OVER'} {seconds:6.1f} s / {budget:4.0f} s  {size:5.2f} MB  "
                  f"peak {memory:5.0f} MB  {p}{'  (' + label + ')' if label else ''}", flush=True)
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
    total = time.perf_counter() - t_all
    sliders = [json.loads(line) for line in open(log)] if os.path.getsize(log) else []
    os.unlink(log)
    print(f"\nall notebooks: {total:.1f} s executed one after another")
    if sliders:
        print(f"\nslider updates (budget {SLIDER_BUDGET_S} s per frame, compute + render):")
        for s in sliders:
            ok = s["max_s"] <= SLIDER_BUDGET_S
            bad += not ok
            print(f"{'ok ' if ok else 'OVER'} max {s['max_s']:.3f} s  mean {s['mean_s']:.3f} s "
                  f"(draw {s['draw_mean_s']:.3f} + render {s['render_mean_s']:.3f})  "
                  f"{s['frames']} frames  {s['slider']} in {s['notebook']}")
    print("\nbudgets met" if not bad else f"\n{bad} budget(s) exceeded")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
