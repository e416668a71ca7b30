"""Snapshot summary properties this project writes, read by every entry point (the hook writes them; the scanner
and the REST bridge read them)."""

#: Snapshot summary property naming the run that committed the snapshot.
RUN_ID_PROPERTY = "iceberg-lineage.run-id"
