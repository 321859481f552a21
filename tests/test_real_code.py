"""book/toy_to_real.md against the real code: every row of the page's "Checked facts" table is
checked in the released wheel it names (fetched from the package index with `pip download
--no-deps`, cached in _build/real-code-wheels or $REAL_CODE_WHEELS; no torch is imported, the
sources are read from the zip). A config field must be defined at the cited line with the cited
default, a YAML key at the cited line with the cited value, a code fragment must be on the cited
lines inside the cited function, and a name the page says is gone must be defined nowhere. The
page's prose cites the rows by id ([T3], [V7]): every id it cites must be a row, every row cited.
The test is skipped (with the reason) only when the package index cannot be reached."""
import ast
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "toy_to_real.md"
CACHE = Path(os.environ.get("REAL_CODE_WHEELS", ROOT / "_build" / "real-code-wheels"))
HEADER = ["id", "package", "file:line", "kind", "name", "value"]
KINDS = ("field", "yaml", "code", "absent")


def _cell(c):
    c = c.strip()
    return c[1:-1] if len(c) >= 2 and c[0] == c[-1] == "`" else c


def facts():
    """The rows of the page's table whose header is HEADER."""
    rows, inside = [], False
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            inside = False
            continue
        cells = [_cell(c) for c in line.strip().strip("|").split("|")]
        if cells == HEADER:
            inside = True
        elif inside and not set("".join(cells)) <= set("-: "):
            assert len(cells) == len(HEADER), f"a checked-facts row must have {len(HEADER)} cells: {line}"
            rows.append(dict(zip(HEADER, cells)))
    return rows


FACTS = facts()


def test_the_page_has_a_checked_facts_table():
    assert len(FACTS) >= 20
    ids = [f["id"] for f in FACTS]
    assert len(ids) == len(set(ids)), "ids must be unique"
    for f in FACTS:
        assert f["kind"] in KINDS, f
        assert re.fullmatch(r"[a-z]+ \d+(\.\d+)+", f["package"]), f


def test_every_cited_id_is_a_row_and_every_row_is_cited():
    text = PAGE.read_text(encoding="utf-8")
    prose = text.split("\n## Checked facts", 1)[0]
    cited = set(re.findall(r"\[([TV]\d+)\]", prose))
    ids = {f["id"] for f in FACTS}
    assert not cited - ids, f"cited in the prose but not in the table: {sorted(cited - ids)}"
    assert not ids - cited, f"rows the prose never cites: {sorted(ids - cited)}"


# ----------------------------------------------------------------------------- the wheels
def _index_url():
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/"


_UNREACHABLE = {}


def _probe_index(name):
    """None if the package index answers for ``name``, else why not (asked once per package)."""
    if name not in _UNREACHABLE:
        try:
            urllib.request.urlopen(_index_url() + name + "/", timeout=15).close()
            _UNREACHABLE[name] = None
        except OSError as e:
            _UNREACHABLE[name] = f"the package index {_index_url()} cannot be reached ({e})"
    return _UNREACHABLE[name]


@lru_cache(maxsize=None)
def _download(package):
    """The path of the cached wheel ``"trl 1.16.0"``, downloaded once (atomically) if missing;
    a string (the reason) if the index cannot be reached."""
    name, version = package.split()
    found = sorted(CACHE.glob(f"{name}-{version}-*.whl"))
    if found:
        return found[0]
    reason = _probe_index(name)
    if reason:
        return reason
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
             "--disable-pip-version-check", "--retries", "2", "--timeout", "30",
             f"{name}=={version}", "-d", tmp],
            capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise AssertionError(f"pip download {name}=={version} failed although the index answers:\n"
                                 f"{proc.stderr[-2000:]}")
        (whl,) = Path(tmp).glob("*.whl")
        target = CACHE / whl.name
        os.replace(whl, target)
    return target


def wheel(package):
    got = _download(package)
    if isinstance(got, str):
        pytest.skip(f"{got}; {package} was not checked")
    return got


@lru_cache(maxsize=None)
def source(package, path):
    with zipfile.ZipFile(wheel(package)) as z:
        if path not in z.namelist():
            pytest.fail(f"{path} is not in the {package} wheel")
        return z.read(path).decode("utf-8")


@lru_cache(maxsize=None)
def tree(package, path):
    return ast.parse(source(package, path))


@lru_cache(maxsize=None)
def yaml_tree(package, path):
    return yaml.compose(source(package, path))


@lru_cache(maxsize=None)
def all_python(package):
    with zipfile.ZipFile(wheel(package)) as z:
        return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist() if n.endswith(".py")}


def _where(fact):
    path, _, lines = fact["file:line"].rpartition(":")
    a, _, b = lines.replace("–", "-").partition("-")
    return path, int(a), int(b or a)


def _same(got, want):
    """Equal as values; numbers compare as floats (YAML reads 1e-6 as a string, 1.0e-06 as a float)."""
    num = lambda x: isinstance(x, (int, float, str)) and not isinstance(x, bool)
    if num(got) and num(want):
        try:
            return float(got) == float(want)
        except ValueError:
            pass
    return got == want


# ----------------------------------------------------------------------------- the four kinds
def check_field(f):
    """``name`` = Class.attr, an annotated class attribute at the line, with default ``value``."""
    path, line, _ = _where(f)
    cls, attr = f["name"].split(".")
    (node,) = [n for n in ast.walk(tree(f["package"], path)) if isinstance(n, ast.ClassDef) and n.name == cls] or [None]
    assert node is not None, f"class {cls} is not in {path}"
    stmts = [s for s in node.body if isinstance(s, ast.AnnAssign) and getattr(s.target, "id", None) == attr]
    assert stmts, f"{cls} has no field {attr} in {f['package']}"
    s = stmts[0]
    assert s.lineno == line, f"{cls}.{attr} is at {path}:{s.lineno} in {f['package']}, the page says {line}"
    value = s.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field":
        value = next(k.value for k in value.keywords if k.arg == "default")
    got, want = ast.literal_eval(value), ast.literal_eval(f["value"])
    assert _same(got, want), f"{cls}.{attr} defaults to {got!r} in {f['package']}, the page says {want!r}"


def check_yaml(f):
    """``name`` = a dotted key path, whose key is at the line, with value ``value``."""
    path, line, _ = _where(f)
    node = yaml_tree(f["package"], path)
    for key in f["name"].split("."):
        pairs = [(k, v) for k, v in node.value if k.value == key] if isinstance(node, yaml.MappingNode) else []
        assert pairs, f"{f['name']} is not in {path} of {f['package']}"
        k, node = pairs[0]
    assert k.start_mark.line + 1 == line, (
        f"{f['name']} is at {path}:{k.start_mark.line + 1} in {f['package']}, the page says {line}")
    got = yaml.safe_load(yaml.serialize(node))
    want = yaml.safe_load(f["value"])
    assert _same(got, want), f"{f['name']} is {got!r} in {f['package']}, the page says {want!r}"


def _enclosing(tree, a, b):
    """Qualified names of the defs/classes whose body spans lines a..b."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if child.lineno <= a and b <= child.end_lineno:
                    out.append(name)
                visit(child, name + ".")

    visit(tree, "")
    return out


def check_code(f):
    """``value`` (whitespace-insensitive) on the cited lines, inside def/class ``name`` (if given)."""
    path, a, b = _where(f)
    text = source(f["package"], path)
    lines = text.splitlines()
    squash = lambda s: re.sub(r"\s+", "", s)
    span = squash("".join(lines[a - 1:b]))
    if squash(f["value"]) not in span:
        hits = [i + 1 for i, l in enumerate(lines) if squash(f["value"])[:40] in squash(l)]
        pytest.fail(f"{f['id']}: `{f['value']}` is not on {path}:{a}-{b} of {f['package']}"
                    f" (lines that start like it: {hits[:5]})")
    if f["name"] not in ("", "-") and path.endswith(".py"):
        names = _enclosing(tree(f["package"], path), a, b)
        assert f["name"] in names, f"{path}:{a}-{b} is in {names} in {f['package']}, not in {f['name']}"


def check_absent(f):
    """No module of the wheel defines the class or function ``name``."""
    pat = re.compile(rf"^\s*(class|def)\s+{re.escape(f['name'])}\b", re.M)
    where = [p for p, text in all_python(f["package"]).items() if pat.search(text)]
    assert not where, f"{f['name']} is defined in {where} of {f['package']}"


@pytest.mark.parametrize("fact", FACTS, ids=[f["id"] for f in FACTS])
def test_fact(fact):
    {"field": check_field, "yaml": check_yaml, "code": check_code, "absent": check_absent}[fact["kind"]](fact)
