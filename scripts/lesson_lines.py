"""How much of a notebook's *visible* code is the lesson? (CONTRIBUTING.md, "Notebooks show the lesson")

A reader sees the code of every code cell that is not hidden with one of Jupyter Book's tags
(``remove-input``, ``remove-cell``, ``hide-input``, ``hide-cell``). Each visible statement is
classified by what it does:

- **plumbing**: imports; ``glue(`` (numbers for the prose); statistics for the prose
  (``mean_se``, ``paired_diff``, ``se(``, ``.std(``); cache handling (``cache.``); figure
  styling (``plt.``, ``ax.``/``ax1.``..., ``fig.``, ``plots.`` helpers, ``.legend(``, ``set_title`` ...);
  ledger bookkeeping (``Ledger(``, ``.row(``, ``verdict(``, ``effect(``, ``holds(``, ``close(``);
- **lesson**: every other statement (the equations, the experiment, what is printed or shown).

Lines are counted per statement (a statement over three lines counts three), blank lines and
comment-only lines not at all. A compound statement (``for``, ``if``, ``with``, ``def``) counts
its header as lesson and its body statement by statement.

    python scripts/lesson_lines.py [NOTEBOOK ...]     # default: notebooks/part*/*.ipynb
    python scripts/lesson_lines.py --min 0.6          # exit 1 if a notebook is under 60 %

``tests/test_notebook_layout.py`` checks every notebook against ``MIN_SHARE`` and that no visible
cell calls ``glue(``.
"""
import ast
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDDEN = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
MIN_SHARE = 0.6
PLUMBING = re.compile(
    r"""(^\s*(import\s|from\s+\S+\s+import\s))      # imports
      | \bglue\(                                    # numbers for the prose
      | \b(mean_se|paired_diff|se)\(|\.std\(         # statistics for the prose
      | \bcache\.                                   # cache handling
      | \bplt\.|\bax\d*\.|\baxes\b|\bfig\.|\bplots\.  # figures and tables
      | \.legend\(|\.set_(title|xlabel|ylabel|xlim|ylim|xticks|yticks)\(
      | \bLedger\(|\bledger\.|\.row\(|\.claim\(|\b(verdict|effect|no_effect|holds|close)\(  # ledger bookkeeping""", re.X)


def visible_cells(nb):
    """The code cells a reader of the HTML sees the code of."""
    return [c for c in nb["cells"] if c["cell_type"] == "code"
            and not HIDDEN & set(c.get("metadata", {}).get("tags", []))]


def _code_lines(text, first, last):
    """Line numbers first..last (1-based) of ``text`` that are neither blank nor only a comment."""
    lines = text.splitlines()
    return [i for i in range(first, last + 1)
            if i <= len(lines) and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")]


def classify(source):
    """(lesson lines, plumbing lines) of one cell's source (IPython magics are ignored)."""
    text = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines())
    try:
        tree = ast.parse(text)
    except SyntaxError:                       # an exercise stub that does not parse: all lesson
        return len(_code_lines(text, 1, len(text.splitlines()))), 0
    lesson = plumbing = 0

    def visit(stmts):
        nonlocal lesson, plumbing
        for st in stmts:
            body = [getattr(st, f) for f in ("body", "orelse", "finalbody", "handlers") if getattr(st, f, None)]
            if body:
                first_body = min(b[0].lineno for b in body) if body else st.end_lineno + 1
                head = _code_lines(text, st.lineno, first_body - 1)
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.decorator_list:
                    head = _code_lines(text, st.decorator_list[0].lineno, first_body - 1)
                lesson += len(head)
                for b in body:
                    if b and isinstance(b[0], ast.ExceptHandler):
                        for h in b:
                            lesson += len(_code_lines(text, h.lineno, h.body[0].lineno - 1))
                            visit(h.body)
                    else:
                        visit(b)
                continue
            seg = ast.get_source_segment(text, st) or ""
            n = len(_code_lines(text, st.lineno, st.end_lineno))
            if PLUMBING.search(seg):
                plumbing += n
            else:
                lesson += n
    visit(tree.body)
    return lesson, plumbing


def count(path):
    """{'lesson', 'plumbing', 'visible', 'share', 'glue_cells'} of one notebook's visible code."""
    nb = json.loads(pathlib.Path(path).read_text())
    lesson = plumbing = glue_cells = 0
    for c in visible_cells(nb):
        src = "".join(c["source"])
        le, pl = classify(src)
        lesson, plumbing = lesson + le, plumbing + pl
        glue_cells += bool(re.search(r"\bglue\(", src))
    visible = lesson + plumbing
    return {"lesson": lesson, "plumbing": plumbing, "visible": visible,
            "share": lesson / visible if visible else 1.0, "glue_cells": glue_cells}


def main(argv):
    minimum = None
    if "--min" in argv:
        i = argv.index("--min")
        minimum = float(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    paths = [pathlib.Path(a) for a in argv] or sorted(ROOT.glob("notebooks/part*/*.ipynb"))
    bad = 0
    print(f"{'notebook':48s} {'lesson':>6s} {'plumb':>6s} {'share':>6s} {'glue cells':>10s}")
    for p in paths:
        c = count(p)
        low = minimum is not None and (c["share"] < minimum or c["glue_cells"])
        bad += low
        name = str(p.relative_to(ROOT) if p.resolve().is_relative_to(ROOT) and p.is_absolute() else p)
        print(f"{name:48s} {c['lesson']:6d} {c['plumbing']:6d} {c['share']:6.0%} {c['glue_cells']:10d}"
              + ("  <- under" if low else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
