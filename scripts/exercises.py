"""Read the book's exercises out of its notebooks (used by ``exercise_index.py`` and
``make_assignments.py``).

A notebook is read as a flat list of *units*: every code cell, and every markdown cell split
into prose and the sphinx-exercise directives it contains (``{exercise}``, ``{solution}``,
``{solution-start}``, ``{solution-end}``; one markdown cell may hold several). An exercise is
then

- its ``{exercise}`` directive (title, ``:label:``, prompt);
- for a code exercise: the stub, i.e. the code cell just before ``{solution-start}`` (if that
  cell is code: an exercise may leave the code to write from scratch), and the gated solution between ``{solution-start}`` and ``{solution-end}`` (code cells, and any prose
  there, which is a written part of the answer);
- the checker call ``check.<name>(...)``, the first code cell after the gated solution;
- its prose ``{solution}`` directive, if any.

Kind, time estimate and points follow documented rules (``KIND_RULE``, ``MINUTES``, ``POINTS``).
"""
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import toc_sections  # noqa: E402  (section numbers from _toc.yml)

ROMAN = {1: "I", 2: "II", 3: "III"}
OPEN = re.compile(r"^(`{3,})\s*\{(exercise|solution|solution-start|solution-end)\}\s*(.*?)\s*$")
OPTION = re.compile(r"^:([\w-]+):\s*(.*?)\s*$")
CHECK_CALL = re.compile(r"^\s*check\w*\.(\w+)\(", re.M)     # check.x(...), check_ns.x(...)

# A prose exercise is a derivation when a sentence of its title or prompt starts by asking for
# one (a proof, a derivation, a computation by hand); otherwise it is a short answer.
KIND_RULE = re.compile(r"(?:^|[.?!:)]\s+)(Derive|Prove|Show|Compute|Calculate|Differentiate|"
                       r"Write down|How large|For which)\b")
MINUTES = {"short answer": 5, "derivation": 15, "code": 15, "code (no checker)": 20}
# nbgrader points of a cell: a checker's test cell ("code"), a written answer (by the exercise's
# kind, or the written part of a code exercise), a code answer without checker nor written part
POINTS = {"short answer": 1, "derivation": 2, "code": 2, "written part of a code exercise": 1,
          "code (no checker)": 2}


@dataclass
class Unit:
    kind: str                 # "code", "prose", or a directive name
    cell: int                 # index of the notebook cell it comes from
    text: str = ""            # code / prose text / directive body
    arg: str = ""             # directive argument (exercise title, solution label)
    options: dict = field(default_factory=dict)


@dataclass
class Exercise:
    label: str
    title: str
    prompt: str
    unit: int                                     # index of the {exercise} unit
    stub: int = None                              # unit index of the stub code cell
    solution_code: list = field(default_factory=list)    # unit indices (gated code)
    solution_prose: list = field(default_factory=list)   # unit indices (gated prose)
    gate: tuple = None                            # (solution-start, solution-end) unit indices
    checker_unit: int = None
    checker: str = None                           # name of the check.<name> it calls
    written: int = None                           # unit index of the prose {solution}
    _checkers: list = field(default_factory=list)

    @property
    def kind(self):
        if self.gate:
            return "code"
        return "derivation" if KIND_RULE.search(self.title + ". " + self.prompt) else "short answer"

    @property
    def checkers(self):
        """The names of the checkers its checker cell calls (each is one graded cell)."""
        return [] if self.checker is None else self._checkers

    @property
    def minutes(self):
        return MINUTES["code (no checker)" if self.kind == "code" and not self.checker else self.kind]


def split_markdown(text, cell):
    """Prose and directive units of one markdown cell, in order."""
    units, prose, lines, i = [], [], text.split("\n"), 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        if "".join(prose).strip():
            units.append(Unit("prose", cell, "\n".join(prose).strip("\n")))
        prose = []
        fence, name, arg = m.groups()
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        if j == len(lines):
            raise ValueError(f"cell {cell}: unclosed {{{name}}} directive")
        body, options = lines[i + 1:j], {}
        while body and OPTION.match(body[0]):
            key, value = OPTION.match(body[0]).groups()
            options[key] = value
            body = body[1:]
        units.append(Unit(name, cell, "\n".join(body).strip("\n"), arg, options))
        i = j + 1
    if "".join(prose).strip():
        units.append(Unit("prose", cell, "\n".join(prose).strip("\n")))
    return units


def units_of(nb):
    units = []
    for i, c in enumerate(nb["cells"]):
        src = "".join(c["source"])
        if c["cell_type"] == "code":
            units.append(Unit("code", i, src))
        elif c["cell_type"] == "markdown":
            units.extend(split_markdown(src, i))
        else:
            units.append(Unit(c["cell_type"], i, src))
    return units


def exercises_of(units):
    """The exercises of a notebook's units, in order; raises ValueError on a broken structure."""
    exercises, by_label, gate_of, start = [], {}, None, None
    for k, u in enumerate(units):
        if u.kind == "exercise":
            if "label" not in u.options:
                raise ValueError(f"cell {u.cell}: exercise {u.arg!r} has no :label:")
            ex = Exercise(u.options["label"], u.arg, u.text, k)
            exercises.append(ex)
            by_label[ex.label] = ex
        elif u.kind == "solution-start":
            gate_of, start = by_label.get(u.arg), k
            if gate_of is None:
                raise ValueError(f"cell {u.cell}: solution-start for unknown exercise {u.arg!r}")
            if k > 0 and units[k - 1].kind == "code" and units[k - 1].cell == u.cell - 1:
                gate_of.stub = k - 1
        elif u.kind == "solution-end":
            if gate_of is None:
                raise ValueError(f"cell {u.cell}: solution-end without solution-start")
            gate_of.gate, gate_of, start = (start, k), None, None
        elif gate_of is not None:
            (gate_of.solution_code if u.kind == "code" else gate_of.solution_prose).append(k)
        elif u.kind == "solution":
            if u.arg not in by_label:
                raise ValueError(f"cell {u.cell}: solution for unknown exercise {u.arg!r}")
            by_label[u.arg].written = k
        elif u.kind == "code" and CHECK_CALL.search(u.text):
            ex = next((e for e in reversed(exercises) if e.gate), None)
            if ex is None or ex.checker is not None or ex.gate[1] != k - 1:
                raise ValueError(f"cell {u.cell}: a checker call that does not follow a gated solution")
            ex.checker_unit, ex.checker = k, CHECK_CALL.search(u.text).group(1)
            ex._checkers = CHECK_CALL.findall(u.text)
    if gate_of is not None:
        raise ValueError(f"{gate_of.label}: solution-start without solution-end")
    return exercises


def points_of(e):
    """The nbgrader points of an exercise: each checker call's test cell, each written part, or
    the code answer itself when it has neither (graded by hand)."""
    written = len(e.solution_prose) + (e.written is not None)
    if e.kind != "code":
        return POINTS[e.kind] * written
    if not e.checkers and not written:
        return POINTS["code (no checker)"]
    return POINTS["code"] * len(e.checkers) + POINTS["written part of a code exercise"] * written


@dataclass
class Section:
    path: Path
    part: int
    number: int
    title: str
    nb: dict
    units: list
    exercises: list

    @property
    def ref(self):
        return f"§{ROMAN[self.part]}.{self.number}"


def read_section(path):
    path = Path(path)
    # its number is its place in _toc.yml (a copy elsewhere, e.g. the student edition, is the same doc)
    doc = f"notebooks/{path.parent.name}/{path.stem}"
    if doc not in toc_sections.section_numbers():
        raise ValueError(f"{path}: not listed in _toc.yml (CONTRIBUTING.md, 'Adding a section')")
    part, number = toc_sections.section_numbers()[doc]
    nb = json.loads(path.read_text())
    first = "".join(nb["cells"][0]["source"]).splitlines()[0]
    units = units_of(nb)
    try:
        exercises = exercises_of(units)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return Section(path, part, number, first.lstrip("# ").strip(), nb, units, exercises)


def sections(root="notebooks"):
    """Every section of the book, in order (part, then section number)."""
    return sorted((read_section(p) for p in Path(root).glob("part*/s[0-9][0-9]_*.ipynb")),
                  key=lambda s: (s.part, s.number))
