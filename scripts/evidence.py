"""The evidence record (``evidence/``, ``toy/record/``): prove it, re-key it after a refactor, repair it.

    python scripts/evidence.py check [--keys] [--no-claims] [--base SHA] [--all] [--only ID ...]
    python scripts/evidence.py prove              # make evidence's first step: a refactor proven, then re-keyed
    python scripts/evidence.py retrain ID ...     # train these records again and write what they give
    python scripts/evidence.py reseal ID ...      # seal a record (or fresh/partN.json) edited on purpose
    python scripts/evidence.py prune LOG          # remove the records no notebook used (make evidence)
    python scripts/evidence.py stale-claims       # the notebooks whose claims check is not current
    python scripts/evidence.py status             # one line a record: seed, current or stale

``check`` (``make evidence-check``) reports every problem, each with the command that repairs it:

1. a record's seal does not match its content, its file name is not its spec's, it was computed by
   other training code than this one (stale), or on another arithmetic than the reference one; a
   measurement was computed by other ``toy`` code; a kept model or pool does not hold what its
   record names; a fresh-seed verdict's seal does not match;
2. ``evidence/claims.json`` (``make claims``) is missing, failed, or did not check a notebook as
   committed (its code cells and outputs: the claims check trains every run afresh, so a record
   whose numbers changed matters through the outputs of the notebooks that read it);
3. (not with ``--keys``) a record **trained again here differs by one bit** (its history, final
   parameters' hash, measurements): every record the git history flags (``toy.record.history``:
   numbers changed where their key did not; with ``--base`` or ``$EVIDENCE_BASE``, every record
   changed since that commit), and the rotation of this commit count (every record once in 20
   commits). A fresh-seed verdict file flagged the same way, or in the rotation, is derived again
   (its ledger executed on the fresh seeds) and compared row by row. ``--only``: these records;
   ``--all``: every record.

``prove``: where the training code's hash changed, one record of every arm is trained again; an arm
whose record is the same, bit for bit, is re-keyed to the new code (every record of it, without
training), an arm whose record differs is left stale for ``make evidence`` to re-train. Records
whose file name is not their spec's are renamed. ``claims.json`` stays valid: it names the hash of the
record's numbers (``evidence.version``: a re-key changes no number, so it stays valid).

Exit status 1 on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRESH_PERIOD = 20
LEDGERS = {"part1": "notebooks/part1/s12_ledger.ipynb", "part2": "notebooks/part2/s07_ledger.ipynb",
           "part3": "notebooks/part3/s07_ledger.ipynb"}


def _ev():
    from toy.record import evidence
    return evidence


def fix_one(rid):
    return f"python scripts/evidence.py retrain {rid}"


FIX_STALE = "make evidence (it proves a refactor by one run per arm and re-keys, or re-trains what changed)"


# ------------------------------------------------------------------------------------- training again
def _sft_config(d):
    from toy.tinylm.model import ModelConfig
    from toy.tinylm.train import SFTConfig
    return SFTConfig(**{**d, "model": ModelConfig(**d.get("model", {}))})


def _function(key, ns):
    """The function a spec names by ``qualname\\nsource`` (a reward or a watched reward)."""
    if key is None:
        return None
    qual, src = key.split("\n", 1)
    exec(src, ns)                                        # noqa: S102 — the book's own notebook code
    return ns[qual]


def _run_of(spec, memo):
    """The ``cache.Run`` a spec describes (its start's policy trained again or loaded)."""
    from toy.record import cache
    from toy.tinylm.train import PoolSampler
    ev = _ev()
    ns = ev._namespace()
    start = spec["start"]
    if start["kind"] == "sft":
        start_obj = _sft_config(start["sft_config"])
    else:
        start_obj = ev.RecordedPolicy(_run_of(start, memo), ev.spec_id(start), _policy_of(start, memo))
    sampler = None
    if spec["sampler"] is not None:
        sampler = PoolSampler(ev.pool(spec["sampler"]), spec["sampler"]["sampler"] == "curriculum")
    return cache.Run.of_spec(spec, start_obj, _function(spec["reward"], ns), _function(spec["watch"], ns), sampler)


def _policy_of(spec, memo):
    """A start policy: the recorded weights, or the run trained again (memoised)."""
    ev = _ev()
    rid = ev.spec_id(spec)
    if rid not in memo:
        rec = ev._read(rid)
        model = ev._load_weights(rec) if rec else None
        memo[rid] = model if model is not None else _train(spec, memo)[0]
    return memo[rid]


def _train(spec, memo):
    from toy.record import cache
    return cache._train_runs([_run_of(spec, memo)], None)[0]


def _history_of(rec):
    """A record's own history (a prefix record's, sliced from the run it is a prefix of)."""
    ev = _ev()
    steps, seen = rec["steps"], set()
    while rec is not None and rec.get("prefix_of") and rec["id"] not in seen:
        seen.add(rec["id"])
        rec = ev._read(rec["prefix_of"])
    return None if rec is None or rec.get("history") is None else ev._array_history(rec["history"], steps)


def retrain(rid, write=False):
    """Train record ``rid`` again and compare it with the record: ``(rid, differences, seconds)``;
    ``write``: also put what training gave into the record (its history, parameters, measurements)
    and seal it. An exception is reported as a difference, naming the record."""
    t0 = time.perf_counter()
    try:
        return (rid, *_retrain(rid, write), time.perf_counter() - t0)
    except Exception as e:                                # noqa: BLE001 — reported per record
        return rid, [f"could not be trained again: {type(e).__name__}: {e}"], None, time.perf_counter() - t0


def _retrain(rid, write):
    os.environ["RL_BY_HAND_EVIDENCE"] = "read"
    ev = _ev()
    rec = ev._read(rid)
    if rec is None:
        return [f"no record {rid} in evidence/manifest.json"], None
    spec, bad = rec["spec"], []
    if spec["kind"] == "sft":
        from toy.tinylm.train import train_sft
        model, hist = train_sft(_sft_config(spec["sft_config"]), progress=False)
        got = {"history": {"final_loss": [float(hist["loss"][-1])]}, "params_sha256": ev.params_sha256(model)}
        if got["params_sha256"] != rec["params_sha256"]:
            bad.append("final parameters differ")
        if got["history"] != rec["history"]:
            bad.append("final loss differs")
        return bad, (got, model) if write else None
    policy, hist = _train(spec, {})
    want = _history_of(rec)
    for k in sorted(set(want or {}) | set(hist)):
        if want is None or k not in want or k not in hist or not ev._same(want[k], hist[k]):
            bad.append(f"history[{k!r}] differs")
    if rec.get("params_sha256") not in (None, ev.params_sha256(policy)):
        bad.append("final parameters differ")
    values = {}
    for key, entry in sorted(rec.get("measurements", {}).items()):
        values[key] = ev.replay(entry, policy)
        if not ev._equal(values[key], ev.decode(entry["value"])):
            bad.append(f"measurement {entry['call']} differs")
    got = {"history": ev._json_history(hist), "params_sha256": ev.params_sha256(policy),
           "values": {k: ev.encode(v) for k, v in values.items()}}
    return bad, (got, policy) if write else None


def _write_retrained(rid, got, model):
    """Put a record's re-trained numbers into it (a full record: its history; a prefix: nothing
    but its parameters and measurements), re-key and seal it."""
    ev = _ev()
    with ev._locked():
        rec = ev._read(rid)
        if not rec.get("prefix_of"):
            rec["history"] = got["history"]
        rec["params_sha256"] = got["params_sha256"]
        for key, value in got.get("values", {}).items():
            rec["measurements"][key]["value"] = value
            entry = rec["measurements"][key]
            entry["code"] = ev.measure_code(entry.get("source"), entry["qualname"])
        rec["code"], rec["arithmetic"] = ev.code_key(rec["spec"]), ev.fingerprint()
        if rec.get("weights"):
            ev.save_model(model, ev._model_path(rid), meta={"id": rid})
        ev._save(rec)


def _in_parallel(fn, ids, label, workers=2):
    """``fn(rid)`` for every id, ``workers`` at a time (the longest first, through toy.record.engine),
    a line as each ends."""
    from toy.record import engine
    recs = _ev().records()
    ids = sorted(ids, key=lambda r: -_cost(recs.get(r)))
    total, done, t0 = sum(_cost(recs.get(r)) for r in ids) or 1, 0, time.perf_counter()
    out = []
    for got in engine.imap(fn, [(r,) for r in ids], workers=workers):
        done += _cost(recs.get(got[0]))
        left = (time.perf_counter() - t0) * (total - done) / max(done, 1)
        print(f"{label(got)}   [{len(out) + 1}/{len(ids)}, about {left / 60:.0f} min left]", flush=True)
        out.append(got)
    return out


def _cost(rec):
    """Roughly the time to train a record again: steps × answers a step × epochs."""
    if not rec:
        return 1
    if rec["spec"]["kind"] == "sft":
        return 4 * rec["steps"]
    c = rec["spec"]["rl_config"]
    return rec["steps"] * c.get("G", 8) * c.get("n_prompts", 32) * (1 + c.get("mu", 1)) / 64


# ------------------------------------------------------------------------------------- checks
def check_keys(recs):
    """Seals, names, code, arithmetic, weights, pools: a list of (record, problem, fix)."""
    from toy.machine import fingerprint, on_reference
    ev = _ev()
    out = []
    for rid, rec in recs.items():
        if rec.get("seal") != ev.seal_of(rec):
            out.append((rid, "its seal does not match its content (edited by hand?)", fix_one(rid)))
            continue
        if ev.spec_id(rec["spec"]) != rid or rec.get("id") != rid:
            out.append((rid, f"its name is not its spec's ({ev.spec_id(rec['spec'])})",
                        "python scripts/evidence.py prove (renames it)"))
        if rec.get("code") != ev.code_key(rec["spec"]):
            out.append((rid, f"stale: computed by other training code ({rec.get('code')}, now "
                             f"{ev.code_key(rec['spec'])})", FIX_STALE))
        if on_reference() and rec.get("arithmetic") != fingerprint():
            out.append((rid, f"computed on another arithmetic ({rec.get('arithmetic')})", fix_one(rid)))
        if rec.get("prefix_of") and rec["prefix_of"] not in recs:
            out.append((rid, f"a prefix of {rec['prefix_of']}, which is not in the record", FIX_STALE))
        for key, entry in rec.get("measurements", {}).items():
            if entry.get("code") != ev.measure_code(entry.get("source"), entry["qualname"]):
                out.append((rid, f"stale measurement {entry['call']} (other toy code)", FIX_STALE))
            src = entry.get("source")
            if src is None:                               # a toy function: its source now
                try:
                    import importlib
                    fn = importlib.import_module(entry["module"])
                    for part in entry["qualname"].split("."):
                        fn = getattr(fn, part)
                    src = ev._fn_ident(fn)[2]
                except (ImportError, AttributeError, OSError):
                    src = ""
            if ev.measurement_key(entry["qualname"], src, entry["args"]) != key:
                out.append((rid, f"measurement {entry['call']} is filed under another key than its call's", FIX_STALE))
        if rec.get("weights"):
            try:
                if ev._load_weights(rec) is None:
                    out.append((rid, f"its weights, evidence/models/{rid}.npz, are missing", fix_one(rid)))
            except ValueError as e:
                out.append((rid, str(e), fix_one(rid)))
        sampler = rec["spec"].get("sampler")
        if sampler:
            try:
                ev.pool(sampler)
            except (OSError, ValueError) as e:
                out.append((rid, f"its prompt pool is missing or wrong ({e})", FIX_STALE))
    return out


def check_claims():
    ev = _ev()
    path = ev.evidence_dir() / "claims.json"
    if not path.is_file():
        return ["evidence/claims.json is missing: run `make claims` (it checks the book's claims on another arithmetic)"]
    got = json.loads(path.read_text(encoding="utf-8"))
    if not got.get("passed"):
        return ["evidence/claims.json records a failed claims check: fix the claims, then `make claims`"]
    stale = stale_claims(got)
    if stale:
        return [f"evidence/claims.json did not check these notebooks as committed (re-executed since, or new): "
                f"{' '.join(stale)}: run `make claims NB=\"{' '.join(stale)}\"`"]
    return []


def stale_claims(got=None):
    """The notebooks whose code or outputs are not those ``claims.json`` checked."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import claims
    if got is None:
        path = _ev().evidence_dir() / "claims.json"
        got = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    checked = got.get("notebooks", {})
    return [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("notebooks/part*/*.ipynb"))
            if not isinstance(checked.get(str(p.relative_to(ROOT))), dict)
            or checked[str(p.relative_to(ROOT))].get("digest") != claims.digest(p)]


# ------------------------------------------------------------------------------------- fresh verdicts
def _fresh_files():
    from toy import seeds
    return {name: seeds.fresh_file(name) for name in LEDGERS}


def check_fresh_seals():
    from toy import seeds
    out = []
    for name, path in _fresh_files().items():
        if path.is_file() and not seeds.sealed(json.loads(path.read_text(encoding="utf-8"))):
            out.append((f"fresh/{name}.json", "its seal does not match its content (edited by hand?)",
                        f"python scripts/evidence.py check --fresh {name} (derives it again), then make fresh"))
    return out


def fresh_flagged(count, base=None):
    """{ledger name: why} for the fresh verdict files to derive again: changed in the window (or since
    ``base``) in a commit that did not change their ledger's code, or in this commit's rotation."""
    from toy.record import history
    out = {}
    for name, path in _fresh_files().items():
        if not path.is_file():
            continue
        if history.bucket(name, FRESH_PERIOD) == count % FRESH_PERIOD:
            out[name] = "rotation"                        # the history's reason, if it has one, replaces it
        place = history.git_place(path.parent)
        if place is None:
            continue
        top, _ = place
        rel = path.resolve().relative_to(top.resolve()).as_posix()
        span = [f"{base}..HEAD"] if base else ["-n", str(history.WINDOW), "HEAD"]
        try:
            log = history._git(top, "log", "--format=@%H %P", "--name-status", "--no-renames", *span, "--", rel,
                               LEDGERS[name])
        except subprocess.CalledProcessError:
            continue
        for block in log.split("@")[1:]:
            head, *changes = block.strip().split("\n")
            commit, parent = (head.split() + [None])[:2]
            paths = {c.split("\t", 1)[1]: c[0] for c in changes if "\t" in c}
            if paths.get(rel) != "M" or (LEDGERS[name] in paths and not base) or not parent:
                continue
            got = history._blobs(top, [f"{parent}:{rel}", f"{commit}:{rel}"])
            rows = [(history._json(got[f"{c}:{rel}"]) or {}).get("rows") for c in (parent, commit)]
            if rows[0] != rows[1]:
                out[name] = f"its rows changed in {commit[:12]}" + ("" if base else " while its ledger's code did not")
                break                                     # the newest such commit says why
    return out


def rederive_fresh(name):
    """Execute ledger ``name`` on the fresh seeds into a scratch directory; compare its rows."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TOY_FRESH_DIR": tmp, "RL_BY_HAND_EVIDENCE": "read"}
        run = subprocess.run([sys.executable, str(ROOT / "scripts" / "fresh.py"), "--no-summary", LEDGERS[name]],
                             cwd=ROOT, env=env, capture_output=True, text=True)
        made = Path(tmp) / f"{name}.json"
        if run.returncode or not made.is_file():
            return name, [f"its ledger did not run on the fresh seeds: {(run.stdout + run.stderr).strip()[-300:]}"], \
                time.perf_counter() - t0
        got = json.loads(made.read_text(encoding="utf-8"))["rows"]
    kept = json.loads(_fresh_files()[name].read_text(encoding="utf-8"))["rows"]
    bad = [f"row {k!r} differs" for k in sorted(set(got) | set(kept)) if got.get(k) != kept.get(k)]
    return name, bad, time.perf_counter() - t0


# ------------------------------------------------------------------------------------- prove (refactors)
def prove(workers=2):
    """Rename what is misnamed; where the code hash changed, one record of every arm trained again:
    re-key the arms that reproduce. The record's numbers (``version``, what ``claims.json`` names) do
    not change. Returns 0 (every arm proven, or left stale for make evidence to re-train)."""
    ev = _ev()
    before = ev.version()                       # a hash of the numbers: what claims.json names, kept as it is
    renamed = _rename_all()
    recs = ev.records()
    stale = {rid: rec for rid, rec in recs.items()
             if rec.get("code") != ev.code_key(rec["spec"])
             or any(e.get("code") != ev.measure_code(e.get("source"), e["qualname"]) for e in rec.get("measurements", {}).values())}
    arms = {}
    for rid, rec in sorted(stale.items()):
        arms.setdefault(ev.arm_key(rec["spec"]), []).append(rid)
    print(f"prove: {len(recs)} records, {renamed} renamed; {len(stale)} keyed by other code, in {len(arms)} arms",
          flush=True)
    if arms:
        # the arm's record with the most measurements (they are proven with it), then the cheapest
        pick = {arm: min(ids, key=lambda r: (-len(recs[r].get("measurements", {})), _cost(recs[r]), r))
                for arm, ids in arms.items()}
        results = _in_parallel(retrain, list(pick.values()),
                               lambda g: f"{'same' if not g[1] else 'DIFF'} {g[0]} ({g[3]:.0f} s)"
                               f"{': ' + '; '.join(g[1]) if g[1] else ''}", workers)
        same = {rid for rid, bad, _, _ in results if not bad}
        keyed = 0
        for arm, ids in arms.items():
            if pick[arm] in same:     # its measurements proven too: those of the functions it was measured by
                keyed += _rekey(ids, {e["qualname"] for e in recs[pick[arm]].get("measurements", {}).values()})
        left = sum(len(ids) for arm, ids in arms.items() if pick[arm] not in same)
        print(f"prove: {len(same)} of {len(arms)} arms reproduce bit for bit: {keyed} records re-keyed without "
              f"training; {left} left stale (make evidence re-trains them)")
    if ev.version() != before:
        raise RuntimeError("prove changed a number of the record (it renames and re-keys only): a bug")
    return 0


def _rename_all():
    """Give every record its spec's file name (its weights and the prefixes that point at it follow)."""
    ev = _ev()
    recs = ev.records()
    moves = {rid: ev.spec_id(rec["spec"]) for rid, rec in recs.items() if ev.spec_id(rec["spec"]) != rid}
    if not moves:
        return 0
    with ev._locked():
        for old, new in moves.items():
            if recs[old].get("weights"):
                model, _ = ev.load_model(ev._model_path(old))
                ev.save_model(model, ev._model_path(new), meta={"id": new})
        ev._remove(moves)
        for rec in recs.values():
            rec["id"] = moves.get(rec["id"], rec["id"])
            rec["prefix_of"] = moves.get(rec.get("prefix_of"), rec.get("prefix_of"))
        ev._save(*recs.values())
        for old in moves:
            if ev._model_path(old).exists() and old not in moves.values():
                ev._model_path(old).unlink()
    return len(moves)


def _rekey(ids, measured_by):
    """Re-key records whose numbers a re-training of their arm proved: the new code's hash (and their
    measurements by the functions in ``measured_by``, which the re-training computed again)."""
    ev = _ev()
    with ev._locked():
        recs = [ev._read(rid) for rid in ids]
        for rec in recs:
            rec["code"] = ev.code_key(rec["spec"])
            for entry in rec.get("measurements", {}).values():
                if entry["qualname"] in measured_by:
                    entry["code"] = ev.measure_code(entry.get("source"), entry["qualname"])
        ev._save(*recs)
    return len(ids)


# ------------------------------------------------------------------------------------- the command
def _arg(argv, flag):
    return argv[argv.index(flag) + 1] if flag in argv else None


def check(argv):
    from toy.record import history
    ev = _ev()
    recs = ev.records()
    t0 = time.perf_counter()
    if not recs:
        print(f"evidence-check: no records in evidence/runs: {FIX_STALE}")
        return 1
    bad = check_keys(recs) + check_fresh_seals()
    for rid, why, fix in bad:
        print(f"BROKEN {rid}: {why}\n  fix: {fix}")
    claims = [] if "--no-claims" in argv else check_claims()
    for why in claims:
        print(f"CLAIMS: {why}")
    print(f"evidence-check: {len(recs)} records, numbers {ev.version()}: seals, keys, weights and pools "
          f"{'ok' if not bad else f'NOT ok ({len(bad)} problems)'} ({time.perf_counter() - t0:.1f} s)", flush=True)
    failed = bool(bad or claims)
    if "--keys" in argv:
        return int(failed)
    base = _arg(argv, "--base") or os.environ.get("EVIDENCE_BASE") or None
    count = history.commit_count(ROOT)
    broken = {rid for rid, _, _ in bad}
    if "--only" in argv:
        todo = {rid: "asked" for rid in argv[argv.index("--only") + 1:]}
        fresh = {}
    elif "--all" in argv:
        todo, fresh = {rid: "all" for rid in recs}, {name: "all" for name, p in _fresh_files().items() if p.is_file()}
    else:
        todo = history.flagged(recs, ev.evidence_dir(), base)
        for rid in history.rotation(recs, count):
            todo.setdefault(rid, f"rotation {count % history.PERIOD} of {history.PERIOD}")
        fresh = fresh_flagged(count, base)
    todo = {rid: why for rid, why in todo.items() if rid not in broken}
    print(f"evidence-check: re-training {len(todo)} record(s) in full on 2 processes, comparing every bit "
          f"(commit {count}: {sum(w.startswith('rotation') for w in todo.values())} by rotation, "
          f"{sum(not w.startswith('rotation') for w in todo.values())} flagged by the history"
          f"{', since ' + base[:12] if base else ''})", flush=True)
    for rid, why in todo.items():
        if not why.startswith("rotation"):
            print(f"  {rid}: {why}")
    results = _in_parallel(retrain, list(todo), lambda g: f"{'ok  ' if not g[1] else 'DIFF'} {g[0]} ({g[3]:.0f} s)"
                           f"{': ' + '; '.join(g[1]) if g[1] else ''}")
    diffs = [rid for rid, d, _, _ in results if d]
    for rid in diffs:
        print(f"  the record {rid} does not reproduce: {fix_one(rid)} (re-trains it and writes what it gives), "
              "then make claims")
    for name, why in fresh.items():
        name, d, secs = rederive_fresh(name)
        print(f"{'ok  ' if not d else 'DIFF'} fresh/{name}.json ({why}; derived again in {secs:.0f} s)"
              f"{': ' + '; '.join(d) if d else ''}", flush=True)
        if d:
            diffs.append(name)
            print(f"  the fresh verdicts of {LEDGERS[name]} do not reproduce: make fresh (it derives them again)")
    failed = failed or bool(diffs)
    print(f"evidence-check: {'FAILED' if failed else 'passed'} in {time.perf_counter() - t0:.0f} s"
          + (f" ({len(diffs)} record(s) differ: {' '.join(diffs)})" if diffs else ""))
    return int(failed)


def main(argv):
    commands = ("check", "prove", "retrain", "reseal", "prune", "stale-claims", "status")
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    ev = _ev()
    if argv[0] == "check":
        return check(argv[1:])
    if argv[0] == "prove":
        return prove()
    if argv[0] == "retrain":
        ids, failed = argv[1:], 0
        for rid, d, got, secs in _in_parallel(lambda r: retrain(r, write=True), ids, lambda g: f"retrained {g[0]}"):
            if got is None:
                print(f"{rid}: {'; '.join(d)}")
                failed = 1
                continue
            _write_retrained(rid, *got)
            print(f"{rid}: {'the same, bit for bit' if not d else 'written (' + '; '.join(d) + ')'} in {secs:.0f} s")
        return failed
    if argv[0] == "reseal":
        from toy import seeds
        for name in [a[len("fresh/"):].removesuffix(".json") for a in argv[1:] if a.startswith("fresh/")]:
            path = seeds.fresh_file(name)
            seeds.write_json(path, seeds.seal(json.loads(path.read_text(encoding="utf-8"))))
            print(f"reseal: fresh/{name}.json sealed as it is; make evidence-check derives it again when it lands")
        with ev._locked():
            for rid in [a for a in argv[1:] if not a.startswith("fresh/")]:
                rec = ev._read(rid)
                if rec is None:
                    print(f"reseal: no record {rid}")
                    return 1
                ev._save(rec)
                print(f"reseal: {rid} sealed as it is ({rec['seal'][:12]}); make evidence-check trains it again "
                      "when it lands")
        return 0
    recs = ev.records()
    if argv[0] == "stale-claims":
        print(" ".join(stale_claims()))
        return 0
    if argv[0] == "status":
        for rid, rec in recs.items():
            s = rec["spec"]
            print(f"{rid:32s} seed {s.get('seed', s.get('sft_config', {}).get('seed'))!s:3s} "
                  f"{'current' if rec.get('code') == ev.code_key(s) else 'STALE'}"
                  f"{' prefix of ' + rec['prefix_of'] if rec.get('prefix_of') else ''}")
        print(f"{len(recs)} records, numbers {ev.version()}")
        return 0
    used = set(Path(argv[1]).read_text().split())
    gone = [rid for rid in recs if rid not in used]
    with ev._locked():
        ev._remove(gone)
    for rid in gone:
        ev._model_path(rid).unlink(missing_ok=True)
    pools = {json.dumps(r["spec"].get("sampler"), sort_keys=True) for rid, r in recs.items() if rid in used}
    for p in (ev.evidence_dir() / "pools").glob("*.json"):
        if not any(p.stem in s for s in pools):
            p.unlink()
            gone.append(f"pool {p.stem}")
    print(f"evidence: removed {len(gone)} record(s) no notebook used" + (": " + ", ".join(gone) if gone else ""))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
