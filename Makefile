# RL for Reasoning, by Hand — every command sets itself up on a fresh machine (needs python3 >= 3.11.5:
# the pinned requirements.txt needs it, e.g. soupsieve 4.1.3; numpy, pandas, matplotlib and ipython need 3.11).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV   := .venv
PY     := $(VENV)/bin/python
JB     := $(VENV)/bin/jupyter-book
STAMP  := $(VENV)/.installed
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: help setup book test unit nbval claims claims-here evidence fresh evidence-check student bench browser clean

help:
	@echo "make book     build the HTML book into _build/html (stops on a never-run notebook and names it; warnings are errors)"
	@echo "make test     unit tests + nbval re-execution of every notebook + a warnings-as-errors build"
	@echo "make evidence        prove a refactor by one run per arm and re-key, re-train what is stale (evidence/), re-execute Part III,"
	@echo "                     then make claims for the notebooks whose outputs changed (WORKERS=8, BACKEND=dask SCHEDULER=tcp://...)"
	@echo "make fresh           the ledgers' rows again on seeds and warm-ups the book never used; each row says whether it replicated"
	@echo "make evidence-check  prove the record: seals, keys, claims.json; the records the history flags and this commit's rotation"
	@echo "                     (every record once in 20 commits) re-trained bit for bit (EVIDENCE_BASE=sha: every record changed since)"
	@echo "make claims   every notebook afresh under another arithmetic, the book's claims checked; result in evidence/claims.json"
	@echo "              (NB=\"notebooks/partN/x.ipynb ...\": only these, the others' results kept)"
	@echo "make student  student edition: notebooks without solutions in _build/student/notebooks + HTML with solutions hidden"
	@echo "              (never overwrites a notebook edited there: FORCE=1 replaces it after keeping a .bak)"
	@echo "make bench    execute every notebook and compare times to the budgets"
	@echo "make exercise-index  regenerate book/exercises.md from the notebooks"
	@echo "make assignments     nbgrader course in \$$COURSE (default ./course, outside _build): source + release of every section"
	@echo "make grade ASSIGNMENT=...  import students.csv, collect, autograde, export grades (one column per question)"
	@echo "make grade-demo      nbgrader round trip: eight submissions (honest, partial, cheats) and their expected scores"

	@echo "make browser  both editions in chromium: offline, math, layout at 390/900/1366 px, page weight, search, a live slider, JupyterLab"
	@echo "make lab      the notebooks, live, in JupyterLab with MyST rendered (copies in lab/book; STUDENT=1: lab/student)"

setup: $(STAMP)

PYTHON_FLOOR := 3.11.5

$(STAMP): requirements.txt pyproject.toml toy/_reference.py scripts/install_reference.py
	@python3 -c 'import sys; v = sys.version_info[:3]; sys.exit(0 if v >= (3, 11, 5) else \
	  "make: this book needs Python >= $(PYTHON_FLOOR) (python3 is %d.%d.%d): install a newer python3 and retry" % v)'
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) scripts/install_reference.py     # the reference arithmetic, set in every process of .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# The HTML build's node tools (book/_ext: MathJax typesets the maths at build time, PurgeCSS cuts
# the theme's CSS): the exact versions of book/_ext/node/package-lock.json, installed with npm ci
# into _build/node (Debian: apt-get install -y nodejs npm)
NODE_DIR   := _build/node
NODE_STAMP := $(NODE_DIR)/.installed

$(NODE_STAMP): book/_ext/node/package.json book/_ext/node/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || \
	  { echo "make: the book's build needs node and npm (Debian: apt-get install -y nodejs npm)"; exit 1; }
	mkdir -p $(NODE_DIR)
	cp book/_ext/node/package.json book/_ext/node/package-lock.json $(NODE_DIR)/
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

book: $(STAMP) $(NODE_STAMP)
	$(PY) scripts/execute_needed.py
	$(JB) build . --builder html -W -n --keep-going
	@echo "book: _build/html/index.html"

unit: $(STAMP)
	$(PY) -m pytest tests -q -n 2

# nbval's order: Part III first (it reads its runs from the evidence record: seconds), then the rest
NB_FIRST  := notebooks/part3/s03_why_grpo.ipynb notebooks/part3/s06_case_studies.ipynb notebooks/part3/s02_policy_gradient_to_ppo.ipynb \
             notebooks/part3/s04_grpo_biases.ipynb notebooks/part3/s01_verifiable_rewards.ipynb notebooks/part3/s08_loss_variants.ipynb
NB_LAST   := notebooks/part3/s05_thinking_model.ipynb notebooks/part3/s07_ledger.ipynb
NOTEBOOKS := $(NB_FIRST) $(filter-out $(NB_FIRST) $(NB_LAST),$(sort $(wildcard notebooks/part*/*.ipynb))) $(NB_LAST)
PART3     := $(filter notebooks/part3/%,$(NB_FIRST) $(NB_LAST))
NBVAL_CACHE := $(abspath _build/nbval-cache)

# On the reference arithmetic nbval compares every digit; elsewhere the claims are checked
# (scripts/arith_mode.py says which and why; scripts/claims.py). First, in seconds: is the
# evidence record current (a stale record would make nbval train for half an hour, then fail)?
nbval: $(STAMP)
	@$(PY) scripts/arith_mode.py
	@if [ "$$($(PY) scripts/arith_mode.py --mode 2>/dev/null)" = reference ]; then \
	  $(PY) scripts/evidence.py check --keys --no-claims; \
	  rm -rf $(NBVAL_CACHE); \
	  echo "TOY_CACHE_DIR=$(NBVAL_CACHE) $(PY) -m pytest $(NBVAL) -n 2 --dist loadscope -q <notebooks>"; \
	  TOY_CACHE_DIR=$(NBVAL_CACHE) $(PY) -m pytest $(NBVAL) -n 2 --dist loadscope -q $(NOTEBOOKS); \
	  if ls $(NBVAL_CACHE)/tinylm-* >/dev/null 2>&1; then \
	    echo "nbval: the notebooks trained models the evidence record does not hold ($$(ls $(NBVAL_CACHE) | tr '\n' ' ')): run make evidence"; exit 1; \
	  else echo "nbval: no notebook trained a model (every Part III run and warm-up came from evidence/)"; fi; \
	else $(MAKE) --no-print-directory claims-here; fi

# claims-here: the claims on this machine's own arithmetic, every run trained here (what make test does
# off the reference arithmetic). claims: the same on purpose under another arithmetic (OpenBLAS's
# Prescott kernels, numpy's baseline dispatch), its result kept in evidence/claims.json for the
# record's version (make evidence-check fails when that result is missing or belongs to other evidence).
# NB="a.ipynb b.ipynb": only these (claims.json keeps the other notebooks' results for the same record).
CLAIMS_RUN = RL_BY_HAND_EVIDENCE=off RL_BY_HAND_CLAIMS=1 CLAIMS_NOTEBOOKS="$(or $(NB),$(NOTEBOOKS))" $(PY) -m pytest tests/claims -n 2 -q
OTHER_ARITH := OPENBLAS_CORETYPE=Prescott NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR"

claims-here: $(STAMP)
	$(CLAIMS_RUN)

claims: $(STAMP)
	$(OTHER_ARITH) CLAIMS_RESULT=evidence/claims.json $(CLAIMS_RUN)

# make evidence: first `scripts/evidence.py prove`: where the training code's hash changed, one record
# of every arm re-trained (52 arms: measured 9 min on two cores); an arm that reproduces bit for bit is
# re-keyed without training (a refactor), the others stay stale. Then Part III's notebooks executed in
# record mode (a run whose record is current is read, a stale or missing one trained and written;
# after a change of the numerics ≈ 25 min for the book's notebooks and ≈ 40 min for §III.8's 468 race
# runs, on two cores, cells without a time limit), the records no notebook used removed (listed), then
# make claims for the notebooks whose code or outputs changed only. Nothing else is rewritten: the
# notebooks are written back atomically, each old file kept as NAME.ipynb.<time>.bak.
# WORKERS=N: N processes; BACKEND=dask SCHEDULER=tcp://host:8786: a Dask cluster (toy/record/engine.py).
EVIDENCE_USED := _build/evidence-used.txt
ENGINE := $(if $(WORKERS),WORKERS=$(WORKERS)) $(if $(BACKEND),BACKEND=$(BACKEND)) $(if $(SCHEDULER),SCHEDULER=$(SCHEDULER))

evidence: $(STAMP)
	@mkdir -p _build && rm -f $(EVIDENCE_USED)
	$(ENGINE) $(PY) scripts/evidence.py prove
	$(ENGINE) RL_BY_HAND_EVIDENCE=record RL_BY_HAND_EVIDENCE_LOG=$(abspath $(EVIDENCE_USED)) $(PY) scripts/execute_needed.py --inplace $(PART3)
	$(ENGINE) RL_BY_HAND_EVIDENCE=record RL_BY_HAND_EVIDENCE_LOG=$(abspath $(EVIDENCE_USED)) $(PY) scripts/fresh.py $(FRESH_LEDGERS)
	$(PY) scripts/execute_needed.py --inplace $(FRESH_LEDGERS)
	$(PY) scripts/evidence.py prune $(EVIDENCE_USED)
	@stale="$$($(PY) scripts/evidence.py stale-claims)"; \
	if [ -n "$$stale" ]; then $(MAKE) --no-print-directory claims NB="$$stale"; \
	else echo "make evidence: every notebook's claims check is current (evidence/claims.json)"; fi

# make fresh: the ledgers' rows on seeds and warm-ups the book never used (toy.seeds, scripts/fresh.py): each
# ledger executed with RL_BY_HAND_SEEDS=fresh in a scratch copy (its Part III runs recorded in evidence/ like
# the book's; ≈ 10 min after a training-code change, seconds when recorded; Parts I and II ≈ 1 min, nothing
# recorded), its findings kept in
# evidence/fresh/, then the ledger re-executed in place to show, row by row, whether each one replicated.
# make evidence does this too.
FRESH_LEDGERS := notebooks/part1/s12_ledger.ipynb notebooks/part2/s07_ledger.ipynb notebooks/part3/s07_ledger.ipynb

fresh: $(STAMP)
	RL_BY_HAND_EVIDENCE=record $(PY) scripts/fresh.py $(FRESH_LEDGERS)
	$(PY) scripts/execute_needed.py --inplace $(FRESH_LEDGERS)

# make evidence-check: EVIDENCE_BASE=<commit> (the last landed commit, where CI knows it) re-trains every
# record whose numbers changed since; without it, what the last 100 commits' history flags (toy/record/history.py)
evidence-check: $(STAMP)
	$(ENGINE) $(PY) scripts/evidence.py check

test: unit nbval book

# The handout is $(STUDENT_DIR)/notebooks; $(STUDENT_DIR)/src is the HTML's source. Both are written by
# scripts/student_edition.py, which never overwrites or removes a file edited since it wrote it
# (FORCE=1 replaces such a file after keeping it as NAME.<time>.bak).
# (not STUDENT: `make lab STUDENT=1` chooses the student edition)
STUDENT_DIR := _build/student
FORCE_FLAG = $(if $(FORCE),--force)

student: $(STAMP) $(NODE_STAMP)
	$(PY) scripts/student_edition.py $(FORCE_FLAG) notebooks '$(STUDENT_DIR)/notebooks'
	$(PY) scripts/student_edition.py --site $(FORCE_FLAG) '$(STUDENT_DIR)/notebooks' '$(STUDENT_DIR)/src'
	$(JB) build '$(STUDENT_DIR)/src' --builder html -W -n --keep-going --path-output '$(STUDENT_DIR)'
	@echo "student edition: notebooks to hand out in $(STUDENT_DIR)/notebooks, HTML in $(STUDENT_DIR)/_build/html"

bench: $(STAMP)
	$(PY) scripts/bench.py
	$(PY) scripts/bench.py --commands

.PHONY: exercise-index instructor-setup assignments grade grade-demo

exercise-index: $(STAMP)
	$(PY) scripts/exercise_index.py

# ---- instructor kit (nbgrader): its own venv, so that book/test never install the grader.
# The course folder lives OUTSIDE _build (make clean never deletes a gradebook or a submission);
# COURSE=/path/of/your/course to put it elsewhere. Nothing in it is overwritten without FORCE=1.
IVENV  := .venv-instructor
IPY    := $(IVENV)/bin/python
ISTAMP := $(IVENV)/.installed
COURSE ?= course
DEMO   := _build/grade-demo
ASSIGNMENT ?=
FORCE  ?=
BOOK_URL ?=
# nbgrader run in the course folder with the instructor venv first on PATH (paths quoted: a
# COURSE with spaces or shell characters is a folder name, never a command)
NBGRADER = cd '$(subst ','\'',$(1))' && PATH='$(abspath $(IVENV))/bin':"$$PATH" nbgrader

instructor-setup: $(ISTAMP)

$(ISTAMP): requirements.txt requirements-instructor.txt pyproject.toml
	test -x $(IPY) || python3 -m venv $(IVENV)
	$(IPY) -m pip install --quiet --upgrade pip
	$(IPY) -m pip install --quiet -r requirements-instructor.txt
	$(IPY) -m pip install --quiet --no-deps -e .
	touch $(ISTAMP)

QCOURSE = '$(subst ','\'',$(COURSE))'

assignments: $(ISTAMP)
	$(IPY) instructor_kit/make_assignments.py $(if $(FORCE),--force) $(if $(BOOK_URL),--book-url '$(subst ','\'',$(BOOK_URL))') notebooks $(QCOURSE)
	$(call NBGRADER,$(COURSE)) generate_assignment '*' --force --log-level=WARN
	@printf '%s\n' "assignments: sources in "$(QCOURSE)"/source, student versions in "$(QCOURSE)"/release (docs/instructors.md)"

# make grade ASSIGNMENT=part2-s04_ppo_grpo_temperature [COURSE=...]: import students.csv, collect from
# the exchange, autograde, export that assignment's grades (one column per question) and an LMS CSV
grade: $(ISTAMP)
	@test -n '$(ASSIGNMENT)' || { echo "make grade: say which, e.g. ASSIGNMENT=part2-s04_ppo_grpo_temperature"; exit 1; }
	$(IPY) instructor_kit/grade.py all $(QCOURSE) '$(subst ','\'',$(ASSIGNMENT))'

grade-demo: $(ISTAMP)
	rm -rf $(DEMO)
	$(IPY) instructor_kit/grade_demo.py $(DEMO)

# The browser suite (tests/browser): needs Debian's chromium (apt-get install -y chromium).
# Reuses _build/html if `make book`/`make test` built it; always rebuilds the student edition.
BROWSER_STAMP := $(VENV)/.browser-installed
CHROMIUM      ?= /usr/bin/chromium

$(BROWSER_STAMP): requirements-browser.txt $(STAMP)
	$(PY) -m pip install --quiet -r requirements-browser.txt
	touch $(BROWSER_STAMP)

# The live notebooks: JupyterLab + jupyterlab-myst (requirements-lab.txt, installed into .venv here
# and by `make browser` only). scripts/lab.py copies the notebooks into $(LAB_DIR)/book (never over a
# copy that exists: it is the reader's work) and starts JupyterLab on 127.0.0.1; STUDENT=1 (and only
# that variable): the student edition, in $(LAB_DIR)/student. LAB_STATE holds JupyterLab's settings
# and workspaces; LAB_NO_BROWSER=1 opens no browser (the browser suite sets all three).
LAB_STAMP := $(VENV)/.lab-installed
LAB_PORT  ?= 8888
LAB_DIR   ?= lab
LAB_STATE ?= _build/lab

$(LAB_STAMP): requirements-lab.txt $(BROWSER_STAMP)
	$(PY) -m pip install --quiet -r requirements-lab.txt
	touch $(LAB_STAMP)

.PHONY: lab
lab: $(LAB_STAMP)
	$(PY) scripts/lab.py --port $(LAB_PORT) --lab '$(LAB_DIR)' --state '$(LAB_STATE)' $(if $(STUDENT),--student) $(if $(LAB_NO_BROWSER),--no-browser)

browser: $(BROWSER_STAMP) $(LAB_STAMP)
	@test -x $(CHROMIUM) || { echo "make browser: $(CHROMIUM) missing (apt-get install -y chromium)"; exit 1; }
	test -f _build/html/index.html || $(MAKE) book
	$(MAKE) student
	BOOK_BROWSER_TESTS=1 BOOK_CHROMIUM=$(CHROMIUM) $(PY) -m pytest tests/browser -q -n 2 --dist loadgroup
	@echo "browser: screenshots and report.json in _build/browser"

# clean keeps what a person made: it stops if the student handout was edited or an nbgrader course
# (submissions, gradebook) is in _build, unless FORCE=1
clean:
	@if [ -z "$(FORCE)" ]; then \
	  python3 scripts/student_edition.py --check-edits '$(STUDENT_DIR)/notebooks' '$(STUDENT_DIR)/src' || \
	    { echo "make clean: the files above were edited; nothing was removed (make clean FORCE=1 removes them)"; exit 1; }; \
	  if [ -d _build/nbgrader ]; then \
	    echo "make clean: _build/nbgrader holds an nbgrader course (submissions, gradebook); nothing was removed (make clean FORCE=1 removes it)"; exit 1; fi; \
	fi
	rm -rf _build
