# Everything installs into .venv with the machine's python3, so a fresh clone works.
# constraints.txt pins a resolved set (pyproject.toml keeps the compatible ranges); it spares pip's resolver
# minutes of backtracking among boto3/aiobotocore/moto releases.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv run test bench clean provision sqlite-jdbc

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,dask,notebook]'
	touch $(STAMP)

venv: $(STAMP)

# Real engines for tests/engines (issue 13): each component is provisioned once into $(INTEROP), beside .venv;
# a warm run only checks stamp files. A component that cannot be provisioned leaves $(INTEROP)/<name>.error with
# the reason: the tests that need it are skipped with that line, or fail under CI=true.
INTEROP := .cache/interop
ICEBERG_VERSION := 1.10.2
SPARK_SCALA := 3.5_2.12
ICEBERG_JAR := $(INTEROP)/jars/iceberg-spark-runtime-$(SPARK_SCALA)-$(ICEBERG_VERSION).jar
INTEROP_WHEELS := $(VENV)/.interop-installed
MVN_COPY := mvn -B -q -Dstyle.color=never -Dmaven.repo.local=$(abspath $(INTEROP))/m2 \
	org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy -DoutputDirectory=$(abspath $(INTEROP))/jars

$(INTEROP_WHEELS): $(STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,dask,notebook,interop]'
	touch $@

$(ICEBERG_JAR):
	mkdir -p $(INTEROP)/jars
	$(MVN_COPY) -Dartifact=org.apache.iceberg:iceberg-spark-runtime-$(SPARK_SCALA):$(ICEBERG_VERSION) \
		> $(INTEROP)/iceberg.log 2>&1 \
	&& rm -rf $(INTEROP)/iceberg.error $(INTEROP)/m2/org/apache/iceberg \
	|| { { grep -m1 ERROR $(INTEROP)/iceberg.log || tail -n 1 $(INTEROP)/iceberg.log; } \
	     | sed 's/\x1b\[[0-9;]*m//g' > $(INTEROP)/iceberg.error; \
	     echo "provision: iceberg-spark-runtime unavailable: $$(cat $(INTEROP)/iceberg.error)"; }

# Debian's SQLite JDBC driver (with its JNI library) for the JDBC catalog shared with PyIceberg's SqlCatalog.
sqlite-jdbc:
	@mkdir -p $(INTEROP)
	@if [ -e /usr/share/java/sqlite-jdbc.jar ]; then rm -f $(INTEROP)/sqlite-jdbc.error; \
	elif [ "$$(id -u)" != 0 ]; then echo "not root: apt-get install libxerial-sqlite-jdbc-java" > $(INTEROP)/sqlite-jdbc.error; \
	elif { apt-get install -y -qq --no-install-recommends libxerial-sqlite-jdbc-java \
	       || { apt-get update -qq && apt-get install -y -qq --no-install-recommends libxerial-sqlite-jdbc-java; }; \
	     } > $(INTEROP)/sqlite-jdbc.log 2>&1; then rm -f $(INTEROP)/sqlite-jdbc.error; \
	else tail -n 1 $(INTEROP)/sqlite-jdbc.log > $(INTEROP)/sqlite-jdbc.error; fi
	@if [ -e $(INTEROP)/sqlite-jdbc.error ]; then echo "provision: sqlite-jdbc unavailable: $$(cat $(INTEROP)/sqlite-jdbc.error)"; fi

provision: $(INTEROP_WHEELS) $(ICEBERG_JAR) sqlite-jdbc

run: $(STAMP)
	$(PY) -m iceberg_lineage.demo

test: $(STAMP) provision
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) benchmarks/walk.py
	$(PY) benchmarks/scan_scale.py
	$(PY) benchmarks/hook_overhead.py

clean:
	rm -rf $(VENV) warehouse .iceberg-lineage .cache
