"""Run by the interpreter of DataHub's Airflow plugin (see the Makefile's datahub target): reads OpenLineage events
as JSON Lines on stdin and prints, per event, the DataHub URN the plugin's adapter (translate_ol_to_datahub_urn)
gives each dataset and each of its symlinks, as JSON Lines. Imports nothing of iceberg_lineage."""
import json
import sys
from types import SimpleNamespace

from datahub_airflow_plugin._datahub_ol_adapter import translate_ol_to_datahub_urn


def urns(dataset):
    identifiers = ((dataset.get("facets") or {}).get("symlinks") or {}).get("identifiers") or []
    return {"urn": translate_ol_to_datahub_urn(SimpleNamespace(namespace=dataset["namespace"], name=dataset["name"])),
            "symlinks": {i["type"]: translate_ol_to_datahub_urn(SimpleNamespace(namespace=i["namespace"],
                                                                                 name=i["name"]))
                         for i in identifiers}}


for line in sys.stdin:
    event = json.loads(line)
    print(json.dumps({"inputs": [urns(d) for d in event.get("inputs") or []],
                      "outputs": [urns(d) for d in event.get("outputs") or []]}))
