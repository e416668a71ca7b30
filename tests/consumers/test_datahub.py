"""DataHub: its Java converter (io.acryl:openlineage-converter) is not served by Maven Central here, so the URNs are
checked with the Python adapter of acryl-datahub-airflow-plugin 1.7.0.17 (translate_ol_to_datahub_urn), which maps
the namespace scheme to a platform and nothing else: the DatasetProfile mapping (getDatasetProfile, which reads
inputFacets.dataQualityMetrics) went untested."""
from __future__ import annotations

import pytest

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.shaping import shaped as shape
from tests.consumers.tables import snapshot_event
from tests.support.consumers import probe
from tests.support.engines import require

PROFILE = Settings().updated({"consumer.profile": "datahub"})


@pytest.fixture(scope="module")
def urns():
    require("datahub")
    built = [snapshot_event(3, PROFILE),
             snapshot_event(3, Settings().updated({"consumer.profile": "datahub", "naming.primary": "table"})),
             snapshot_event(3, PROFILE, location="file:/data/warehouse/mart/orders")]
    mapped = probe("datahub", [e for b in built for e in shape(b, PROFILE).events])
    assert len(mapped) == 9  # each snapshot run, then its checks run's START and COMPLETE (the datahub profile)
    for run, start, check in zip(mapped[::3], mapped[1::3], mapped[2::3]):
        assert check["inputs"][0]["urn"] == start["inputs"][0]["urn"] == run["outputs"][0]["urn"]  # the table
    return [event["outputs"][0] for event in mapped[::3]]


def test_location_naming_gives_the_storage_platform_and_the_bucket(urns):
    assert urns[0]["urn"] == "urn:li:dataset:(urn:li:dataPlatform:s3,lake/warehouse/mart/orders,PROD)"
    assert urns[2]["urn"] == "urn:li:dataset:(urn:li:dataPlatform:file,/data/warehouse/mart/orders,PROD)"


def test_the_python_adapter_takes_a_rest_catalogs_uri_scheme_as_the_platform(urns):
    """The pitfall of naming.primary=table for DataHub: the primary identity's namespace is the catalog URI, and
    its scheme (http) becomes the platform; the Java converter maps a non-Glue TABLE symlink to platform hive."""
    assert urns[1]["urn"] == "urn:li:dataset:(urn:li:dataPlatform:http,mart.orders,PROD)"
    assert urns[0]["symlinks"]["TABLE"] == "urn:li:dataset:(urn:li:dataPlatform:http,mart.orders,PROD)"
