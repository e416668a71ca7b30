# Everything installs into .venv with the machine's python3, so a fresh clone works.
# constraints.txt pins a resolved set (pyproject.toml keeps the compatible ranges); it spares pip's resolver
# minutes of backtracking among boto3/aiobotocore/moto releases.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv run test docs bench clean provision sqlite-jdbc chromium flink trino

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,dask,notebook,proxy]'
	touch $(STAMP)

venv: $(STAMP)

# `make run`: the core install (the CLI, the walker, the hook, the scanner, the demo) in a venv of its own, without
# the test extras, saying what it does while it installs.
RUN_VENV := .venv-run
RUN_STAMP := $(RUN_VENV)/.installed

$(RUN_STAMP): pyproject.toml constraints.txt
	@echo "make run: creating $(RUN_VENV), a virtualenv with the core install only (no test extras)"
	$(PYTHON) -m venv $(RUN_VENV)
	@echo "make run: installing iceberg-lineage and its core dependencies (pyiceberg, pyarrow, openlineage-python, ...)"
	$(RUN_VENV)/bin/python -m pip install --disable-pip-version-check --progress-bar off -c constraints.txt -e .
	@echo "make run: installed into $(RUN_VENV) ($$(du -sh $(RUN_VENV) | cut -f1))"
	touch $@

# The core's wheels and the build backend's, for tests/package/test_wheel.py: it installs the built wheel into a
# fresh venv offline (`pip install --no-index --find-links $(WHEELHOUSE)`). Filled once by `make provision`.
WHEELHOUSE := .cache/wheelhouse
WHEELHOUSE_STAMP := $(WHEELHOUSE)/.filled

# Real engines for tests/engines (issue 13): each component is provisioned once into $(INTEROP), beside .venv;
# a warm run only checks stamp files. A component that cannot be provisioned leaves $(INTEROP)/<name>.error with
# the reason: the tests that need it are skipped with that line, or fail under CI=true.
INTEROP := .cache/interop
ICEBERG_VERSION := 1.10.2
SPARK_SCALA := 3.5_2.12
ICEBERG_JAR := $(INTEROP)/jars/iceberg-spark-runtime-$(SPARK_SCALA)-$(ICEBERG_VERSION).jar
INTEROP_WHEELS := $(VENV)/.interop-installed
MVN := mvn -B -q -Dstyle.color=never -Dmaven.repo.local=$(abspath $(INTEROP))/m2 \
	org.apache.maven.plugins:maven-dependency-plugin:3.8.1
MVN_COPY := $(MVN):copy -DoutputDirectory=$(abspath $(INTEROP))/jars

# $(call provisioned,NAME,COMMANDS): COMMANDS, logged to $(INTEROP)/NAME.log. On success NAME.error goes; on failure
# it keeps the log's first ERROR line (else its last line), which the tests print as their skip or failure reason.
provisioned = { $(2); } > $(INTEROP)/$(1).log 2>&1 && rm -f $(INTEROP)/$(1).error \
	|| { { grep -m1 ERROR $(INTEROP)/$(1).log || tail -n 1 $(INTEROP)/$(1).log; } | sed 's/\x1b\[[0-9;]*m//g' \
	     > $(INTEROP)/$(1).error; echo "provision: $(1) unavailable: $$(cat $(INTEROP)/$(1).error)"; }

$(INTEROP_WHEELS): $(STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,dask,notebook,proxy,interop]'
	touch $@

$(ICEBERG_JAR):
	mkdir -p $(INTEROP)/jars
	$(call provisioned,iceberg,$(MVN_COPY) -Dartifact=org.apache.iceberg:iceberg-spark-runtime-$(SPARK_SCALA):$(ICEBERG_VERSION) \
		&& rm -rf $(INTEROP)/m2/org/apache/iceberg)

# S3A for Spark on the SeaweedFS REST catalog: hadoop-aws and the AWS SDK bundle its pom names (each jar alone:
# Spark ships Hadoop itself). The SDK comes first, so hadoop-aws's jar (the target) exists only when both do.
HADOOP_AWS_VERSION := 3.3.4
AWS_SDK_VERSION := 1.12.262
HADOOP_AWS_JAR := $(INTEROP)/jars/hadoop-aws-$(HADOOP_AWS_VERSION).jar

$(HADOOP_AWS_JAR):
	mkdir -p $(INTEROP)/jars
	$(call provisioned,hadoop-aws,$(MVN_COPY) -Dartifact=com.amazonaws:aws-java-sdk-bundle:$(AWS_SDK_VERSION) \
		&& $(MVN_COPY) -Dartifact=org.apache.hadoop:hadoop-aws:$(HADOOP_AWS_VERSION) \
		&& rm -rf $(INTEROP)/m2/com/amazonaws/aws-java-sdk-bundle $(INTEROP)/m2/org/apache/hadoop/hadoop-aws)

# Lineage peers (issue 17): Apache Kafka's broker (KRaft) with its runtime jars, from tests/peers/poms/kafka.xml,
# and OpenLineage's Spark listener (one shaded jar), each in a folder of its own under $(INTEROP).
KAFKA_STAMP := $(INTEROP)/kafka/.installed
OPENLINEAGE_SPARK_VERSION := 1.53.0
OPENLINEAGE_SPARK_JAR := $(INTEROP)/openlineage-spark/openlineage-spark_2.12-$(OPENLINEAGE_SPARK_VERSION).jar
MVN_DEPS := $(MVN):copy-dependencies -DincludeScope=runtime

$(KAFKA_STAMP): tests/peers/poms/kafka.xml
	rm -rf $(INTEROP)/kafka/lib && mkdir -p $(INTEROP)/kafka
	$(call provisioned,kafka,$(MVN_DEPS) -f tests/peers/poms/kafka.xml -DoutputDirectory=$(abspath $(INTEROP))/kafka/lib \
		&& rm -rf $(INTEROP)/m2/org/apache/kafka $(INTEROP)/m2/org/scala-lang && touch $@)

# Apache Iceberg's own REST catalog server (RESTCatalogServer, on a JDBC catalog in SQLite) and its runtime, from
# tests/peers/poms/iceberg-rest.xml: 1.11 is the first release whose loadTable sends ETags and answers 304 (issue 32).
ICEBERG_REST_STAMP := $(INTEROP)/iceberg-rest/.installed

$(ICEBERG_REST_STAMP): tests/peers/poms/iceberg-rest.xml
	rm -rf $(INTEROP)/iceberg-rest/lib && mkdir -p $(INTEROP)/iceberg-rest
	$(call provisioned,iceberg-rest,$(MVN_DEPS) -f tests/peers/poms/iceberg-rest.xml \
		-DoutputDirectory=$(abspath $(INTEROP))/iceberg-rest/lib && touch $@)

$(OPENLINEAGE_SPARK_JAR):
	mkdir -p $(INTEROP)/openlineage-spark
	$(call provisioned,openlineage-spark,$(MVN):copy \
		-Dartifact=io.openlineage:openlineage-spark_2.12:$(OPENLINEAGE_SPARK_VERSION) \
		-DoutputDirectory=$(abspath $(INTEROP))/openlineage-spark && rm -rf $(INTEROP)/m2/io/openlineage)

# $(call debian,NAME,PACKAGE,TEST): Debian's PACKAGE installed with apt-get unless TEST passes (as root only; the
# package index refreshed once if it is stale). Otherwise $(INTEROP)/NAME.error keeps the reason, as `provisioned`.
debian = mkdir -p $(INTEROP); \
	if $(3); then rm -f $(INTEROP)/$(1).error; \
	elif [ "$$(id -u)" != 0 ]; then echo "not root: apt-get install $(2)" > $(INTEROP)/$(1).error; \
	elif { apt-get install -y -qq --no-install-recommends $(2) \
	       || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $(2); }; \
	     } > $(INTEROP)/$(1).log 2>&1; then rm -f $(INTEROP)/$(1).error; \
	else tail -n 1 $(INTEROP)/$(1).log > $(INTEROP)/$(1).error; fi; \
	if [ -e $(INTEROP)/$(1).error ]; then echo "provision: $(1) unavailable: $$(cat $(INTEROP)/$(1).error)"; fi

# Debian's SQLite JDBC driver (with its JNI library) for the JDBC catalog shared with PyIceberg's SqlCatalog.
sqlite-jdbc:
	@$(call debian,sqlite-jdbc,libxerial-sqlite-jdbc-java,[ -e /usr/share/java/sqlite-jdbc.jar ])

# Debian's Chromium for tests/docs: headless, it loads the built site's getting-started page (--dump-dom).
chromium:
	@$(call debian,chromium,chromium,command -v chromium >/dev/null)

# Sail (its merge-on-read DELETE writes equality deletes) in a virtualenv of its own: its client, pyspark-client 4,
# is the same `pyspark` package as .venv's pyspark 3.5. Every wheel is pinned (--no-deps), then checked.
SAIL_VENV := $(INTEROP)/sail/venv
SAIL_VERSION := 0.7.2
SAIL_STAMP := $(INTEROP)/sail/.installed-$(SAIL_VERSION)
SAIL_PINS := pysail==$(SAIL_VERSION) pyspark-client==4.2.0 googleapis-common-protos==1.76.0 grpcio==1.85.3 \
	grpcio-status==1.85.3 numpy==2.4.6 pandas==3.1.1 protobuf==7.36.2 pyarrow==26.0.1 python-dateutil==4.0.0 \
	PyYAML==6.0.4 typing_extensions==4.16.0 tzdata==2026.6 zstandard==0.25.0

$(SAIL_STAMP):
	mkdir -p $(INTEROP)/sail
	$(call provisioned,sail,rm -rf $(SAIL_VENV) && $(PYTHON) -m venv $(SAIL_VENV) \
		&& $(SAIL_VENV)/bin/pip install --quiet --no-deps $(SAIL_PINS) && $(SAIL_VENV)/bin/pip check && touch $@)

# Consumers' own code for tests/consumers (issue 19), each in a virtualenv of its own: OpenMetadata's ingestion
# framework (its OpenLineage connector parses events offline), every package pinned as it resolved (with
# dbt-extractor and dbt-core pinned, no dependency downloads from outside the registries), and DataHub's Airflow
# plugin with what its URN adapter imports, --no-deps (the plugin's own dependencies are Airflow's).
OPENMETADATA_VERSION := 1.13.4.1
OPENMETADATA_VENV := $(INTEROP)/openmetadata/venv
OPENMETADATA_STAMP := $(INTEROP)/openmetadata/.installed-$(OPENMETADATA_VERSION)
DATAHUB_VERSION := 1.7.0.17
DATAHUB_VENV := $(INTEROP)/datahub/venv
DATAHUB_STAMP := $(INTEROP)/datahub/.installed-$(DATAHUB_VERSION)
DATAHUB_PINS := acryl-datahub-airflow-plugin==$(DATAHUB_VERSION) acryl-datahub==$(DATAHUB_VERSION) \
	annotated-types==0.8.0 avro==1.12.2 avro-gen3==0.7.16 cached-property==2.0.1 Deprecated==1.3.1 \
	mypy_extensions==1.2.0 pydantic==2.14.4 pydantic_core==2.50.5 six==1.17.0 typing-inspect==0.9.0 \
	typing-inspection==0.4.5 typing_extensions==4.16.0 wrapt==2.5.2

$(OPENMETADATA_STAMP): tests/consumers/openmetadata-pins.txt
	mkdir -p $(INTEROP)/openmetadata
	$(call provisioned,openmetadata,rm -rf $(OPENMETADATA_VENV) && $(PYTHON) -m venv $(OPENMETADATA_VENV) \
		&& $(OPENMETADATA_VENV)/bin/pip install --quiet -c tests/consumers/openmetadata-pins.txt \
		   openmetadata-ingestion==$(OPENMETADATA_VERSION) && touch $@)

$(DATAHUB_STAMP):
	mkdir -p $(INTEROP)/datahub
	$(call provisioned,datahub,rm -rf $(DATAHUB_VENV) && $(PYTHON) -m venv $(DATAHUB_VENV) \
		&& $(DATAHUB_VENV)/bin/pip install --quiet --no-deps $(DATAHUB_PINS) \
		&& $(DATAHUB_VENV)/bin/python -c 'import datahub_airflow_plugin._datahub_ol_adapter' && touch $@)

# The lowest openlineage-python that pyproject.toml allows (`openlineage-python>=1.54`; `pip index versions
# openlineage-python` lists it), pinned in a small virtualenv of its own for tests/delivery/test_lowest_openlineage.py:
# openlineage-python and its dependencies installed there, constrained by constraints.txt with this one pin
# overriding; everything else (pytest, pyiceberg ...) read from .venv's site-packages through a .pth file, after them.
OPENLINEAGE_MIN := 1.54.0
OPENLINEAGE_MIN_VENV := $(INTEROP)/openlineage-min/venv
OPENLINEAGE_MIN_STAMP := $(INTEROP)/openlineage-min/.installed-$(OPENLINEAGE_MIN)

$(OPENLINEAGE_MIN_STAMP): $(STAMP) constraints.txt
	mkdir -p $(INTEROP)/openlineage-min
	$(call provisioned,openlineage-min,rm -rf $(OPENLINEAGE_MIN_VENV) && $(PYTHON) -m venv $(OPENLINEAGE_MIN_VENV) \
		&& grep -v '^openlineage-python==' constraints.txt > $(INTEROP)/openlineage-min/constraints.txt \
		&& echo 'openlineage-python==$(OPENLINEAGE_MIN)' >> $(INTEROP)/openlineage-min/constraints.txt \
		&& $(OPENLINEAGE_MIN_VENV)/bin/pip install --quiet -c $(INTEROP)/openlineage-min/constraints.txt \
		   openlineage-python \
		&& $(PY) -c 'import sysconfig; import os.path as p; print(p.realpath(sysconfig.get_paths()["purelib"]))' \
		   > $$($(OPENLINEAGE_MIN_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/shared-venv.pth \
		&& $(OPENLINEAGE_MIN_VENV)/bin/python -c 'import pytest; import openlineage.client as c; print(c.__version__)' \
		&& touch $@)

# Flink 1.20 (PyFlink, on the default Java 17) in a virtualenv of its own: apache-flink's pins clash with .venv's
# (apache-beam, pyarrow). Its cold install builds apache-flink-libraries (a 232 MB sdist): ~9 min on 2 cores.
# Its jars (issue 30): the Iceberg runtime and AWS bundle go into pipeline.jars, Hadoop's client onto HADOOP_CLASSPATH.
FLINK_VERSION := 1.20.5
FLINK_VENV := $(INTEROP)/flink/venv
FLINK_STAMP := $(INTEROP)/flink/.installed-$(FLINK_VERSION)
FLINK_JARS := $(INTEROP)/flink/jars
FLINK_JARS_STAMP := $(FLINK_JARS)/.installed-$(ICEBERG_VERSION)
FLINK_MVN_COPY := $(MVN):copy -DoutputDirectory=$(abspath $(FLINK_JARS))

$(FLINK_STAMP): tests/engines/flink-pins.txt
	mkdir -p $(INTEROP)/flink
	$(call provisioned,flink,rm -rf $(FLINK_VENV) && $(PYTHON) -m venv $(FLINK_VENV) \
		&& $(FLINK_VENV)/bin/pip install --quiet -c tests/engines/flink-pins.txt apache-flink==$(FLINK_VERSION) \
		&& $(FLINK_VENV)/bin/pip check && touch $@)

$(FLINK_JARS_STAMP):
	rm -rf $(FLINK_JARS) && mkdir -p $(FLINK_JARS)
	$(call provisioned,flink-jars,$(FLINK_MVN_COPY) -Dartifact=org.apache.iceberg:iceberg-flink-runtime-1.20:$(ICEBERG_VERSION) \
		&& $(FLINK_MVN_COPY) -Dartifact=org.apache.iceberg:iceberg-aws-bundle:1.10.1 \
		&& $(FLINK_MVN_COPY) -Dartifact=org.apache.hadoop:hadoop-client-api:3.4.1 \
		&& $(FLINK_MVN_COPY) -Dartifact=org.apache.hadoop:hadoop-client-runtime:3.4.1 \
		&& rm -rf $(INTEROP)/m2/org/apache/iceberg $(INTEROP)/m2/org/apache/hadoop/hadoop-client-* && touch $@)

flink: $(FLINK_STAMP) $(FLINK_JARS_STAMP)

# Trino 476 (issue 30) needs Java 22+: the first JDK in JAVA_HOME or /usr/lib/jvm whose `release` says 22 or newer
# (Debian's packages stop at 17). Its 821 MB server tarball is unpacked keeping only the iceberg plugin (494 MB); the
# chosen JDK's path goes to $(INTEROP)/trino/java-home for tests/support/trino.py.
TRINO_VERSION := 476
TRINO_HOME := $(INTEROP)/trino/trino-server-$(TRINO_VERSION)
TRINO_STAMP := $(INTEROP)/trino/.installed-$(TRINO_VERSION)
TRINO_JAVA = $(firstword $(foreach d,$(JAVA_HOME) $(wildcard /usr/lib/jvm/*),$(if $(shell sed -n \
	's/^JAVA_VERSION="\([0-9]*\).*/\1/p' $(d)/release 2>/dev/null | awk '$$1 >= 22'),$(d))))

$(TRINO_STAMP):
	rm -rf $(INTEROP)/trino && mkdir -p $(INTEROP)/trino
	$(call provisioned,trino,{ [ -n "$(TRINO_JAVA)" ] || { echo "ERROR: Trino needs Java 22+: none in JAVA_HOME or /usr/lib/jvm"; false; }; } \
		&& $(MVN):copy -Dartifact=io.trino:trino-server:$(TRINO_VERSION):tar.gz -DoutputDirectory=$(abspath $(INTEROP))/trino \
		&& rm -rf $(INTEROP)/m2/io/trino \
		&& tar -xzf $(INTEROP)/trino/trino-server-$(TRINO_VERSION).tar.gz -C $(INTEROP)/trino \
		&& rm $(INTEROP)/trino/trino-server-$(TRINO_VERSION).tar.gz \
		&& find $(TRINO_HOME)/plugin -mindepth 1 -maxdepth 1 ! -name iceberg -exec rm -rf {} + \
		&& echo "$(TRINO_JAVA)" > $(INTEROP)/trino/java-home && touch $@)

# Trino's Python client (PyPI `trino`) in a virtualenv of its own, every wheel pinned (--no-deps), then checked.
TRINO_CLIENT_VENV := $(INTEROP)/trino-client/venv
TRINO_CLIENT_STAMP := $(INTEROP)/trino-client/.installed-0.340.0
TRINO_CLIENT_PINS := trino==0.340.0 certifi==2026.10.19.post1 charset-normalizer==3.5.3 idna==3.20 lz4==4.4.5 \
	orjson==3.13.0 python-dateutil==4.0.0 pytz==2026.6 requests==2.34.2 tzdata==2026.6 tzlocal==5.4.5 \
	urllib3==2.8.0 zstandard==0.25.0

$(TRINO_CLIENT_STAMP):
	mkdir -p $(INTEROP)/trino-client
	$(call provisioned,trino-client,rm -rf $(TRINO_CLIENT_VENV) && $(PYTHON) -m venv $(TRINO_CLIENT_VENV) \
		&& $(TRINO_CLIENT_VENV)/bin/pip install --quiet --no-deps $(TRINO_CLIENT_PINS) \
		&& $(TRINO_CLIENT_VENV)/bin/pip check && touch $@)

trino: $(TRINO_STAMP) $(TRINO_CLIENT_STAMP)

# Marquez 0.51.1, the reference OpenLineage server (issue 27): its api jar, pom.xml and loopback marquez.yml come
# from ../shared/peers/marquez (Maven Central does not serve Marquez), its 161 runtime jars from Maven Central, and
# PostgreSQL from Debian. Without ../shared the component is unavailable and the Marquez tests skip with that line.
MARQUEZ_VERSION := 0.51.1
MARQUEZ_SHARED ?= ../shared/peers/marquez
MARQUEZ_STAMP := $(INTEROP)/marquez/.installed-$(MARQUEZ_VERSION)

$(MARQUEZ_STAMP):
	mkdir -p $(INTEROP)/marquez
	$(call provisioned,marquez,test -d $(MARQUEZ_SHARED) || { echo "ERROR: no $(MARQUEZ_SHARED) (Marquez's api jar)"; false; } && \
		cp $(MARQUEZ_SHARED)/marquez-api-$(MARQUEZ_VERSION).jar $(MARQUEZ_SHARED)/pom.xml $(MARQUEZ_SHARED)/marquez.yml \
		   $(MARQUEZ_SHARED)/LICENSE $(INTEROP)/marquez/ \
		&& rm -rf $(INTEROP)/marquez/lib && $(MVN_DEPS) -f $(INTEROP)/marquez/pom.xml \
		   -DoutputDirectory=$(abspath $(INTEROP))/marquez/lib \
		&& { command -v pg_ctl >/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 \
		     || apt-get install -y -qq --no-install-recommends postgresql \
		     || { apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql; }; } \
		&& touch $@)

$(WHEELHOUSE_STAMP): pyproject.toml constraints.txt
	mkdir -p $(INTEROP)
	$(call provisioned,wheelhouse,rm -rf $(WHEELHOUSE) && mkdir -p $(WHEELHOUSE) \
		&& $(PYTHON) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"], sep="\n")' \
		   > $(WHEELHOUSE)/core-requirements.txt \
		&& $(PYTHON) -m pip wheel --quiet --disable-pip-version-check -c constraints.txt -w $(WHEELHOUSE) \
		   -r $(WHEELHOUSE)/core-requirements.txt setuptools wheel && touch $@)

provision: $(WHEELHOUSE_STAMP)
provision: $(INTEROP_WHEELS) $(ICEBERG_JAR) sqlite-jdbc chromium $(HADOOP_AWS_JAR) $(SAIL_STAMP) $(KAFKA_STAMP) $(OPENLINEAGE_SPARK_JAR) $(OPENMETADATA_STAMP) $(DATAHUB_STAMP) $(OPENLINEAGE_MIN_STAMP) flink trino \
	$(MARQUEZ_STAMP) $(ICEBERG_REST_STAMP)

run: $(RUN_STAMP)
	@echo "make run: writing the demo tables into ./warehouse and scanning them"
	$(RUN_VENV)/bin/python -m iceberg_lineage.demo

test: $(STAMP) provision
	$(PY) -m pytest -q -p no:cacheprovider

# The docs site (mkdocs.yml) into ./site, offline; tests/docs builds it with --strict too.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# One table of issue 32's rows (each a ratio against a baseline measured in the same run); about ten minutes on 2
# cores. `$(PY) benchmarks/report.py --full` runs the issue's sizes.
bench: $(STAMP)
	$(PY) benchmarks/report.py

clean:
	rm -rf $(VENV) $(RUN_VENV) warehouse .iceberg-lineage .cache
