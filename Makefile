# convfuse — the two commands a reader needs: `make report` (render the study from recorded results,
# any machine) and `make test` (the CPU suite). Everything else runs on a GPU box.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# The torch CI tests with (the CPU build where no GPU is; the package itself needs torch>=2.4, pyproject.toml); on a
# GPU box run `make venv TORCH=torch` or create the venv with --system-site-packages over a CUDA torch.
TORCH ?= torch==2.13.0
PYTEST_FLAGS ?= -q
NCU ?= ncu
SANITIZE_RECORD ?=

.PHONY: venv report readme test lab bench gpu-test fuse-bench profile sanitize clean

venv: $(VENV)/.ready

$(VENV)/.ready: requirements.txt
	@echo "[venv] creating $(VENV) (first run only; a minute or two)"
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check "$(TORCH)"
	@$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	@$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "convfuse (python3)" >/dev/null
	@touch $@

# Render every notebook to report/*.html; recorded mode unless CONVFUSE_MODE says otherwise.
report: venv
	CONVFUSE_MODE=$${CONVFUSE_MODE:-recorded} $(PY) -m convfuse report

# README's results table, regenerated from the newest recorded run
readme: venv
	$(PY) -m convfuse readme

test: venv
	$(PY) -m pytest $(PYTEST_FLAGS) -m "not gpu" tests

lab: venv
	PYTHONPATH=$(CURDIR) $(VENV)/bin/jupyter lab notebooks/

# --- GPU box ---------------------------------------------------------------------------------------
bench: venv
	$(PY) -m convfuse bench

gpu-test: venv
	$(PY) -m pytest $(PYTEST_FLAGS) -m gpu tests

# fuse(model) in eager and under torch.compile(fullgraph=True), timed beside eager and torch.compile(model)
fuse-bench: venv
	$(PY) -m convfuse fuse

profile: venv
	$(PY) -m convfuse profile --ncu $(NCU)

# compute-sanitizer memcheck, racecheck, synccheck on every kernel variant at the odd shapes; the counts land on
# this GPU's record (results/<gpu-slug>.json, or SANITIZE_RECORD), each with the machine code it checked
sanitize: venv
	$(PY) -m convfuse sanitize $(if $(SANITIZE_RECORD),--record $(SANITIZE_RECORD))

# what the build and `make report` made; the README's figure is committed and stays
clean:
	rm -rf build dist report/*.html report/notebooks .pytest_cache
	find figures -name '*.png' ! -path figures/progress.png -delete
