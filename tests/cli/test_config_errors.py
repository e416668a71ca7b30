"""No silent misconfiguration (issue 28): every broken configuration, for every command that reads it, is one line on
stderr naming the file (with line and column for a YAML syntax error) or the variable and the key, exit 2, and the
bad value is never shown (it may be a secret). No catalog configured is such an error too, not an empty scan."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner
from pyiceberg.catalog.sql import SqlCatalog

from iceberg_lineage.cli import main
from tests.support.scan import catalog_env, write_table

SECRET = "s3cr3t-VALUE-28"
#: Each command that reads a table through a catalog (scan walks every configured catalog).
TABLE_COMMANDS = {
    "scan": ["scan", "--no-progress", "--format", "json"],
    "stats": ["stats", "--catalog", "mycat", "--table", "db.t", "--format", "json"],
    "events": ["events", "--catalog", "mycat", "--table", "db.t"],
    "check": ["check", "--catalog", "mycat", "--table", "db.t", "--format", "json"],
}
#: Each command that sends events (or, for config, shows where they would go).
SENDING_COMMANDS = {
    "scan": ["scan", "--no-progress", "--format", "json"],
    "events --emit": ["events", "--catalog", "mycat", "--table", "db.t", "--emit"],
    "check --emit": ["check", "--catalog", "mycat", "--table", "db.t", "--emit", "--format", "json"],
    "config": ["config", "--format", "json"],
}
ALL_COMMANDS = {**TABLE_COMMANDS, "config": ["config", "--format", "json"]}

Setup = Callable[[Path, pytest.MonkeyPatch], None]


def home(tmp: Path) -> Path:
    (tmp / "home").mkdir(exist_ok=True)
    return tmp / "home"


def pyiceberg_yaml(text: str) -> Setup:
    return lambda tmp, _mp: (home(tmp) / ".pyiceberg.yaml").write_text(text)


def env(**variables: str) -> Setup:
    def setup(_tmp: Path, mp: pytest.MonkeyPatch) -> None:
        for name, value in variables.items():
            mp.setenv(name, value)

    return setup


def file(name: str, text: str) -> Setup:
    return lambda tmp, _mp: (tmp / name).write_text(text)


def exact(text: str) -> str:
    return re.escape(text)


def looked_for(tmp: Path) -> str:
    return (f"looked for {tmp}/home/.pyiceberg.yaml, {tmp}/.pyiceberg.yaml and PYICEBERG_CATALOG__<NAME>__* "
            "environment variables")


@pytest.fixture
def lake(tmp_path, monkeypatch):
    """A real SQLite catalog ``mycat`` with one table ``db.t``, configured by ``PYICEBERG_CATALOG__MYCAT__*``."""
    (tmp_path / "lake").mkdir()
    catalog = SqlCatalog("mycat", uri=f"sqlite:///{tmp_path}/lake/c.db", warehouse=f"file://{tmp_path}/lake")
    write_table(catalog, "db.t", commits=1)
    for name, value in catalog_env(catalog).items():
        monkeypatch.setenv(name, value)
    return catalog


def one_error(result) -> str:
    """The one line a broken configuration gives, after checking the exit code and that the secret stayed out."""
    assert result.exit_code == 2, result.output
    assert SECRET not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def invoke(args: list[str]):
    return CliRunner().invoke(main, args)


#: PyIceberg's configuration: (setup, the line after "iceberg-lineage: error: ", as a regex of tmp_path).
PYICEBERG_ROWS: dict[str, tuple[Setup, Callable[[Path], str]]] = {
    "yaml-syntax": (pyiceberg_yaml(f"catalog:\n  mycat:\n    uri: sqlite:///x.db\n    token: {SECRET}\n   bad: x\n"),
                    lambda t: exact(f"file {t}/home/.pyiceberg.yaml: not valid YAML at line 5, column 4")),
    "strictyaml-flow-style": (pyiceberg_yaml(f"catalog:\n  mycat: {{token: {SECRET}}}\n"),
                              lambda t: exact(f"file {t}/home/.pyiceberg.yaml: not valid YAML for PyIceberg at line 2, "
                                              "column 11 (FlowMappingDisallowed)")),
    "path-is-a-directory": (lambda tmp, _mp: (home(tmp) / ".pyiceberg.yaml").mkdir(),
                            lambda t: exact(f"file {t}/home/.pyiceberg.yaml: is a directory, not a PyIceberg "
                                            "configuration file")),
    "catalog-not-a-mapping": (pyiceberg_yaml(f"catalog: {SECRET}\n"),
                              lambda t: exact(f"file {t}/home/.pyiceberg.yaml: catalog must be a mapping of catalogs "
                                              "by name")),
    "catalog-type-unknown": (pyiceberg_yaml(f"catalog:\n  mycat:\n    type: {SECRET}\n"),
                             lambda t: exact(f"file {t}/home/.pyiceberg.yaml: catalog.mycat.type: unknown catalog "
                                             "type (PyIceberg knows ") + r".*\bsql\b.*\)"),
    "env-catalog-type-unknown": (env(PYICEBERG_CATALOG__MYCAT__TYPE=SECRET),
                                 lambda t: exact("PYICEBERG_CATALOG__MYCAT__TYPE: unknown catalog type (PyIceberg "
                                                 "knows ") + r".*\bsql\b.*\)"),
    "env-catalog-uri-scheme": (env(PYICEBERG_CATALOG__MYCAT__URI=f"{SECRET}://x"),
                               lambda t: exact("PYICEBERG_CATALOG__MYCAT__URI: PyIceberg cannot infer the catalog's "
                                               "type from this URI's scheme (it knows http, thrift, sqlite, "
                                               "postgresql): set type")),
    "env-catalog-uri-missing": (env(PYICEBERG_CATALOG__MYCAT__WAREHOUSE=SECRET),
                                lambda t: exact("PYICEBERG_CATALOG__MYCAT__URI: missing (PyIceberg infers the "
                                                "catalog's type from it; or set type)")),
    "env-catalog-is-a-value": (env(PYICEBERG_CATALOG__MYCAT=SECRET),
                               lambda t: exact("PYICEBERG_CATALOG__MYCAT: a catalog is a mapping: set "
                                               "PYICEBERG_CATALOG__MYCAT__<KEY> instead")),
    "env-catalogs-is-a-value": (env(PYICEBERG_CATALOG=SECRET),
                                lambda t: exact("PYICEBERG_CATALOG: must not be set (catalogs are set by "
                                                "PYICEBERG_CATALOG__<NAME>__<KEY>)")),
}


@pytest.mark.parametrize("command", TABLE_COMMANDS)
@pytest.mark.parametrize("row", PYICEBERG_ROWS)
def test_pyiceberg_configuration_errors(tmp_path, monkeypatch, row, command):
    setup, expected = PYICEBERG_ROWS[row]
    setup(tmp_path, monkeypatch)
    line = one_error(invoke(TABLE_COMMANDS[command]))
    assert re.fullmatch("iceberg-lineage: error: " + expected(tmp_path), line), line


@pytest.mark.parametrize("command", TABLE_COMMANDS)
def test_a_variable_that_cannot_merge_is_named(tmp_path, monkeypatch, command):
    (home(tmp_path) / ".pyiceberg.yaml").write_text(f"catalog:\n  mycat: {SECRET}\n")
    monkeypatch.setenv("PYICEBERG_CATALOG__MYCAT__URI", "y")  # a key under mycat, which the file sets to a value
    line = one_error(invoke(TABLE_COMMANDS[command]))
    assert line == (f"iceberg-lineage: error: PYICEBERG_CATALOG__MYCAT__URI: sets a key under catalog.mycat, "
                    f"which another PYICEBERG_* variable or {tmp_path}/home/.pyiceberg.yaml sets to a single value")


OPENLINEAGE_ROWS: dict[str, tuple[Setup, Callable[[Path], str]]] = {
    "file-bad-type": (file("openlineage.yml", f"transport:\n  type: htp\n  url: http://x/{SECRET}\n"),
                      lambda t: exact(f"file {t}/openlineage.yml: transport.type: unknown transport type "
                                      "(openlineage-python knows ") + r".*\bhttp\b.*\bkafka\b.*, or a class path\)"),
    "file-missing-url": (file("openlineage.yml", f"transport:\n  type: http\n  auth:\n    type: api_key\n"
                                                 f"    apiKey: {SECRET}\n"),
                         lambda t: exact(f"file {t}/openlineage.yml: transport.url: missing (the http transport "
                                         "needs it)")),
    "file-yaml-syntax": (file("openlineage.yml", f"transport:\n  type: http\n  url: {SECRET}: x\n"),
                         lambda t: exact(f"file {t}/openlineage.yml: not valid YAML at line 3, column 23")),
    "file-transport-not-a-mapping": (file("openlineage.yml", f"transport: {SECRET}\n"),
                                     lambda t: exact(f"file {t}/openlineage.yml: transport must be a mapping "
                                                     "(type, url...)")),
    "env-bad-type": (env(OPENLINEAGE__TRANSPORT__TYPE="htp", OPENLINEAGE__TRANSPORT__URL=SECRET),
                     lambda t: exact("OPENLINEAGE__TRANSPORT__TYPE: unknown transport type (openlineage-python "
                                     "knows ") + ".*"),
    "env-missing-url": (env(OPENLINEAGE__TRANSPORT__TYPE="http", OPENLINEAGE__TRANSPORT__AUTH__APIKEY=SECRET),
                        lambda t: exact("OPENLINEAGE__TRANSPORT__URL: missing (the http transport needs it)")),
}


@pytest.mark.parametrize("command", SENDING_COMMANDS)
@pytest.mark.parametrize("row", OPENLINEAGE_ROWS)
def test_openlineage_configuration_errors(lake, tmp_path, monkeypatch, row, command):
    setup, expected = OPENLINEAGE_ROWS[row]
    setup(tmp_path, monkeypatch)
    line = one_error(invoke(SENDING_COMMANDS[command]))
    assert re.fullmatch("iceberg-lineage: error: " + expected(tmp_path), line), line


ICEBERG_LINEAGE_ROWS: dict[str, tuple[Setup, Callable[[Path], str]]] = {
    "yaml-syntax": (file("iceberg-lineage.yml", f"spool:\n  max_bytes: 1\n   bad: {SECRET}\n"),
                    lambda t: exact(f"file {t}/iceberg-lineage.yml: not valid YAML at line 3, column 7")),
    "unknown-key": (file("iceberg-lineage.yml", f"spool:\n  max_byte: {SECRET}\n"),
                    lambda t: exact(f"file {t}/iceberg-lineage.yml: unknown configuration keys: spool.max_byte")),
    "bad-value": (file("iceberg-lineage.yml", f"spool:\n  max_bytes: {SECRET}\n"),
                  lambda t: exact(f"file {t}/iceberg-lineage.yml: spool.max_bytes must be an integer or null, "
                                  "above 0")),
    "env-bad-value": (env(ICEBERG_LINEAGE__SPOOL__MAX_BYTES=SECRET),
                      lambda t: exact("ICEBERG_LINEAGE__SPOOL__MAX_BYTES: spool.max_bytes must be an integer or "
                                      "null, above 0")),
    "env-unknown-key": (env(ICEBERG_LINEAGE__SPOOL__MAX_BYTE=SECRET),
                        lambda t: exact("ICEBERG_LINEAGE__SPOOL__MAX_BYTE: unknown configuration key "
                                        "spool.max_byte")),
    "env-missing-file": (env(ICEBERG_LINEAGE_CONFIG="/nonexistent/iceberg-lineage.yml"),
                         lambda t: exact("file /nonexistent/iceberg-lineage.yml: ICEBERG_LINEAGE_CONFIG points at a "
                                         "missing file")),
}


@pytest.mark.parametrize("command", ALL_COMMANDS)
@pytest.mark.parametrize("row", ICEBERG_LINEAGE_ROWS)
def test_iceberg_lineage_configuration_errors(lake, tmp_path, monkeypatch, row, command):
    setup, expected = ICEBERG_LINEAGE_ROWS[row]
    setup(tmp_path, monkeypatch)
    line = one_error(invoke(ALL_COMMANDS[command]))
    assert re.fullmatch("iceberg-lineage: error: " + expected(tmp_path), line), line


# Finding 1: without a catalog configured, scan made ./warehouse/catalog.db and reported 0 tables, exit 0.

@pytest.mark.parametrize("broken_home", [False, True], ids=["no-pyiceberg-yaml", "pyiceberg-yaml-is-a-directory"])
def test_scan_without_a_catalog_creates_nothing_and_exits_2(tmp_path, broken_home):
    if broken_home:
        (home(tmp_path) / ".pyiceberg.yaml").mkdir()
    result = invoke(["scan", "--no-progress", "--format", "json"])
    assert result.exit_code == 2, result.output
    expected = (f"file {tmp_path}/home/.pyiceberg.yaml: is a directory, not a PyIceberg configuration file"
                if broken_home else
                f"no PyIceberg catalog is configured: {looked_for(tmp_path)}; `--catalog default` asks for the "
                "embedded SQLite catalog in ./warehouse")
    assert result.stderr.splitlines() == [f"iceberg-lineage: error: {expected}"]
    assert not (tmp_path / "warehouse").exists() and not (tmp_path / ".iceberg-lineage").exists()


def test_the_embedded_default_only_by_name(tmp_path):
    result = invoke(["scan", "--catalog", "default", "--no-progress", "--format", "json", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "warehouse" / "catalog.db").is_file()


# Finding 3: stats, events and check said "URI missing, please provide using --uri" for an unknown catalog.

UNKNOWN_CATALOG = {
    "scan": ["scan", "--catalog", "nope", "--no-progress"],
    "stats": ["stats", "--catalog", "nope", "--table", "db.t"],
    "events": ["events", "--catalog", "nope", "--table", "db.t"],
    "check": ["check", "--catalog", "nope", "--table", "db.t"],
    "check-catalog": ["check", "--catalog", "nope"],
}


@pytest.mark.parametrize("command", UNKNOWN_CATALOG)
def test_an_unknown_catalog_is_named_the_same_way_by_every_command(lake, command):
    result = invoke(UNKNOWN_CATALOG[command])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == ["iceberg-lineage: error: no PyIceberg catalog named nope; configured: mycat"]


@pytest.mark.parametrize("command", UNKNOWN_CATALOG)
def test_an_unknown_catalog_when_none_is_configured(tmp_path, command):
    result = invoke(UNKNOWN_CATALOG[command])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"iceberg-lineage: error: no PyIceberg catalog named nope; none is configured ({looked_for(tmp_path)})"]
