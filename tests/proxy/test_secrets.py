"""Planted secrets never leave the proxy: the engine's OAuth client secret and tokens (its ``Authorization``
headers), a custom header, the proxy's own secret properties, and storage credentials the catalog vends (``config``
and ``storage-credentials`` of LoadTable answers, the credentials endpoint) appear in no event, log line (under
``--debug``), spool, state file or error answer."""
from __future__ import annotations

import pyarrow as pa
from pyiceberg.catalog.rest import RestCatalog

from iceberg_lineage.delivery.spool import Spool
from tests.support.lineage_server import Answer, LineageServer, free_port
from tests.support.proxy import Recorder, get, own_properties, start_proxy, wait_until
from tests.support.security import files_under, leaks
from tests.support.seaweed import SECRET_KEY

VENDED = {"gcs.oauth2.token": "PLANTED-VENDED-TOKEN-1", "adls.sas-token.account": "PLANTED-VENDED-SAS-2"}


def test_planted_secrets_reach_no_output(seaweed, tmp_path):
    recorder = Recorder(seaweed.uri, vend=VENDED).start()
    # events are refused for good: they wait in the spool, whose files are searched too
    lineage = LineageServer(script=lambda n, body: Answer(400))
    proxy = start_proxy(recorder.url, tmp_path / "proxy", lineage.url, "--debug", *own_properties(seaweed),
                        "--io-property", "client.secret=PLANTED-OWN-SECRET-3")
    answers: list[bytes] = []
    try:
        catalog = RestCatalog("planted", **{**seaweed.catalog_properties(proxy.uri),
                                            "header.X-Api-Key": "PLANTED-HEADER-4"})
        catalog.create_namespace_if_not_exists("planted")
        table = catalog.create_table("planted.t", pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": [1]}))
        table.append(pa.table({"id": [2]}))
        assert catalog.load_table("planted.t").io.properties["gcs.oauth2.token"] == VENDED["gcs.oauth2.token"]
        credentials = catalog._session.get(proxy.uri + "/v1/warehouse/namespaces/planted/tables/t/credentials")
        assert credentials.status_code == 200 and b"PLANTED-VENDED" in credentials.content  # passed through
        answers.append(catalog._session.get(proxy.uri + "/v1/warehouse/namespaces/planted/tables/nope").content)
        catalog.drop_table("planted.t")
        # CREATE, two appends, DROP (START and COMPLETE each): the first refused, the rest spooled behind it
        # (nothing overtakes)
        assert wait_until(lambda: Spool.exists(proxy.spool_path) and Spool(proxy.spool_path).count() == 8)
        lineage.wait_idle()
    finally:
        proxy.stop()
        lineage.stop()
    down = start_proxy(f"http://127.0.0.1:{free_port()}", tmp_path / "down", None, "--debug",
                       *own_properties(seaweed))
    try:
        answers.append(get(down.uri + "/v1/config", {"Authorization": next(iter(recorder.authorizations))})[1])
    finally:
        down.stop()
    tokens = {value.split()[-1] for value in recorder.authorizations}
    assert tokens and all(len(token) > 20 for token in tokens)
    secrets = ("PLANTED-", SECRET_KEY, *tokens)
    outputs = {"event": b"\n".join(r.body for r in lineage.requests), "proxy log": proxy.output(),
               "down log": down.output(), "answers": b"\n".join(answers),
               **{str(path): data for path, data in files_under(tmp_path / "proxy", tmp_path / "down").items()
                  if not path.name.endswith(".log")}}
    assert any(path.endswith("spool.db") for path in outputs)
    found = {where: hits for where, text in outputs.items() if (hits := leaks(text, secrets))}
    assert not found, f"planted secrets leaked: {found}"
