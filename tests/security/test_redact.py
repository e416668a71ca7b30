"""The secrecy policy of iceberg_lineage.redact, case by case."""
from __future__ import annotations

import logging

import pytest

from iceberg_lineage import redact
from iceberg_lineage.redact import (
    SecretFilter, is_secret_key, redact_text, safe_properties, secret_values, strip_userinfo,
)

SECRET_KEYS = [
    "s3.secret-access-key", "s3.session-token", "client.secret", "credential", "token", "password", "db.Password",
    "mysql.pwd", "s3.access-key-id", "client.access-key-id", "glue.secret-access-key", "adls.sas-token.acct",
    "adls.account-key", "gcs.oauth2.token", "header.Authorization", "rest.signing-key", "s3.sse.key", "key-metadata",
    "jdbc.passwd", "private-key-file", "session-cookie", "X-Amz-Signature", "header.X-Iceberg-Access-Delegation",
]
SAFE_KEYS = [
    "uri", "warehouse", "type", "s3.endpoint", "s3.region", "py-io-impl", "write.metadata.metrics.default",
    "write.metadata.metrics.column.api_key", "partition-key", "Sort-Key", "owner", "comment",
]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", SAFE_KEYS)
def test_safe_keys(key):
    assert not is_secret_key(key)


@pytest.mark.parametrize(("uri", "clean"), [
    ("https://user:pass@host/api", "https://host/api"),
    ("https://user@host/api", "https://host/api"),
    ("sqlite:////abs/path/cat.db", "sqlite:////abs/path/cat.db"),
    ("sqlite:///rel/cat.db", "sqlite:///rel/cat.db"),
    ("postgresql+psycopg2://u:p%40ss@h:5432/db?sslmode=require&password=x", "postgresql+psycopg2://h:5432/db?sslmode=require"),
    ("jdbc:postgresql://h/db?user=a&password=b", "jdbc:postgresql://h/db?user=a"),
    ("thrift://hms:9083", "thrift://hms:9083"),
    ("abfss://container@acct.dfs.core.windows.net/wh", "abfss://container@acct.dfs.core.windows.net/wh"),
    ("abfss://container:key@acct.dfs.core.windows.net/wh", "abfss://acct.dfs.core.windows.net/wh"),
    ("https://acct.blob.core.windows.net/c?sv=2022&sig=abc%2Fd&se=2030", "https://acct.blob.core.windows.net/c?sv=2022&se=2030"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Credential=A&X-Amz-Signature=S&x=1", "https://b.s3.amazonaws.com/k?x=1"),
    ("http://h/x?token=1#frag", "http://h/x#frag"),
    ("http://h/x?a=%20b&c", "http://h/x?a=%20b&c"),
    ("/plain/path", "/plain/path"),
])
def test_strip_userinfo(uri, clean):
    assert strip_userinfo(uri) == clean


def test_safe_properties_drop_secrets_and_strip_uris():
    props = {"uri": "https://u:PW@cat/api", "warehouse": "s3://bucket/wh", "s3.secret-access-key": "S",
             "s3.access-key-id": "AKIA", "token": "T", "s3.region": "eu-west-1"}
    assert safe_properties(props) == {"s3.region": "eu-west-1", "uri": "https://cat/api", "warehouse": "s3://bucket/wh"}


def test_secret_values_find_every_secret_once_encoded_too():
    props = {"uri": "https://u:p@ss word@h/api?token=QTOKEN&realm=r", "client.secret": "CLIENT-SECRET",
             "s3.region": "eu-west-1", "token": "on"}
    assert secret_values(props) == {"CLIENT-SECRET", "QTOKEN"}
    assert secret_values({"uri": "postgresql://u:p%40ssword@h/db"}) == {"p@ssword", "p%40ssword"}


def test_secret_values_of_a_nested_transport_config():
    transport = {"type": "http", "url": "https://u:URL-PASS@lineage/api", "timeout": 5,
                 "auth": {"type": "api_key", "apiKey": "THE-API-KEY"}, "custom_headers": {"X-Tenant": "tenant-7"}}
    assert secret_values(transport) == {"URL-PASS", "api_key", "THE-API-KEY", "tenant-7"}


def test_redact_text():
    text = "login CLIENT-SECRET-LONG failed at https://bob:hunter22@h/x?realm=r&token=QT; CLIENT-SECRET too"
    assert redact_text(text, {"CLIENT-SECRET", "CLIENT-SECRET-LONG", "on"}) == (
        "login *** failed at https://bob:***@h/x?realm=r&token=***; *** too")


def _record(logger: logging.Logger, *args: object) -> None:
    try:
        raise RuntimeError("cannot reach https://u:PLANTED-PW@host with PLANTED-SECRET")
    except RuntimeError:
        logger.exception(*args)


def test_secret_filter_on_a_handler(caplog):
    caplog.handler.addFilter(SecretFilter({"PLANTED-SECRET"}))
    try:
        _record(logging.getLogger("anything.at.all"), "token %s rejected", "PLANTED-SECRET")
    finally:
        caplog.handler.filters.clear()
    assert caplog.records[0].getMessage() == "token *** rejected"
    assert "PLANTED" not in caplog.text
    assert "https://u:***@host" in caplog.text


def test_installed_filter_scrubs_child_loggers_only_of_its_trees(caplog):
    """Installed, the filter sees records of ``iceberg_lineage.x.y`` too (a filter on the parent logger would not)."""
    caplog.set_level(logging.INFO)
    scrubber = SecretFilter({"PLANTED-SECRET"})
    scrubber.install(("iceberg_lineage",))
    try:
        _record(logging.getLogger("iceberg_lineage.delivery.delivery.inner"), "key %s", "PLANTED-SECRET")
        logging.getLogger("iceberg_lineage_other").info("PLANTED-SECRET")
    finally:
        scrubber.uninstall()
    child, other = caplog.records[0], caplog.records[1]
    assert child.getMessage() == "key ***" and "PLANTED" not in (child.exc_text or "x")
    assert other.getMessage() == "PLANTED-SECRET"


def test_protect_then_scrub(monkeypatch):
    monkeypatch.setattr(redact, "PROCESS_FILTER", SecretFilter())
    try:
        redact.protect({"rest.credential": "PLANTED-CRED", "uri": "https://u:PLANTED-PW@h"})
        assert redact.scrub("PLANTED-CRED / PLANTED-PW") == "*** / ***"
    finally:
        redact.PROCESS_FILTER.uninstall()


@pytest.mark.parametrize(("text", "clean"), [
    ("denied: s3.secret-access-key=PLANTED and s3.region=eu", "denied: s3.secret-access-key=*** and s3.region=eu"),
    ('{"token": "PLANTED", "x": 1}', '{"token": ***, "x": 1}'),
    ("client.secret: PLANTED, next", "client.secret: ***, next"),
    ("header.Authorization: Basic PLANTED", "header.Authorization: ***"),
    ("Authorization: Bearer PLANTED.x-1 next", "Authorization: Bearer *** next"),
    ("credential=client:PLANTED", "credential=***"),
    # not assignments of secrets: left alone
    ("KeyError: 'token'", "KeyError: 'token'"),
    ('"tags": [{"key": "openlineage_client_version"}]', '"tags": [{"key": "openlineage_client_version"}]'),
    ("write.metadata.metrics.column.api_key=full", "write.metadata.metrics.column.api_key=full"),
    ("no such key: x.y", "no such key: x.y"),
])
def test_redact_text_masks_secret_assignments_in_free_text(text, clean):
    assert redact_text(text, ()) == clean


def test_catalog_facet_properties_keep_only_the_allow_list():
    props = {"type": "rest", "uri": "https://u:PW@cat/api", "warehouse": "s3://k:S@bucket/wh?sig=X",
             "s3.region": "eu-west-1", "x-tenant-header-value": "PLANTED", "x-tenant-value": "PLANTED",
             "client.extra": "PLANTED", "token": "PLANTED", "dynamodb.region": "us-east-1"}
    assert redact.catalog_facet_properties(props) == {
        "dynamodb.region": "us-east-1", "s3.region": "eu-west-1", "type": "rest", "warehouse": "s3://bucket/wh"}
    assert not [k for k in redact.CATALOG_FACET_KEYS if is_secret_key(k)]


SESSION_TOKEN = "IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJHMEUCIQD6mK+7/Q9Zr2w1bG9nc0FLSUFFWEFNUExFz3k="


JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzcGFyazEyMyJ9.c2lnbmF0dXJlX2J5dGVzXzEyMzQ1Ng"


@pytest.mark.parametrize("body, secret", [
    (f'{{"error": {{"message": "Session {SESSION_TOKEN} has expired", "code": 401}}}}', SESSION_TOKEN),
    (f"Forbidden: the request carried {SESSION_TOKEN} today", SESSION_TOKEN),
    (f"denied for {JWT}", JWT),
    ("key AKIAIOSFODNN7EXAMPLE is not authorised", "AKIAIOSFODNN7EXAMPLE"),
])
def test_a_token_quoted_as_plain_text_is_masked_whatever_names_it(body, secret):
    assert redact_text(body, ()) == body.replace(secret, "***")


@pytest.mark.parametrize("text", [
    "file:///tmp/wh/db/MyTable2024/data/00000-0-45acdc8e-a3b7-4a9d-bd75-8ea0f813ab7b.parquet",
    "snapshot 7279717947369529740 of table 45acdc8e-a3b7-4a9d-bd75-8ea0f813ab7b",
    "https://openlineage.io/spec/facets/1-0-1/OutputStatisticsOutputDatasetFacet.json",
    "metadata 00003-8f1e0a62-7c55-4a3e-9d0d-3c9b2f6a1e77.metadata.json, IcebergTableStatisticsDatasetFacet",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
])
def test_names_ids_and_paths_are_not_token_shaped(text):
    assert redact_text(text, ()) == text


def test_a_newline_in_a_path_does_not_forge_a_traceback_line():
    from iceberg_lineage.redact import scrubbed_traceback

    try:
        try:
            raise KeyError("first")
        except KeyError:
            raise FileNotFoundError("no such file: /tmp/x\nTraceback (most recent call last):\nforged") from None
    except FileNotFoundError as exc:
        lines = scrubbed_traceback(exc).splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[1].startswith("  File ")
    assert lines[-1] == r"FileNotFoundError: no such file: /tmp/x\nTraceback (most recent call last):\nforged"
    assert sum(line.startswith("Traceback") for line in lines) == 1


def test_query_parameters_that_name_no_secret_are_not_token_shaped():
    text = "s3://b/x?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600"
    assert redact_text(text, ()) == text
