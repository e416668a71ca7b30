# Everything installs into .venv with the machine's python3, so a fresh clone works.
# constraints.txt pins a resolved set (pyproject.toml keeps the compatible ranges); it spares pip's resolver
# minutes of backtracking among boto3/aiobotocore/moto releases.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv run test bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,dask,notebook]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) -m iceberg_lineage.demo

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) benchmarks/walk.py
	$(PY) benchmarks/scan_scale.py
	$(PY) benchmarks/hook_overhead.py

clean:
	rm -rf $(VENV) warehouse .iceberg-lineage
