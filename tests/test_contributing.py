"""CONTRIBUTING.md is checked against the code: every repository path, script and make target it
names exists (so "Adding a section" cannot silently go stale when a file moves)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "CONTRIBUTING.md").read_text()
PLACEHOLDER = re.compile(r"<|>|\*|\.\.\.|partK|sNN|\bNN\b|partN|NB\.ipynb|X\.py|\{|NAME")
SUFFIX = (".py", ".yml", ".yaml", ".md", ".ipynb", ".cfg", ".txt", ".json", ".toml", "/")


def code_spans():
    return [m.group(1) for m in re.finditer(r"`([^`\n]+)`", TEXT)]


def paths():
    """Repository paths named in code spans (the first word of a command's span too)."""
    out = set()
    for span in code_spans():
        for word in span.split():
            word = word.strip("(),;:")
            if PLACEHOLDER.search(word) or word.startswith(("http", "-", "$", "~", "../", "/", ".venv", "_build")):
                continue
            if "/" in word.rstrip("/") and word.endswith(SUFFIX) or re.fullmatch(r"[\w.-]+\.(yml|cfg|toml)", word):
                out.add(word.rstrip("/"))
    return sorted(out)


def make_targets():
    return sorted({m.group(1) for span in code_spans() for m in re.finditer(r"\bmake ([a-z][\w-]*)", span)})


def test_every_path_contributing_names_exists():
    named = paths()
    assert len(named) > 20, named                       # the parser found the paths
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"CONTRIBUTING.md names files that do not exist: {missing}"


def test_every_make_target_contributing_names_exists():
    targets = make_targets()
    assert {"test", "book", "exercise-index", "assignments"} <= set(targets), targets
    makefile = (ROOT / "Makefile").read_text()
    defined = set(re.findall(r"^([a-z][\w-]*)\s*:", makefile, re.M))
    missing = [t for t in targets if t not in defined]
    assert not missing, f"CONTRIBUTING.md names make targets the Makefile lacks: {missing}"


def test_adding_a_section_names_what_the_code_reads():
    """The settings "Adding a section" names are the ones the scripts read."""
    section = TEXT.split("## Adding a section", 1)[1].split("\n## ", 1)[0]
    assert '"budget_s"' in section and '"budget_s"' in (ROOT / "scripts" / "bench.py").read_text()
    for var in ("NB_FIRST", "NB_LAST"):
        assert var in section and re.search(rf"^{var}\s*:=", (ROOT / "Makefile").read_text(), re.M)
    assert "--calibrate" in section and "--calibrate" in (ROOT / "scripts" / "claims.py").read_text()
    assert "toc_sections.py" in section and (ROOT / "book" / "_ext" / "toc_sections.py").exists()
