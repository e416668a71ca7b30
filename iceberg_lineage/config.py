"""The tool's own configuration.

Precedence: an explicit argument beats a CLI flag, which beats the environment (``ICEBERG_LINEAGE__SECTION__KEY``),
which beats a YAML file, which beats the defaults. The YAML file is the first of: the path in
``ICEBERG_LINEAGE_CONFIG``, ``./iceberg-lineage.yml``, ``~/.iceberg-lineage.yml``.
OpenLineage transport settings are not here: they stay with openlineage-python (``openlineage.yml``,
``OPENLINEAGE_*``).
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from iceberg_lineage.errors import ConfigError

ENV_PREFIX = "ICEBERG_LINEAGE__"
CONFIG_ENV = "ICEBERG_LINEAGE_CONFIG"

ColumnMode = Literal["none", "counts", "bounds"]
COLUMN_MODES: tuple[ColumnMode, ...] = ("none", "counts", "bounds")
#: Rejections for good (HTTP 4xx other than 408/429) after which a spooled event moves to the quarantine.
DEFAULT_MAX_REJECTIONS = 5
#: The most one Avro block of a manifest may inflate to (a decompression bomb is stopped there).
DEFAULT_MAX_BLOCK_BYTES = 256 * 1024 * 1024
#: Seconds a scan may spend delivering events in all; past it, the rest is spooled without being sent.
DEFAULT_DELIVERY_DEADLINE_S = 120.0
#: Seconds one table's task may run before the scan reports it failed and abandons its worker.
DEFAULT_TABLE_TIMEOUT_S = 600.0
#: Seconds the delivery's circuit breaker stays open after a transport failure (events are spooled meanwhile).
DEFAULT_BREAKER_COOLDOWN_S = 30.0
#: Seconds one POST to ``alerts.webhook`` may take, and how often a failed one is retried before it is spooled.
DEFAULT_WEBHOOK_TIMEOUT_S = 5.0
DEFAULT_WEBHOOK_RETRIES = 3
#: REST bridge: the largest commit/create/register/rename/drop body (and answer) it parses; bigger ones pass unparsed.
DEFAULT_PROXY_MAX_BODY_BYTES = 64 * 1024 * 1024
#: REST bridge: tables whose last relayed metadata is kept (LRU), for 204 answers that carry none.
DEFAULT_PROXY_CACHE_TABLES = 1000
#: The embedded default file transport's JSON Lines (delivery.client), which ``iceberg-lineage jobs`` reads by default.
DEFAULT_EVENTS_PATH = Path(".iceberg-lineage") / "events.jsonl"
#: The largest event sent (``events.max_bytes``): common backends (Marquez, Kafka defaults) refuse bigger ones, so an
#: event over it is trimmed in a declared order (:mod:`iceberg_lineage.lineage.budget`), never dropped.
DEFAULT_EVENTS_MAX_BYTES = 1_000_000
#: The longest line ``jobs`` decodes (``jobs.max_line_bytes``); a longer one is skipped as a bad line.
DEFAULT_JOBS_MAX_LINE_BYTES = 16 * 1024 * 1024
#: ``consumer.profile`` values (declared in :mod:`iceberg_lineage.lineage.profiles`).
PROFILE_NAMES = ("generic", "marquez", "datahub", "openmetadata", "datazone", "dataplex", "atlan")


@dataclass(frozen=True)
class ColumnSelection:
    """Which columns get statistics: the ``column_stats`` policy (mode, include/exclude globs, a column cap).

    Column bounds can be personal data, so the policy is applied before anything is computed or emitted."""

    mode: ColumnMode = "bounds"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_columns: int = 200

    def __post_init__(self) -> None:
        if self.mode not in COLUMN_MODES:
            raise ValueError(f"column_stats.mode must be one of {', '.join(COLUMN_MODES)}, not {self.mode!r}")
        if self.max_columns < 0:
            raise ValueError("column_stats.max_columns must not be negative")

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
class Settings:
    naming_primary: str = "location"
    job_namespace: str = "iceberg-lineage"
    column_stats_mode: str = "bounds"
    column_stats_include: tuple[str, ...] = ()
    column_stats_exclude: tuple[str, ...] = ()
    column_stats_max_columns: int = 200
    state_path: str = "./.iceberg-lineage/state.db"
    spool_path: str = "./.iceberg-lineage/spool"
    spool_max_bytes: int | None = None
    spool_max_rejections: int = DEFAULT_MAX_REJECTIONS
    hook_tag_snapshots: bool = True
    hook_ledger: bool = True
    manifest_max_block_bytes: int = DEFAULT_MAX_BLOCK_BYTES
    scan_delivery_deadline_s: float = DEFAULT_DELIVERY_DEADLINE_S
    scan_table_timeout_s: float = DEFAULT_TABLE_TIMEOUT_S
    delivery_breaker_cooldown_s: float = DEFAULT_BREAKER_COOLDOWN_S
    #: The catalog URI that names REST tables in the TABLE symlink (the bridge's public URI), instead of the
    #: catalog's own ``uri``: the scanner pointed at the upstream then names tables as the bridge does.
    naming_rest_uri: str | None = None
    proxy_max_body_bytes: int = DEFAULT_PROXY_MAX_BODY_BYTES
    proxy_cache_tables: int = DEFAULT_PROXY_CACHE_TABLES
    proxy_connect_timeout_s: float = 10.0
    proxy_upstream_timeout_s: float = 300.0
    #: REST bridge: seconds a commit's COMPLETE waits for the engine's commit report, and seconds without activity
    #: after which an engine application's run completes (``--run-idle-timeout``).
    proxy_report_wait_s: float = 2.0
    proxy_run_idle_timeout_s: float = 300.0
    #: The ``checks:`` entries as written (parsed and validated by :mod:`iceberg_lineage.quality.rules`).
    checks: Any = field(default=(), compare=False)
    alerts_webhook: str | None = field(default=None, repr=False)
    alerts_webhook_timeout_s: float = DEFAULT_WEBHOOK_TIMEOUT_S
    alerts_webhook_retries: int = DEFAULT_WEBHOOK_RETRIES
    events_max_bytes: int = DEFAULT_EVENTS_MAX_BYTES
    jobs_max_line_bytes: int = DEFAULT_JOBS_MAX_LINE_BYTES
    #: Input -> output links per event; a run with more is sent as several RUNNING events and one terminal event.
    #: ``None``: the profile's limit (none for most).
    events_max_links: int | None = None
    #: Each run we start gets a START before its terminal event (``false``: the terminal event alone).
    events_start_events: bool = True
    consumer_profile: str = "generic"
    #: Atlan's connection name: the job namespace under the ``atlan`` profile.
    consumer_connection: str | None = None
    source_file: str | None = field(default=None, compare=False)

    @property
    def columns(self) -> ColumnSelection:
        return ColumnSelection(
            mode=self.column_stats_mode,  # type: ignore[arg-type]
            include=self.column_stats_include,
            exclude=self.column_stats_exclude,
            max_columns=self.column_stats_max_columns,
        )


#: dotted key -> attribute name
KEYS: dict[str, str] = {
    "naming.primary": "naming_primary",
    "job.namespace": "job_namespace",
    "column_stats.mode": "column_stats_mode",
    "column_stats.include": "column_stats_include",
    "column_stats.exclude": "column_stats_exclude",
    "column_stats.max_columns": "column_stats_max_columns",
    "state.path": "state_path",
    "spool.path": "spool_path",
    "spool.max_bytes": "spool_max_bytes",
    "spool.max_rejections": "spool_max_rejections",
    "hook.tag_snapshots": "hook_tag_snapshots",
    "manifest.max_block_bytes": "manifest_max_block_bytes",
    "hook.ledger": "hook_ledger",
    "scan.delivery_deadline_s": "scan_delivery_deadline_s",
    "scan.table_timeout_s": "scan_table_timeout_s",
    "delivery.breaker_cooldown_s": "delivery_breaker_cooldown_s",
    "naming.rest_uri": "naming_rest_uri",
    "proxy.max_body_bytes": "proxy_max_body_bytes",
    "proxy.cache_tables": "proxy_cache_tables",
    "proxy.connect_timeout_s": "proxy_connect_timeout_s",
    "proxy.upstream_timeout_s": "proxy_upstream_timeout_s",
    "proxy.report_wait_s": "proxy_report_wait_s",
    "proxy.run_idle_timeout_s": "proxy_run_idle_timeout_s",
    "checks": "checks",
    "alerts.webhook": "alerts_webhook",
    "alerts.webhook_timeout_s": "alerts_webhook_timeout_s",
    "alerts.webhook_retries": "alerts_webhook_retries",
    "events.max_bytes": "events_max_bytes",
    "jobs.max_line_bytes": "jobs_max_line_bytes",
    "events.max_links": "events_max_links",
    "events.start_events": "events_start_events",
    "consumer.profile": "consumer_profile",
    "consumer.connection": "consumer_connection",
}


def _coerce(key: str, value: Any) -> Any:
    attr = KEYS[key]
    default = getattr(Settings(), attr)
    try:
        if attr in ("column_stats_include", "column_stats_exclude"):
            if value is None:
                return ()
            if isinstance(value, str):
                return tuple(v.strip() for v in value.split(",") if v.strip())
            return tuple(str(v) for v in value)
        if attr in ("hook_tag_snapshots", "hook_ledger", "events_start_events"):
            if isinstance(value, bool):
                return value
            s = str(value).strip().lower()
            if s in ("true", "1", "yes", "on"):
                return True
            if s in ("false", "0", "no", "off"):
                return False
            raise ValueError(f"not a boolean: {value!r}")
        if attr == "naming_rest_uri":
            return None if value in (None, "") else str(value).rstrip("/")
        if attr in ("spool_max_bytes", "events_max_links"):
            return None if value in (None, "", "null", "none") else int(value)
        if attr == "consumer_connection":
            return None if value in (None, "") else str(value)
        if attr == "alerts_webhook":
            return None if value in (None, "") else str(value)
        if attr == "checks":
            return _checks_value(value)
        if isinstance(default, float):
            return float(value)
        if isinstance(default, int):
            return int(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad value for {key}: {exc}") from None


def _checks_value(value: Any) -> Any:
    """The ``checks:`` list as written; from the environment, YAML text."""
    if isinstance(value, str):
        import yaml

        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(f"not YAML: {' '.join(str(exc).split())}") from None
    return () if value is None else value


def _validate(s: Settings) -> Settings:
    if s.naming_primary not in ("location", "table"):
        raise ConfigError(f"naming.primary must be 'location' or 'table', not {s.naming_primary!r}")
    if s.column_stats_mode not in COLUMN_MODES:
        raise ConfigError(f"column_stats.mode must be one of {', '.join(COLUMN_MODES)}, not {s.column_stats_mode!r}")
    if s.column_stats_max_columns < 0:
        raise ConfigError("column_stats.max_columns must not be negative")
    if s.spool_max_bytes is not None and s.spool_max_bytes <= 0:
        raise ConfigError("spool.max_bytes must be positive")
    if s.spool_max_rejections < 1:
        raise ConfigError("spool.max_rejections must be at least 1")
    if s.manifest_max_block_bytes < 1:
        raise ConfigError("manifest.max_block_bytes must be positive")
    if s.proxy_max_body_bytes < 0 or s.proxy_cache_tables < 0:
        raise ConfigError("proxy.max_body_bytes and proxy.cache_tables must not be negative")
    for key in ("scan.delivery_deadline_s", "scan.table_timeout_s", "proxy.connect_timeout_s",
                "proxy.upstream_timeout_s", "proxy.run_idle_timeout_s"):
        if not getattr(s, KEYS[key]) > 0:  # also refuses NaN
            raise ConfigError(f"{key} must be a positive number of seconds")
    if not s.proxy_report_wait_s >= 0:
        raise ConfigError("proxy.report_wait_s must not be negative")
    if not s.delivery_breaker_cooldown_s >= 0:
        raise ConfigError("delivery.breaker_cooldown_s must not be negative")
    if not s.alerts_webhook_timeout_s > 0:
        raise ConfigError("alerts.webhook_timeout_s must be a positive number of seconds")
    if s.alerts_webhook_retries < 0:
        raise ConfigError("alerts.webhook_retries must not be negative")
    if s.events_max_bytes < 1 or (s.events_max_links is not None and s.events_max_links < 1):
        raise ConfigError("events.max_bytes and events.max_links must be positive")
    if s.consumer_profile not in PROFILE_NAMES:
        raise ConfigError(f"consumer.profile must be one of {', '.join(PROFILE_NAMES)}, not {s.consumer_profile!r}")
    if s.consumer_profile == "atlan" and not s.consumer_connection:
        raise ConfigError("consumer.profile atlan needs consumer.connection: the Atlan connection name, which "
                          "becomes the job namespace")
    return s


def find_config_file(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    env = os.environ if env is None else env
    explicit = env.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not _is_file(path):
            raise ConfigError(f"{CONFIG_ENV} points at a missing file", file=str(path))
        return path
    for candidate in ((cwd or Path.cwd()) / "iceberg-lineage.yml", Path.home() / ".iceberg-lineage.yml"):
        if _is_file(candidate):
            return candidate
    return None


def _is_file(path: Path) -> bool:
    """``Path.is_file``, but a path that cannot even be looked at (``Path.is_file`` raises ``PermissionError`` for an
    unsearchable ``$HOME``) is a configuration error naming it, not a traceback."""
    try:
        return path.is_file()
    except OSError as exc:
        raise ConfigError(f"cannot read configuration: {exc.strerror or exc}", file=str(path)) from None


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read configuration: {exc}", file=str(path)) from None
    if not isinstance(data, Mapping):
        raise ConfigError("configuration file is not a mapping", file=str(path))
    flat = _flatten(data)
    unknown = sorted(set(flat) - set(KEYS))
    if unknown:
        raise ConfigError(f"unknown configuration keys: {', '.join(unknown)}", file=str(path))
    return flat


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = ".".join(part.lower() for part in name[len(ENV_PREFIX) :].split("__"))
        if key not in KEYS:
            raise ConfigError(f"unknown configuration key {key} in {name}")
        out[key] = value
    return out


def load_settings(
    flags: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Resolve settings: ``overrides`` (explicit arguments) > ``flags`` (CLI) > environment > YAML > defaults.

    Keys are dotted (``column_stats.mode``); ``None`` values in flags and overrides mean "not given".
    """
    env = os.environ if env is None else env
    settings = Settings()
    path = find_config_file(env, cwd)
    layers: list[Mapping[str, Any]] = []
    if path is not None:
        layers.append(_read_yaml(path))
        settings = replace(settings, source_file=str(path))
    layers.append(_from_env(env))
    layers.append({k: v for k, v in (flags or {}).items() if v is not None and v != ()})
    layers.append({k: v for k, v in (overrides or {}).items() if v is not None})
    for layer in layers:
        for key, value in layer.items():
            if key not in KEYS:
                raise ConfigError(f"unknown configuration key {key}")
            settings = replace(settings, **{KEYS[key]: _coerce(key, value)})
    return _validate(settings)
