"""How the record lies on disk: what a run computed, one compressed file an arm, and what keys it,
one manifest, so that re-keying the record after a refactor rewrites one file and no number.

- ``runs/<arm>.json.gz``: for every record of an arm (``keys.arm_key``: the runs that differ only in
  their seeds), what determines it and what it computed: its spec, steps, the run it is a prefix
  of, its history, final parameters' hash, measurements (their values and the calls that made
  them), whether its weights are kept. gzip with no time stamp, so the same numbers give the same
  bytes.
- ``manifest.json``: one line a record: its arm, its key (the training code's hash, ``code``; the
  arithmetic; the code hash each measurement was taken with) and its seal.

A record as the rest of ``toy.record`` knows it is the two joined (``read``), the same dict, seal and
all, as when each record was one JSON file.
"""
import gzip
import json
import os
import tempfile

__all__ = ["read", "read_all", "write", "remove", "ids", "split", "join", "write_atomic", "MANIFEST"]

MANIFEST = "manifest.json"
_KEY = ("code", "arithmetic", "seal")
_CACHE = {}                       # path → ((inode, mtime_ns, size), parsed): re-read only when the file changed


def _arm_path(d, arm):
    return d / "runs" / f"{arm}.json.gz"


def _load(path, parse):
    try:
        st = os.stat(path)
    except OSError:
        return {}
    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)          # a replaced file is a new inode
    hit = _CACHE.get(path)
    if hit is None or hit[0] != stamp:
        with open(path, "rb") as f:
            hit = (stamp, parse(f.read()))
        _CACHE[path] = hit
    return hit[1]


def _manifest(d):
    return _load(d / MANIFEST, lambda b: json.loads(b))


def _arm(d, arm):
    return _load(_arm_path(d, arm), lambda b: json.loads(gzip.decompress(b)))


def split(rec):
    """``(arm entry, manifest entry)`` of a record (the manifest entry's ``arm`` is the caller's)."""
    body = {k: v for k, v in rec.items() if k not in (*_KEY, "id")}
    body["measurements"] = {k: {f: x for f, x in e.items() if f != "code"}
                            for k, e in (rec.get("measurements") or {}).items()}
    key = {k: rec.get(k) for k in _KEY}
    key["measured_with"] = {k: e.get("code") for k, e in (rec.get("measurements") or {}).items()}
    return body, key


def join(rid, body, key):
    """The record ``split`` took apart."""
    rec = {"id": rid, **body, **{k: key.get(k) for k in _KEY}}
    rec["measurements"] = {k: {**e, "code": key.get("measured_with", {}).get(k)}
                           for k, e in (body.get("measurements") or {}).items()}
    return rec


def ids(d):
    """The names of every record in evidence directory ``d``."""
    return sorted(_manifest(d))


def read(d, rid):
    """Record ``rid`` of ``d`` (None where the manifest or its arm file does not hold it)."""
    key = _manifest(d).get(rid)
    body = _arm(d, key["arm"]).get(rid) if key else None
    return None if body is None else join(rid, json.loads(json.dumps(body)), key)


def read_all(d):
    return {rid: rec for rid in ids(d) if (rec := read(d, rid)) is not None}


def write_atomic(path, data):
    """Write ``data`` (bytes) to ``path`` through a temporary file in its directory, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _write_arm(d, arm, entries):
    if not entries:
        _arm_path(d, arm).unlink(missing_ok=True)
        return
    text = json.dumps(entries, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()
    write_atomic(_arm_path(d, arm), gzip.compress(text, compresslevel=9, mtime=0))


def _write_manifest(d, manifest):
    lines = [f" {json.dumps(rid)}: {json.dumps(manifest[rid], sort_keys=True, separators=(',', ':'))}"
             for rid in sorted(manifest)]
    write_atomic(d / MANIFEST, ("{\n" + ",\n".join(lines) + "\n}\n").encode())


def write(d, records, arm_of):
    """Write ``records`` (a list) into ``d``: each into its arm's file (``arm_of(rec)``) and the
    manifest, atomically file by file. The caller holds the record's lock."""
    manifest = dict(_manifest(d))
    arms = {}
    for rec in records:
        arm = arm_of(rec)
        old = manifest.get(rec["id"])
        if old and old["arm"] != arm:                         # filed under another arm before: moved
            arms.setdefault(old["arm"], dict(_arm(d, old["arm"]))).pop(rec["id"], None)
        body, key = split(rec)
        arms.setdefault(arm, dict(_arm(d, arm)))[rec["id"]] = body
        manifest[rec["id"]] = {"arm": arm, **key}
    for arm, entries in arms.items():
        if entries != _arm(d, arm):
            _write_arm(d, arm, entries)
    if manifest != _manifest(d):
        _write_manifest(d, manifest)


def remove(d, rids):
    """Remove records ``rids`` from ``d`` (their arm files and manifest lines). The caller holds the lock."""
    manifest = dict(_manifest(d))
    arms = {}
    for rid in rids:
        key = manifest.pop(rid, None)
        if key:
            arms.setdefault(key["arm"], dict(_arm(d, key["arm"]))).pop(rid, None)
    for arm, entries in arms.items():
        _write_arm(d, arm, entries)
    _write_manifest(d, manifest)
