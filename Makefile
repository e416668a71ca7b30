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
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,dask,notebook,proxy]'
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

$(OPENLINEAGE_SPARK_JAR):
	mkdir -p $(INTEROP)/openlineage-spark
	$(call provisioned,openlineage-spark,$(MVN):copy \
		-Dartifact=io.openlineage:openlineage-spark_2.12:$(OPENLINEAGE_SPARK_VERSION) \
		-DoutputDirectory=$(abspath $(INTEROP))/openlineage-spark && rm -rf $(INTEROP)/m2/io/openlineage)

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

provision: $(INTEROP_WHEELS) $(ICEBERG_JAR) sqlite-jdbc $(HADOOP_AWS_JAR) $(SAIL_STAMP) $(KAFKA_STAMP) $(OPENLINEAGE_SPARK_JAR) $(OPENMETADATA_STAMP) $(DATAHUB_STAMP) \
	$(MARQUEZ_STAMP)

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
