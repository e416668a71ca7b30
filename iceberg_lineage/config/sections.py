"""The tool's settings, one frozen dataclass per section of ``iceberg-lineage.yml``: each field is declared once,
with its default, its reference line and its bounds (:mod:`~iceberg_lineage.config.declare` derives the rest)."""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

import platformdirs

from iceberg_lineage.config.declare import (
    NON_NEGATIVE, POSITIVE, Range, Section, build, parse_setting, section, setting,
)
from iceberg_lineage.errors import ConfigError

ColumnMode = Literal["none", "counts", "bounds"]
ProfileName = Literal["generic", "marquez", "datahub", "openmetadata", "datazone", "dataplex", "atlan"]
Depth = Literal["summary", "manifest_list", "entries"]
#: ``consumer.profile`` values (declared in :mod:`iceberg_lineage.lineage.profiles`).
PROFILE_NAMES: tuple[str, ...] = ProfileName.__args__  # type: ignore[attr-defined]
#: Rejections for good (HTTP 4xx other than 408/429) after which a spooled event moves to the quarantine.
DEFAULT_MAX_REJECTIONS = 5
#: Seconds one HTTP request to the lineage endpoint may take in all (``delivery.request_deadline_s``).
DEFAULT_REQUEST_DEADLINE_S = 10.0
#: How the defaults of ``state.path`` and ``spool.path`` name the per-user state folder: the reference stays the same
#: on every machine, and :func:`in_user_state` resolves it when the settings are built.
USER_STATE_DIR = "<user state dir>"
#: The embedded default file transport's JSON Lines (delivery.client), beside the state file; ``iceberg-lineage jobs``
#: reads it by default.
EVENTS_FILE_NAME = "events.jsonl"
#: The largest event sent: common backends (Marquez, Kafka defaults) refuse bigger ones.
DEFAULT_EVENTS_MAX_BYTES = 1_000_000
AT_LEAST_ONE = Range(ge=1)


def user_state_dir() -> Path:
    """The platform's per-user state folder of the tool (``$XDG_STATE_HOME/iceberg-lineage``, by default
    ``~/.local/state/iceberg-lineage`` on Linux): one place whatever the current directory, read at each call so that
    ``XDG_STATE_HOME`` set later still counts."""
    return platformdirs.user_state_path("iceberg-lineage")


def in_user_state(path: str) -> str:
    """A path setting with a leading ``<user state dir>`` replaced by :func:`user_state_dir`."""
    if path == USER_STATE_DIR or path.startswith(USER_STATE_DIR + "/"):
        return str(user_state_dir()) + path[len(USER_STATE_DIR):]
    return path


class _InUserState(Section):
    """A section whose ``path`` may start with ``<user state dir>`` (its default does)."""

    path: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", in_user_state(self.path))
        super().__post_init__()


@dataclass(frozen=True)
class NamingSection(Section):
    primary: Literal["location", "table"] = setting(
        "location", "`location`: datasets are named by physical location, with the catalog name as a `TABLE` symlink "
        "(as OpenLineage Spark does). `table`: the catalog name is primary, the location a `LOCATION` symlink (for "
        "DataHub and OpenMetadata users).")
    rest_uri: str | None = setting(
        None, "The URI that names REST catalogs' tables in the `TABLE` symlink instead of the catalog's `uri`: set it "
        "to the REST bridge's `--public-uri` when the scanner reads the upstream catalog directly (see \"REST "
        "bridge\").", normalize=lambda uri: uri.rstrip("/") or None)


@dataclass(frozen=True)
class JobSection(Section):
    namespace: str = setting("iceberg-lineage", "Namespace of every job.")


@dataclass(frozen=True)
class ColumnSelection(Section):
    """Which columns get statistics: the ``column_stats`` policy (mode, include/exclude globs, a column cap).

    Column bounds can be personal data, so the policy is applied before anything is computed or emitted."""

    mode: ColumnMode = setting("bounds", "`none`, `counts` (value/null/NaN counts) or `bounds` (counts plus min/max).")
    include: tuple[str, ...] = setting((), "Globs on dotted column names (`customer.*`) that get statistics.")
    exclude: tuple[str, ...] = setting(
        (), "Globs of columns without statistics; exclude wins. Excluded columns still appear in the `schema` facet, "
        "never their statistics.")
    max_columns: int = setting(200, "Columns with statistics per event; the rest are listed in `columnsOmitted`.",
                               check=NON_NEGATIVE)

    def wants(self, name: str) -> bool:
        """Whether a dotted column name passes the include/exclude globs (exclude wins)."""
        if self.mode == "none":
            return False
        if self.include and not any(fnmatch.fnmatchcase(name, g) for g in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, g) for g in self.exclude)

    def select(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Split names (in schema order) into (kept, omitted); omitted are cut by the globs or the cap."""
        kept: list[str] = []
        omitted: list[str] = []
        if self.mode == "none":
            return kept, omitted
        for name in names:
            if self.wants(name) and len(kept) < self.max_columns:
                kept.append(name)
            else:
                omitted.append(name)
        return kept, omitted

    @property
    def with_bounds(self) -> bool:
        return self.mode == "bounds"


ALL_COLUMNS = ColumnSelection()


@dataclass(frozen=True)
class StateSection(_InUserState):
    path: str = setting(f"{USER_STATE_DIR}/state.db",
                        "The scanner's watermark store, the destination each table's events went to, and the delivery "
                        "ledger the hook writes: per user, so hook and scanner share it whatever the current directory "
                        "(see docs/state.md). The default events file, when no OpenLineage transport is configured, "
                        f"is `{EVENTS_FILE_NAME}` beside it.")

    @property
    def events_path(self) -> Path:
        """The embedded default file transport's JSON Lines: beside the state file."""
        return Path(self.path).parent / EVENTS_FILE_NAME


@dataclass(frozen=True)
class SpoolSection(_InUserState):
    path: str = setting(f"{USER_STATE_DIR}/spool", "Where undeliverable events wait for `replay` (per user, see "
                        "docs/state.md).")
    max_bytes: int | None = setting(None, "Cap on the spool; unset means the disk is the limit.", check=POSITIVE)
    max_rejections: int = setting(
        DEFAULT_MAX_REJECTIONS, "Rejections for good (HTTP 4xx other than 408 and 429) after which a spooled event "
        "moves to the quarantine; the rejection by the first send counts.", check=AT_LEAST_ONE)


@dataclass(frozen=True)
class HookSection(Section):
    tag_snapshots: bool = setting(
        True, "The hook tags the snapshots it commits with their ownership (`iceberg-lineage.run-id` and more), so "
        "the scanner rebuilds the hook's run instead of reporting a second one.")
    ledger: bool = setting(
        True, "The hook records each snapshot whose events were delivered or spooled in the ledger at `state.path`; "
        "the scanner re-sends tagged snapshots the ledger does not know.")


@dataclass(frozen=True)
class ManifestSection(Section):
    max_block_bytes: int = setting(
        256 * 1024 * 1024, "The most one Avro block of a manifest may inflate to (a decompression bomb is stopped "
        "there).", check=AT_LEAST_ONE)


@dataclass(frozen=True)
class ScanSection(Section):
    delivery_deadline_s: float = setting(
        120.0, "Seconds a scan may spend delivering, in all; past it, the rest is spooled unsent (`delivery` in the "
        "JSON summary).", check=POSITIVE)
    table_timeout_s: float = setting(
        600.0, "Seconds one table's task may run; past it the table is reported failed (`kind: timeout`) and its "
        "worker abandoned.", check=POSITIVE)


@dataclass(frozen=True)
class JobsSection(Section):
    max_line_bytes: int = setting(
        16 * 1024 * 1024, "The longest event-log line `jobs` decodes; a longer one is skipped as a bad line.",
        check=AT_LEAST_ONE)


@dataclass(frozen=True)
class DeliverySection(Section):
    breaker_cooldown_s: float = setting(
        30.0, "After a transport failure, events are spooled unsent for this long; then one is sent as a probe. 0: "
        "each batch tries again.", check=NON_NEGATIVE)
    request_deadline_s: float = setting(
        DEFAULT_REQUEST_DEADLINE_S, "Seconds one HTTP request to the lineage endpoint may take in all: connecting, "
        "sending, retries and their waits, and the whole answer (a socket timeout restarts with each byte a slow "
        "server sends). Past it the connection is closed, the event spooled and the breaker opened.", check=POSITIVE)


@dataclass(frozen=True)
class ProxySection(Section):
    """The REST bridge (``iceberg-lineage proxy``); its flags set the first seven."""

    upstream: str | None = setting(None, "The Iceberg REST catalog to pass requests to (`--upstream`).")
    host: str = setting("127.0.0.1", "The address to listen on (`--listen HOST:PORT`).")
    port: int = setting(8181, "The port to listen on (`--listen HOST:PORT`); 0: any free one.",
                        check=Range(ge=0, le=65535))
    public_uri: str | None = setting(
        None, "The URI engines use to reach the bridge (`--public-uri`; default: the listen address); `/v1/config` "
        "points an override `uri` at it, and it names tables in the `TABLE` symlink.")
    depth: Depth = setting("summary", "How far to read each new snapshot (`--depth`); deeper than summary reads "
                           "storage with `io_properties`.")
    io_properties: Mapping[str, str] = setting(
        {}, "The bridge's own catalog and FileIO properties (`--io-property KEY=VALUE`: `credential`, `s3.*`), for "
        "its own table loads and storage reads, never the engines' credentials.", secret=True)
    workers: int = setting(1, "Server processes (`--workers`).", check=Range(ge=1, le=64))
    max_body_bytes: int = setting(
        64 * 1024 * 1024, "The bridge parses commit, create, register, rename and drop bodies and their answers up "
        "to this size; a bigger one passes through unparsed, with one warning.", check=NON_NEGATIVE)
    cache_tables: int = setting(
        1000, "Tables whose last relayed metadata the bridge keeps (LRU), for answers that carry none "
        "(`transactions/commit`, drop, rename).", check=NON_NEGATIVE)
    connect_timeout_s: float = setting(
        10.0, "The bridge's wait for a connection to the upstream catalog (past it: 503).", check=POSITIVE)
    upstream_timeout_s: float = setting(
        300.0, "The bridge's wait for each read of the upstream's answer (past it: 504).", check=POSITIVE)
    own_load_timeout_s: float = setting(
        10.0, "The most the bridge waits for one of its own table loads (on a thread of its own, with its own "
        "socket timeout); past it lineage goes on without the table.", check=POSITIVE)
    queue_max_bytes: int = setting(
        256 * 1024 * 1024, "Bytes of captures waiting between a serving process and the lineage process; past it a "
        "capture goes without its bodies, with one warning, and the lineage process reloads the table.",
        check=NON_NEGATIVE)
    header_timeout_s: float = setting(
        10.0, "Seconds a client may take to send a request's headers (aiohttp's keep-alive timeout).", check=POSITIVE)
    body_timeout_s: float = setting(60.0, "Seconds a client may take to send a request's body; past it: 408.",
                                    check=POSITIVE)
    report_wait_s: float = setting(
        2.0, "How long a commit's COMPLETE waits for the engine's commit report (Iceberg Java, or a client that "
        "reported before); a later report is an `OTHER` event. 0: never wait.", check=NON_NEGATIVE)
    run_idle_timeout_s: float = setting(
        300.0, "Seconds without activity after which an engine application's run completes "
        "(`--run-idle-timeout`).", check=POSITIVE)

    @property
    def uri(self) -> str:
        """The URI engines use: ``--public-uri``, else the listen address."""
        return (self.public_uri or f"http://{self.host}:{self.port}").rstrip("/")


@dataclass(frozen=True)
class AlertsSection(Section):
    webhook: str | None = setting(None, "URL that receives each alert as a JSON POST (kept secret: never logged).",
                                  secret=True)
    webhook_timeout_s: float = setting(5.0, "Seconds one POST may take.", check=POSITIVE)
    webhook_retries: int = setting(
        3, "Retries of a failed POST (urllib3's, with back-off) before the alert is spooled.", check=NON_NEGATIVE)


@dataclass(frozen=True)
class EventsSection(Section):
    max_bytes: int = setting(
        DEFAULT_EVENTS_MAX_BYTES, "The largest event sent; one over it is trimmed in a declared order, never "
        "dropped (see \"Byte budget\"). A profile may lower it.", check=AT_LEAST_ONE)
    max_links: int | None = setting(
        None, "Input → output links per event; a run with more is sent as several RUNNING events and one terminal "
        "event (see \"Link limit\"). Unset: the profile's (Dataplex 100), else no limit.", check=AT_LEAST_ONE)
    start_events: bool = setting(
        True, "Every run we start gets a `START` before its terminal event: per-snapshot runs (scanner, hook, REST "
        "bridge, `events`), lifecycle runs (CREATE, REGISTER, ALTER, RENAME, DROP), checks runs (`check --emit`, schema "
        "alerts), scan runs (hook, bridge), the hook's failed commits and the scan's own run; run contexts and "
        "`iceberg-lineage run` always had one. `false`: the terminal event alone.")


@dataclass(frozen=True)
class ConsumerSection(Section):
    profile: ProfileName = setting(
        "generic", "The consumer the events are shaped for (see \"Consumers\"); `--profile` on `events`, `scan`, "
        "`run`, `check` and `proxy`.")
    connection: str | None = setting(
        None, "Atlan's connection name: the job namespace under the `atlan` profile (required there).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.profile == "atlan" and not self.connection:
            raise ConfigError("consumer.profile atlan needs consumer.connection: the Atlan connection name, which "
                              "becomes the job namespace")


@dataclass(frozen=True)
class Settings(Section):
    """Every setting, by section: ``settings.spool.path`` is the file key ``spool.path``."""

    naming: NamingSection = section(NamingSection, "How datasets are named.")
    job: JobSection = section(JobSection, "The jobs' names.")
    column_stats: ColumnSelection = section(ColumnSelection, "Which columns get statistics.")
    state: StateSection = section(StateSection, "The watermark store and delivery ledger.")
    spool: SpoolSection = section(SpoolSection, "Undeliverable events.")
    hook: HookSection = section(HookSection, "The PyIceberg hook.")
    manifest: ManifestSection = section(ManifestSection, "Reading manifests.")
    scan: ScanSection = section(ScanSection, "The catalog scan.")
    delivery: DeliverySection = section(DeliverySection, "Sending events.")
    proxy: ProxySection = section(ProxySection, "The REST bridge.")
    alerts: AlertsSection = section(AlertsSection, "Schema alerts.")
    events: EventsSection = section(EventsSection, "The events' shape and size.")
    consumer: ConsumerSection = section(ConsumerSection, "The consumer the events are shaped for.")
    jobs: JobsSection = section(JobsSection, "Reading event logs (`iceberg-lineage jobs`).")
    checks: Any = setting((), "The rules per table glob (see \"check\"); `ICEBERG_LINEAGE__CHECKS` takes the list as "
                          "YAML.", compare=False)

    def updated(self, values: Mapping[str, Any]) -> "Settings":
        """These settings with ``values`` (dotted keys, as in the file; parsed and validated) put in."""
        return build(type(self), {key: parse_setting(type(self), key, raw) for key, raw in values.items()}, self)
