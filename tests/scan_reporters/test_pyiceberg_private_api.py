"""Fails loudly when the PyIceberg internals scan_reporters relies on move (pinned: pyiceberg>=0.12,<0.13)."""

from __future__ import annotations

import inspect

import pyiceberg


def test_pyiceberg_version_is_in_the_pinned_range():
    major, minor = (int(p) for p in pyiceberg.__version__.split(".")[:2])
    assert (major, minor) == (0, 12), pyiceberg.__version__


def test_private_planning_names_still_exist():
    from pyiceberg.table import DataScan, ManifestGroupPlanner, Transaction, _min_sequence_number

    for name in (
        "_build_manifest_evaluator",
        "_build_partition_evaluator",
        "_build_metrics_evaluator",
        "_build_residual_evaluator",
        "_check_sequence_number",
        "plan_manifest_entries",
        "plan_files",
    ):
        assert callable(getattr(ManifestGroupPlanner, name)), name
    # plan_files must still consume plan_manifest_entries (our counting override hooks in there)
    assert "self.plan_manifest_entries(" in inspect.getsource(ManifestGroupPlanner.plan_files)
    assert "_InclusiveMetricsEvaluator" in inspect.getsource(ManifestGroupPlanner._build_metrics_evaluator)
    assert callable(_min_sequence_number)
    for name in ("_should_use_server_side_planning", "plan_files", "update", "snapshot", "projection"):
        assert callable(getattr(DataScan, name)), name
    assert "self._table._do_commit(" in inspect.getsource(Transaction.commit_transaction)


def test_private_manifest_names_still_exist():
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator
    from pyiceberg.manifest import DATA_FILE_TYPE, MANIFEST_ENTRY_SCHEMAS, _inherit_from_manifest
    from pyiceberg.typedef import KeyDefaultDict
    from pyiceberg.utils.concurrent import ExecutorFactory

    assert [f.name for f in DATA_FILE_TYPE[3].fields][-4:] == [
        "first_row_id",
        "referenced_data_file",
        "content_offset",
        "content_size_in_bytes",
    ]
    assert [f.name for f in DATA_FILE_TYPE[3].fields][:16] == [f.name for f in DATA_FILE_TYPE[2].fields]
    assert MANIFEST_ENTRY_SCHEMAS[3].find_field("data_file").field_type == DATA_FILE_TYPE[3]
    assert all(callable(x) for x in (AvroFile, _InclusiveMetricsEvaluator, _inherit_from_manifest, KeyDefaultDict))
    assert callable(ExecutorFactory.get_or_create)


def test_catalog_constructor_hooks_are_free():
    """install() wraps every Catalog class's own ``__init__`` and sets ``Catalog.__init_subclass__``, which
    PyIceberg leaves to ``object`` (uninstall deletes it again)."""
    from pyiceberg.catalog import Catalog

    assert "__init_subclass__" not in Catalog.__dict__ and "__init__" in Catalog.__dict__


def test_private_catalog_names_still_exist():
    from pyiceberg.catalog import Catalog
    from pyiceberg.catalog.rest import RestCatalog

    assert callable(RestCatalog.url) and callable(RestCatalog._split_identifier_for_path)
    assert "_session" in RestCatalog.__annotations__
    for name in ("commit_table", "create_table", "register_table", "drop_table", "purge_table", "rename_table"):
        assert callable(getattr(Catalog, name)), name
