"""The student edition against the full one, on the book's real notebooks.

The reference here parses the markdown with markdown-it (the parser MyST builds on) instead of the
script's line scanner: both must agree on what is a solution.
"""
import json
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import student_edition  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").rglob("s*.ipynb"))
MD = MarkdownIt("commonmark").use(colon_fence_plugin)


def _src(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _directive(token):
    """'exercise', 'solution', 'solution-start', ... for a fenced directive token, else None."""
    if token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
        return token.info.strip()[1:].split("}")[0]
    return None


def blocks(nb):
    """The notebook as (kind, text) blocks in order, each marked as solution or not: top-level
    markdown blocks (a directive is one block) and code cells."""
    out, inside = [], False
    for cell in nb["cells"]:
        tagged = "solution" in cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] != "markdown":
            out.append(("code", _src(cell), inside or tagged, cell))
            continue
        lines = _src(cell).split("\n")
        for tok in MD.parse(_src(cell)):
            if tok.level != 0 or tok.map is None or tok.type.endswith("_close"):
                continue
            name = _directive(tok)
            if name == "solution-start":
                inside = True
            text = "\n".join(lines[tok.map[0]:tok.map[1]]).strip()
            out.append((name or "prose", text, inside or tagged or name == "solution", cell))
            if name == "solution-end":
                inside = False
    return out


@pytest.fixture(scope="module")
def editions():
    pairs = []
    for path in NOTEBOOKS:
        full = json.loads(path.read_text())
        student, _ = student_edition.strip(json.loads(path.read_text()))
        pairs.append((path.relative_to(ROOT), full, student))
    return pairs


def test_the_book_has_solutions_to_remove(editions):
    n_solution_blocks = sum(sol for _, full, _ in editions for _, _, sol, _ in blocks(full))
    n_exercises = sum(kind == "exercise" for _, full, _ in editions for kind, *_ in blocks(full))
    assert n_solution_blocks > 50 and n_exercises > 40


def test_same_exercises_and_prose_outside_solutions(editions):
    for name, full, student in editions:
        kept = [(k, t) for k, t, sol, _ in blocks(full) if not sol]
        got = [(k, t) for k, t, _, _ in blocks(student)]
        assert got == kept, name
        n_ex = sum(k == "exercise" for k, _ in kept)
        assert n_ex == sum(k == "exercise" for k, *_ in blocks(full)), name


def test_no_solution_left(editions):
    for name, _, student in editions:
        for kind, text, sol, cell in blocks(student):
            assert not sol, (name, text[:60])
            assert not kind.startswith("solution"), (name, text[:60])
            assert "solution" not in cell.get("metadata", {}).get("tags", []), name


def stub_names(full):
    """Functions a student writes: defined in the code cell just before a {solution-start}."""
    bl = blocks(full)
    return {t.split("def ", 1)[1].split("(")[0] for (k, t, sol, _), nxt in zip(bl, bl[1:])
            if k == "code" and not sol and nxt[0] == "solution-start" and t.startswith("def ")}


def test_no_check_mark_under_a_stub(editions):
    """Every cell that calls a function left as a stub has no outputs (no "✓ all N cases pass")."""
    n_checkers = 0
    for name, full, student in editions:
        names = stub_names(full)
        for cell in student["cells"]:
            if cell["cell_type"] == "code" and any(f"({n})" in _src(cell) for n in names):
                n_checkers += 1
                assert cell["outputs"] == [], (name, _src(cell))
        assert "✓" not in json.dumps([c.get("outputs", []) for c in student["cells"]], ensure_ascii=False), name
    assert n_checkers >= 15


def test_cut_inside_a_cell_and_markers_across_cells():
    """Hand-made: a solution between statements, a longer fence around a nested code fence, a
    colon fence, and solution prose before an end marker."""
    md = lambda s: {"cell_type": "markdown", "metadata": {}, "source": s}
    code = lambda s, outputs=(): {"cell_type": "code", "metadata": {}, "source": s,
                                  "outputs": list(outputs), "execution_count": 1}
    ok = {"output_type": "stream", "name": "stdout", "text": "✓ all 3 cases pass\n"}
    nb = {"cells": [
        md("## Exercises\n\n```{exercise} A\n:label: a\n\nDo A.\n```\n\n"
           "````{solution} a\n:class: dropdown\n\n```python\nx = 1\n```\nmore\n````\n\n"
           ":::{solution} a\nagain\n:::\n\nText after.\n\n```{exercise} B\n:label: b\n```"),
        code("def f():\n    # your code here\n    return None"),
        md("```{solution-start} b\n```"),
        code("def f():\n    return 1"),
        md("Why it works.\n\n```{solution-end}\n```"),
        code("check(f)", [ok]),
        code("plot()", [ok]),
        md("Next section."),
        code("other()", [ok]),
    ]}
    out, touched = student_edition.strip(nb)
    assert touched == 4
    assert [_src(c) for c in out["cells"]] == [
        "## Exercises\n\n```{exercise} A\n:label: a\n\nDo A.\n```\n\nText after.\n\n```{exercise} B\n:label: b\n```",
        "def f():\n    # your code here\n    return None", "check(f)", "plot()", "Next section.", "other()"]
    assert [c.get("outputs") for c in out["cells"][2:4]] == [[], []]  # the checker and what follows it
    assert out["cells"][5]["outputs"] == [ok]                         # past the next prose: kept
    kept = [(k, t) for k, t, sol, _ in blocks(nb) if not sol]
    assert [(k, t) for k, t, _, _ in blocks(out)] == kept


# ------------------------------------------------------------------ nothing a person made is lost
def _course(root, n=2):
    """A folder of ``n`` tiny notebooks with one solution cell each."""
    for i in range(n):
        nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": f"# page {i}"},
                        {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "answer = 42",
                         "outputs": [], "execution_count": 1}],
              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (root / "part1").mkdir(parents=True, exist_ok=True)
        (root / "part1" / f"s0{i}_x.ipynb").write_text(json.dumps(nb))
    return root


def test_an_edited_handout_is_never_overwritten(tmp_path, capsys):
    src, out = _course(tmp_path / "src"), tmp_path / "student dir" / "notebooks"   # a space in the path
    assert student_edition.main([str(src), str(out)]) == 0
    mine = out / "part1" / "s00_x.ipynb"
    edited = mine.read_text().replace("# page 0", "# page 0\\n\\nmy answer: 41")
    mine.write_text(edited)                                           # a student's work
    (out / "part1" / "my_notes.ipynb").write_text("{}")               # and a file of their own
    assert student_edition.edited(out) == ["part1/my_notes.ipynb", "part1/s00_x.ipynb"]
    (src / "part1" / "s01_x.ipynb").write_text((src / "part1" / "s00_x.ipynb").read_text())  # the book changed
    other = (out / "part1" / "s01_x.ipynb").read_bytes()
    with pytest.raises(SystemExit) as stop:
        student_edition.main([str(src), str(out)])
    assert "nothing was written" in str(stop.value) and "FORCE=1" in str(stop.value)
    assert f"KEEP  {mine}" in capsys.readouterr().out
    assert mine.read_text() == edited                                  # kept, byte for byte
    assert (out / "part1" / "s01_x.ipynb").read_bytes() == other       # nothing else written either
    assert student_edition.main(["--check-edits", str(out)]) == 1       # make clean stops too
    # --force (make student FORCE=1) replaces it, after keeping it as a .bak; the student's own file stays
    assert student_edition.main(["--force", str(src), str(out)]) == 0
    (bak,) = (out / "part1").glob("s00_x.ipynb.*.bak")
    assert bak.read_text() == edited and "my answer" not in mine.read_text()
    assert (out / "part1" / "my_notes.ipynb").read_text() == "{}"


def test_rerun_updates_unchanged_files_and_removes_only_its_own_stale_ones(tmp_path):
    src, out = _course(tmp_path / "src", n=3), tmp_path / "out"
    student_edition.main([str(src), str(out)])
    (src / "part1" / "s02_x.ipynb").unlink()                          # a section removed from the book
    assert student_edition.main([str(src), str(out)]) == 0
    assert sorted(p.name for p in (out / "part1").iterdir()) == ["s00_x.ipynb", "s01_x.ipynb"]
    assert student_edition.edited(out) == []


def test_student_edition_loses_nothing_on_a_full_disk(tmp_path):
    """A 150 kB notebook rewritten under a 64 kB file size limit (ulimit -f): the old one stays."""
    import resource
    import subprocess
    src, out = _course(tmp_path / "src", n=1), tmp_path / "out"
    student_edition.main([str(src), str(out)])
    target = out / "part1" / "s00_x.ipynb"
    before = target.read_bytes()
    nb = json.loads((src / "part1" / "s00_x.ipynb").read_text())
    nb["cells"][0]["source"] = "x" * 150_000
    (src / "part1" / "s00_x.ipynb").write_text(json.dumps(nb))

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "student_edition.py"), str(src), str(out)],
                       capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert r.returncode != 0 and "File too large" in r.stderr and "Traceback" not in r.stderr
    assert target.read_bytes() == before
    assert sorted(p.name for p in (out / "part1").iterdir()) == ["s00_x.ipynb"]   # no temp file left
    # an edited file under FORCE on the full disk: kept as a complete .bak, and not replaced either
    edited = before.replace(b"page 0", b"page 0, my notes")
    target.write_bytes(edited)
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "student_edition.py"), "--force", str(src), str(out)],
                       capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert r.returncode != 0 and "no edited file was replaced" in r.stderr
    assert target.read_bytes() == edited
    (bak,) = (out / "part1").glob("s00_x.ipynb.*.bak")
    assert bak.read_bytes() == edited
    assert len(list((out / "part1").iterdir())) == 2                              # no temp file left
