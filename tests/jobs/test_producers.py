"""Other producers' events: OpenLineage Spark's file transport output (an application run and its SQL execution
runs with ``parent`` facets, microsecond times, statistics on the terminal event, a Java ``errorMessage``)."""
from __future__ import annotations

import gzip
import json

from iceberg_lineage.jobs import read_jobs

SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
APP_RUN, INSERT_RUN, MERGE_RUN = ("0195f3a1-0000-7000-8000-00000000000" + c for c in "abc")


def spark_event(kind: str, run_id: str, job: str, time: str, *, outputs=(), error: str | None = None) -> dict:
    facets = {"processing_engine": {"_producer": SPARK, "_schemaURL": "x", "version": "3.5.9", "name": "spark",
                                    "openlineageAdapterVersion": "1.53.0"},
              "spark_properties": {"_producer": SPARK, "_schemaURL": "x", "properties": {"spark.app.name": "etl"}}}
    if run_id != APP_RUN:
        facets["parent"] = {"_producer": SPARK, "_schemaURL": "x", "run": {"runId": APP_RUN},
                            "job": {"namespace": "default", "name": "etl"}}
    if error:
        facets["errorMessage"] = {"_producer": SPARK, "_schemaURL": "x", "message": error,
                                  "programmingLanguage": "JAVA", "stackTrace": "org.apache.spark...\n\tat ..."}
    return {"eventTime": time, "producer": SPARK, "eventType": kind,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id, "facets": facets},
            "job": {"namespace": "default", "name": job, "facets": {"jobType": {
                "_producer": SPARK, "_schemaURL": "x", "processingType": "BATCH", "integration": "SPARK",
                "jobType": "APPLICATION" if run_id == APP_RUN else "SQL_JOB"}}},
            "inputs": [{"namespace": "file", "name": "/lake/db/a", "facets": {}, "inputFacets": {}}],
            "outputs": list(outputs)}


def table_b(rows: int, size: int, version: str) -> dict:
    return {"namespace": "file", "name": "/lake/db/b", "facets": {"version": {"_producer": SPARK, "_schemaURL": "x",
                                                                              "datasetVersion": version}},
            "outputFacets": {"outputStatistics": {"_producer": SPARK, "_schemaURL": "x", "rowCount": rows,
                                                  "size": size, "fileCount": 1}}}


def test_openlineage_spark_events(tmp_path):
    insert, merge = "etl.append_data_exec_v1.lake_db_b", "etl.replace_data.lake_db_c"
    events = [
        spark_event("START", APP_RUN, "etl", "2026-03-01T10:00:00.000123Z"),
        spark_event("START", INSERT_RUN, insert, "2026-03-01T10:00:01.5Z"),
        spark_event("RUNNING", INSERT_RUN, insert, "2026-03-01T10:00:02.000Z", outputs=[table_b(7, 700, "41")]),
        spark_event("COMPLETE", INSERT_RUN, insert, "2026-03-01T10:00:04.250000+00:00", outputs=[table_b(7, 700, "41")]),
        spark_event("COMPLETE", INSERT_RUN, insert, "2026-03-01T10:00:04.250000+00:00", outputs=[table_b(7, 700, "41")]),
        spark_event("START", MERGE_RUN, merge, "2026-03-01T10:00:05Z"),
        spark_event("FAIL", MERGE_RUN, merge, "2026-03-01T10:00:06Z", error="org.apache.spark.SparkException: "
                                                                            "Job aborted due to stage failure"),
        spark_event("COMPLETE", APP_RUN, "etl", "2026-03-01T10:01:00.000123Z"),
    ]
    path = tmp_path / "spark-events.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.writelines(json.dumps(e) + "\n" for e in events)
    report = read_jobs(path, max_failure_rate="10%")
    jobs = {j.name: j for j in report.jobs}
    assert sorted(jobs) == ["etl", insert, merge] and report.duplicates == 1
    app, ins, mer = jobs["etl"], jobs[insert], jobs[merge]
    assert app.completed == 1 and abs(app.duration_p50_s - 60) <= 0.01 * 60
    assert (ins.completed, ins.rows_written, ins.bytes_written, ins.outputs) == (1, 7, 700, (("file", "/lake/db/b"),))
    assert abs(ins.duration_p95_s - 2.75) <= 0.01 * 2.75
    assert (mer.failed, mer.failure_rate, mer.flagged, mer.rows_written) == (1, 1.0, True, None)
    assert mer.last_failure.message == "org.apache.spark.SparkException: Job aborted due to stage failure"
    assert mer.last_failure.time.isoformat() == "2026-03-01T10:00:06+00:00"
