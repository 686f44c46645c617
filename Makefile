# The two commands a newcomer needs: `make demo` and `make test`.
# Each creates .venv when missing, installs the pinned requirements and the package, then does its job;
# `make test` adds the test and benchmark packages (requirements-test.txt), which the image leaves out,
# and Beam's GCP extras (requirements-gcp.txt, in .venv/gcp-extras), which the image has.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
GCP_EXTRAS := $(VENV)/gcp-extras

.PHONY: demo test test-fast setup clean

# The application (components/, pipeline/, configs/) is imported from the root, beside the installed
# library (bert_keras/, the wheel); every command and its subprocesses see it.
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

# pip compiles each installed module's bytecode one file at a time; --no-compile and one compileall
# over the venv on every core write the same .pyc files (setup 79 -> 68 s from a fresh clone on 2 cores).
$(STAMP): requirements.txt requirements-data.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -r requirements.txt
	$(PY) -m pip install -q --no-compile --no-deps -r requirements-data.txt
	$(PY) -m pip install -q --no-compile --no-deps -e .
	$(PY) -m compileall -q -j 0 $(VENV)/lib > /dev/null
	touch $(STAMP)

# Beam's GCP extras (requirements-gcp.txt, as in the image) go to a folder of their own, on the path
# of tests/data/test_dataflow_translation.py alone (which translates each Beam pipeline for Dataflow).
# That test imports 283 of their 4,734 modules: they are compiled when it first imports them
# (compiling all of them took 12.8 s of CPU, importing the 283 uncompiled 0.8 s more).
$(TEST_STAMP): $(STAMP) requirements-gcp.txt requirements-test.txt
	$(PY) -m pip install -q -r requirements-test.txt
	rm -rf $(GCP_EXTRAS)
	$(PY) -m pip install -q --no-compile --no-deps --target $(GCP_EXTRAS) -r requirements-gcp.txt
	touch $(TEST_STAMP)

setup: $(TEST_STAMP)

# pytest exits 5 when it collects no tests; treat that as a failure, never as a pass.
test: $(TEST_STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q -n 2 --dist loadfile --durations=30 tests; \
	status=$$?; if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

test-fast: $(TEST_STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q -n 2 -m "not slow" tests; \
	status=$$?; if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

demo: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pipeline.demo --output_dir demo_out

clean:
	rm -rf $(VENV) demo_out out .pytest_cache
