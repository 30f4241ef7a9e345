# Set-up and everyday commands. Runs as root on a fresh Debian 12, with make's default shell.
# `make setup` installs only what is missing, so every other target can depend on it cheaply.
# SANDLOT_LANGUAGES=python,cpp (or SETUP_ARGS=--languages=python,cpp) installs only some
# languages; SETUP_ARGS=--with-aider also installs Aider, for `sandlot code`.

SYSTEM_PYTHON := /usr/bin/python3
NGINX := /usr/sbin/nginx
VERL := verl==0.9.1
VENV := .venv
SETUP_ARGS ?=
PYTEST_ARGS ?=
CHROMIUM := /usr/bin/chromium

.PHONY: setup serve test test-fast lint bench docs

setup: $(VENV)/.installed
	$(VENV)/bin/sandlot setup $(SETUP_ARGS)

serve: setup
	exec $(VENV)/bin/sandlot serve --host 127.0.0.1 --port 8080

# The tests need the test extras and Aider too (tests/coder/test_coder_flow.py drives it), and the VM
# test (tests/vm/) installs qemu and debootstrap itself when it first runs.
test: $(VENV)/.installed-test $(NGINX) $(CHROMIUM)
	$(VENV)/bin/sandlot setup --with-aider $(SETUP_ARGS)
	$(VENV)/bin/python -m pytest -q $(PYTEST_ARGS)

# The edit-run loop, in under a minute: what needs neither the jail nor a VM, an image, SLURM or
# a browser, and is not slow (datasets, JVMs, Aider, the fuzzer; their modules are not even
# imported, nor the fuzzer's plugins). The jail's own quick tier: make test PYTEST_ARGS="-m 'root
# and not slow'".
FAST := not slow and not root and not vm and not image and not slurm and not browser
test-fast: $(VENV)/.installed-test setup
	$(VENV)/bin/python -m pytest -q -p no:schemathesis -p no:hypothesispytest -m '$(FAST)' \
	  $(PYTEST_ARGS)

bench: setup
	$(VENV)/bin/python bench/engine.py $(BENCH_ARGS)

# The docs site: the generated parts of its pages rewritten (the API reference, settings,
# integrity and datasets tables, the CLI), then built into build/site. The languages table is
# rewritten by bench/languages.py (or python -m sandlot.docgen.languages), which probe this
# machine's toolchains. NO_MKDOCS_2_WARNING: Material's notice about MkDocs 2, on every build.
docs: $(VENV)/.installed-test
	$(VENV)/bin/python -m sandlot.docgen
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The server and client, and what the docs' examples use: the eval report's plots
# (`sandlot eval --report`). The image only serves, so its build asks for EXTRAS=server.
# Reinstalled only when pyproject.toml or this file changed since.
EXTRAS ?= server,report
$(VENV)/.installed: pyproject.toml Makefile $(VENV)/.created
	$(VENV)/bin/pip install --disable-pip-version-check -e '.[$(EXTRAS)]'
	touch $@

# What the tests and lint add: the test extras, Ray, the report's plots, the docs site's
# generator (tests/docs/test_docs.py builds it), and verl's
# sandbox_fusion reward code for tests/test_rl.py (it imports only requests, so none of verl's
# declared dependencies, torch, transformers, ray[default], ..., is needed).
$(VENV)/.installed-test: $(VENV)/.installed
	$(VENV)/bin/pip install --disable-pip-version-check -e '.[server,test,ray,report,docs]'
	$(VENV)/bin/pip install --disable-pip-version-check --no-deps '$(VERL)'
	touch $@

# Debian's nginx, for tests/deploy/test_nginx.py (deploy/nginx.conf in front of two replicas).
$(NGINX):
	apt-get update && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y --no-install-recommends nginx-light

# The browser tests' Chromium, and a font for its pages, from Debian: Playwright drives this
# one (its own browser download is neither needed nor reachable everywhere).
$(CHROMIUM):
	apt-get update && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y --no-install-recommends chromium fonts-dejavu-core

# The marker tells a venv made here from Debian's python from one made by anything else (pyenv),
# which is replaced: the server must not depend on a python that a fresh machine lacks.
$(VENV)/.created:
	dpkg-query -W -f='$${Status}' python3-venv 2>/dev/null | grep -q 'ok installed' || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends python3-venv; }
	rm -rf $(VENV)
	$(SYSTEM_PYTHON) -m venv $(VENV)
	touch $@
