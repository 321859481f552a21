"""``make bench``: time the fast trainers, execute every notebook, and print each time against
its budget (the notebook budgets are CONTRIBUTING.md's, "Budgets"):

- each trainer of ``trainers()`` ≤ its budget (1 s: the notebooks and the unit tests re-run them);
- each notebook ≤ 15 s; a notebook whose metadata sets ``rl_by_hand.budget_s`` (the Part III
  notebooks that train the thinking model) uses that budget (60 s);
- each slider update (one frame: compute + render) ≤ 0.1 s, as logged by ``toy.widgets``;
- each executed notebook ≤ 1.5 MB;
- the kernel's peak memory (VmHWM, Linux) ≤ 1 GB.

    python scripts/bench.py [NOTEBOOK ...]      # default: notebooks/**/*.ipynb
    python scripts/bench.py --trainers          # only the trainers

Timing lives here, not in the unit tests: a wall-clock assert fails on a busy machine and
passes on a fast one whatever the code does.

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
    from toy import arith_train as T
    train, test = A.make_dataset()
    return [
        ("arith_train.reinforce, GRPO advantages, 30 batches", 1.0,
         lambda: T.reinforce(train, test, T.ReinforceConfig("grpo", steps=30), seed=1)),
        ("arith_train.grpo, GRPOConfig(), 30 batches", 1.0,
         lambda: T.grpo(train, test, T.GRPOConfig(steps=30), seed=0)),
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


def run(path, log):
    nb = nbformat.read(path, as_version=4)
    budget = nb.metadata.get("rl_by_hand", {}).get("budget_s", DEFAULT_BUDGET_S)
    os.environ["TOY_BENCH_LOG"] = log
    os.environ["TOY_BENCH_NOTEBOOK"] = str(path)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute(cleanup_kc=False)
    seconds = time.perf_counter() - t0
    memory = peak_memory_mb(client.km.provisioner.process.pid)
    client._cleanup_kernel()          # nbclient's own (sync) kernel shutdown
    return seconds, budget, memory


def main(args):
    bad = time_trainers()
    if args == ["--trainers"]:
        return 1 if bad else 0
    paths = [pathlib.Path(p) for p in args] or sorted(
        p for p in pathlib.Path("notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    log = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    rows = []
    t_all = time.perf_counter()
    for p in paths:
        seconds, budget, memory = run(p, log)
        size = p.stat().st_size / 1e6
        ok = seconds <= budget and size <= SIZE_BUDGET_MB and not memory > MEMORY_BUDGET_MB
        bad += not ok
        rows.append((str(p), seconds, budget, size, memory, ok))
        print(f"{'ok ' if ok else 'OVER'} {seconds:6.1f} s / {budget:4.0f} s  {size:5.2f} MB  "
              f"peak {memory:5.0f} MB  {p}", flush=True)
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
