"""The one place that decides what is secret, so no credential of a catalog, a FileIO or a transport ever reaches an
event, a spool, a state file, a log record or an error message.

What is secret (:func:`is_secret_key`), decided on the property *name*, case-insensitively:

* any name containing ``secret``, ``token``, ``password``, ``passwd``, ``pwd``, ``credential``, ``key``, ``auth``,
  ``session``, ``cookie``, ``signature``, ``private`` or ``header`` (headers are where credentials travel):
  ``s3.secret-access-key``, ``s3.session-token``, ``client.secret``, ``credential``, ``token``,
  ``adls.sas-token.<account>``, ``gcs.oauth2.token``, ``header.Authorization``, ``s3.sse.key``;
* as URI query parameters, also :data:`SECRET_QUERY_PARAMS`: Azure SAS's ``sig`` and AWS presigned URLs'
  ``X-Amz-Signature``, ``X-Amz-Credential`` and ``X-Amz-Security-Token``.

Deliberately still secret although they look harmless: access key ids (``s3.access-key-id``, ``client.access-key-id``:
half a credential pair, and they name the account; lineage consumers never need them) and ``key-metadata``
(Iceberg's wrapped encryption keys). Being conservative costs a catalog facet property, never a leak.

Not secret although the name matches (:data:`SAFE_KEYS`, :data:`SAFE_PREFIXES`): Iceberg table properties where
"key" means a column or a sort/partition key: ``write.metadata.metrics.*`` (its suffix is a column name),
``partition-key``, ``sort-key``, ``primary-key``.
"""
from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from typing import Any, Callable
from urllib.parse import quote, unquote

from iceberg_lineage.printable import printable, printable_lines

#: Name fragments that make a property (or a URI query parameter) secret.
SECRET_WORDS = re.compile(
    r"secret|token|passw(?:or)?d|pwd|credential|key|auth|session|cookie|signature|private|header", re.IGNORECASE
)
#: Query parameters that carry credentials without a telling name (Azure SAS ``sig``, AWS presigned URLs).
SECRET_QUERY_PARAMS = frozenset({"sig", "x-amz-signature", "x-amz-credential", "x-amz-security-token"})
#: Names that match :data:`SECRET_WORDS` but hold no secret.
SAFE_KEYS = frozenset({"partition-key", "sort-key", "primary-key"})
SAFE_PREFIXES = ("write.metadata.metrics.",)
#: Secret values shorter than this are not searched for in free text: "on" or "1" would mangle every message
#: while hiding nothing (such values are still never copied, since their keys are dropped).
MIN_SECRET_LENGTH = 4
#: Replacement of a secret value in text.
MASK = "***"
#: Loggers whose records (and their children's) :func:`protect` scrubs; openlineage-python logs its transport
#: configuration (URL, custom headers) at DEBUG.
PROTECTED_LOGGERS = ("iceberg_lineage", "scan_reporters", "openlineage", "pyiceberg")

# scheme://userinfo@rest; Azure's abfs[s]/wasb[s] use "container@account" as authority, which is no credential.
_URI = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.:-]*://)(?:(?P<userinfo>[^/?#@]*)@)?(?P<rest>.*)$", re.DOTALL)
_AZURE_SCHEMES = ("abfs://", "abfss://", "wasb://", "wasbs://")
# A password inside any URI found in free text: scheme://user:password@
_TEXT_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.:-]*://[^\s/?#@:]*:)(?P<password>[^\s/?#@]+)@")
# A query parameter inside free text (an error quoting a request path): ?name=value or &name=value
_TEXT_PARAM = re.compile(r"(?P<head>[?&](?P<name>[^=&\s?#/]+)=)(?P<value>[^&\s#/;,'\")]+)")
# A property assigned inside free text (a catalog's error body quoting its configuration): ``name=value``, or
# ``name: value`` when the name looks like a property (dotted, dashed, or quoted as in JSON): ``KeyError: 'x'``
# is no assignment.
_TEXT_ASSIGN = re.compile(
    rf"(?P<head>(?P<q>[\"']?)(?P<name>[\w.\-]*(?:{SECRET_WORDS.pattern})[\w.\-]*)(?P=q)\s*(?P<sep>=|:)[ \t]*)"
    r"(?P<value>(?:(?:Basic|Bearer|Digest|Negotiate|Token)\s+)?(?:\"[^\"]*\"|'[^']*'|[^\s&,;'\")}\]]+))",
    re.IGNORECASE,
)
# A bearer token, with or without its header's name.
_TEXT_BEARER = re.compile(r"(?P<head>\bBearer\s+)[A-Za-z0-9._~+/=-]{4,}", re.IGNORECASE)
# Anything shaped like a token, whatever names it (a catalog quoting a session token as plain text in an error
# body): a run of the base64 / base64url / JWT alphabet (``=`` only as padding: ``name=value`` is no token) with a stretch between slashes of 20 or more characters
# holding at least two upper-case letters, two lower-case letters and two digits (see :func:`_token_shaped`).
_TEXT_TOKEN = re.compile(r"(?<![\w+/=.-])[\w+/.-]{20,}={0,2}(?![\w+/=.-])")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")


def is_secret_key(key: str) -> bool:
    """Whether a property (or query parameter) of this name may hold a secret."""
    name = key.strip().lower()
    if name in SAFE_KEYS or name.startswith(SAFE_PREFIXES):
        return False
    return bool(SECRET_WORDS.search(name))


def _secret_param(name: str) -> bool:
    return unquote(name).lower() in SECRET_QUERY_PARAMS or is_secret_key(unquote(name))


def strip_userinfo(uri: str) -> str:
    """``scheme://user:pass@host/x?password=y&db=z`` -> ``scheme://host/x?db=z``.

    The userinfo goes (an Azure ``container@account`` stays: it is the container, not a user), and so do query
    parameters with a secret name; everything else keeps its exact spelling (``sqlite:////abs/path`` survives),
    so names built from a URI are stable whatever credentials it was given.
    """
    match = _URI.match(uri)
    if match is None:
        return _strip_query(uri)
    scheme, userinfo, rest = match.group("scheme"), match.group("userinfo"), match.group("rest")
    if userinfo and scheme.lower() in _AZURE_SCHEMES and ":" not in userinfo:
        rest = f"{userinfo}@{rest}"
    return scheme + _strip_query(rest)


def _strip_query(text: str) -> str:
    head, sep, query = text.partition("?")
    if not sep:
        return text
    query, hash_, fragment = query.partition("#")
    kept = [p for p in query.split("&") if p and not _secret_param(p.partition("=")[0])]
    return head + ("?" + "&".join(kept) if kept else "") + hash_ + fragment


def safe_properties(properties: Mapping[str, Any]) -> dict[str, str]:
    """The properties without secret-named ones, and with credentials stripped from URI values (a ``uri`` or a
    ``warehouse`` may carry ``user:pass@``), sorted by name."""
    return {str(k): strip_userinfo(str(v)) for k, v in sorted(properties.items()) if not is_secret_key(str(k))}


#: The catalog properties an event may carry (the ``catalog`` facet's ``catalogProperties``): an allow-list, because a
#: harmless-looking name (``x-my-header``, ``client.extra``) may hold a secret value. Values still go through
#: :func:`strip_userinfo` (an endpoint may embed ``user:pass@``) and lose secret query parameters.
CATALOG_FACET_KEYS = frozenset({
    "type", "py-catalog-impl", "catalog-impl", "io-impl", "py-io-impl", "prefix", "warehouse",
    "region", "client.region", "s3.region", "glue.region", "dynamodb.region", "rest.signing-region",
    "rest.signing-name", "rest.sigv4-enabled", "s3.endpoint", "glue.endpoint", "dynamodb.endpoint",
    "s3.path-style-access", "s3.force-virtual-addressing", "gcs.project-id", "gcs.default-bucket-location",
    "glue.id", "glue.catalog-id", "client.account-id", "hive.hive2-compatible", "jdbc.schema-version",
})


def catalog_facet_properties(properties: Mapping[str, Any]) -> dict[str, str]:
    """The allow-listed catalog properties (:data:`CATALOG_FACET_KEYS`), credentials stripped, sorted by name."""
    return {
        str(k): _strip_query(strip_userinfo(str(v)))
        for k, v in sorted(properties.items())
        if str(k) in CATALOG_FACET_KEYS and not is_secret_key(str(k))
    }


def secret_values(properties: Mapping[str, Any]) -> set[str]:
    """Every secret a set of properties holds: values of secret-named keys (in nested mappings too, such as an
    OpenLineage transport's ``auth`` or ``custom_headers``: below a secret name every value is secret), and
    passwords and secret query values inside any URI value; each also percent-encoded, as URLs carry it."""
    found: set[str] = set()
    _collect(properties, False, found)
    found |= {quote(s, safe="") for s in found}
    return {s for s in found if len(s) >= MIN_SECRET_LENGTH}


def _collect(properties: Mapping[str, Any], inherited: bool, found: set[str]) -> None:
    for key, value in properties.items():
        secret = inherited or is_secret_key(str(key))
        if isinstance(value, Mapping):
            _collect(value, secret, found)
            continue
        text = str(value)
        if secret:
            found.add(text)
            continue
        match = _URI.match(text)
        if match and match.group("userinfo") and ":" in match.group("userinfo"):
            found.add(unquote(match.group("userinfo").split(":", 1)[1]))
        query = text.partition("?")[2].partition("#")[0]
        for pair in query.split("&"):
            name, _, val = pair.partition("=")
            if val and _secret_param(name):
                found.add(unquote(val))


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every known secret replaced by ``***`` (longest first, so a secret containing another goes
    whole); and, known or not, the password of any ``scheme://user:password@``, the value of any secret-named
    query parameter (``?token=...``) or property assignment (``s3.secret-access-key=...``, ``"token": "..."``) and
    any bearer token or token-shaped string (see ``_TEXT_TOKEN``) in it masked too: libraries quote URLs, and
    catalog servers their configuration and tokens, in errors."""
    for secret in sorted((s for s in secrets if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    text = _TEXT_USERINFO.sub(lambda m: m.group("head") + MASK + "@", text)
    text = _TEXT_PARAM.sub(lambda m: m.group("head") + MASK if _secret_param(m.group("name")) else m.group(0), text)
    text = _TEXT_ASSIGN.sub(_masked_assignment, text)
    text = _TEXT_BEARER.sub(lambda m: m.group("head") + MASK, text)
    text = _TEXT_TOKEN.sub(lambda m: MASK if _token_shaped(m.group(0)) else m.group(0), text)
    return _AWS_KEY_ID.sub(MASK, text)


def _token_shaped(run: str) -> bool:
    """Random text, not a name: UUIDs, hex hashes, snapshot ids and generated file names (lower-case), path
    segments and CamelCase identifiers (one digit or none) do not qualify."""
    for part in run.split("/"):
        if len(part) >= 20:
            upper = sum(c.isupper() for c in part)
            lower = sum(c.islower() for c in part)
            digits = sum(c.isdigit() for c in part)
            if upper >= 2 and lower >= 2 and digits >= 2:
                return True
    return False


def _masked_assignment(match: re.Match[str]) -> str:
    name = match.group("name")
    looks_like_property = match.group("sep") == "=" or match.group("q") or any(c in name for c in ".-_")
    structural = name.lower() == "key"  # {"key": ..., "value": ...} pairs (tags, maps) name no secret
    if looks_like_property and not structural and _secret_param(name) and match.group("value") != MASK:
        return match.group("head") + MASK
    return match.group(0)


class SecretFilter(logging.Filter):
    """Scrubs known secret values (and URI passwords) from log records, and shows their control characters
    (:func:`~iceberg_lineage.printable.printable`: a name from metadata cannot forge a log line); never drops a record.

    Works on a handler (every record through it) or through :meth:`install` (every record of the named logger
    trees, at creation). A filter added to a *logger* would miss its children's records: Python runs logger
    filters only on the logger a record was created on.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        self._names: tuple[str, ...] = ()
        self._previous_factory: Callable[..., logging.LogRecord] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        with self._lock:
            self._secrets = self._secrets | {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}

    def scrub(self, text: str) -> str:
        return redact_text(text, self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = printable(self.scrub(message))
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = printable_lines(self.scrub(record.exc_text))
        if record.stack_info:
            record.stack_info = printable_lines(self.scrub(record.stack_info))
        return True

    def install(self, names: Iterable[str] = PROTECTED_LOGGERS) -> None:
        """Scrub every record of the loggers ``names`` and below, whichever handler (pytest's, a user's) gets it."""
        with self._lock:
            self._names = tuple(dict.fromkeys((*self._names, *names)))
            if self._previous_factory is not None:
                return
            previous = self._previous_factory = logging.getLogRecordFactory()

        def factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if _in_trees(record.name, self._names):
                try:
                    self.filter(record)
                except Exception:  # noqa: BLE001, S110 - a bad format string is logging's to report, at emit time
                    pass
            return record

        logging.setLogRecordFactory(factory)

    def uninstall(self) -> None:
        with self._lock:
            if self._previous_factory is not None:
                logging.setLogRecordFactory(self._previous_factory)
                self._previous_factory = None


def _in_trees(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


#: The process-wide filter :func:`protect` feeds.
PROCESS_FILTER = SecretFilter()


def protect(properties: Mapping[str, Any]) -> SecretFilter:
    """Register the secrets of ``properties`` (a catalog's, a FileIO's) with the process-wide filter and make sure it
    scrubs the :data:`PROTECTED_LOGGERS`; call wherever a catalog is loaded or observed, and with the transport's
    settings wherever a client is made."""
    PROCESS_FILTER.add(secret_values(properties))
    PROCESS_FILTER.install()
    return PROCESS_FILTER


#: Environment variables of the tools whose settings may carry credentials (``OPENLINEAGE_URL`` with a password,
#: ``OPENLINEAGE_API_KEY``, ``OPENLINEAGE__TRANSPORT__AUTH__*``, ``PYICEBERG_CATALOG__<name>__TOKEN``).
SECRET_ENV_PREFIXES = ("OPENLINEAGE", "PYICEBERG_")


def protect_environment(env: Mapping[str, str] | None = None) -> SecretFilter:
    """:func:`protect` with the secrets of the environment's OpenLineage and PyIceberg settings: every command calls
    it first, so even an error raised before any catalog or client exists (and its ``--debug`` traceback) is clean."""
    env = os.environ if env is None else env
    return protect({name.lower(): value for name, value in env.items() if name.startswith(SECRET_ENV_PREFIXES)})


def scrubbed_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` for ``--debug``: scrubbed, with control characters shown, and one exception message
    one line (a newline in a path it quotes cannot forge a traceback line); frames keep their two lines."""
    chunks = traceback.TracebackException.from_exception(exc).format()
    return "".join(printable_lines(c) if c.startswith(_TRACE_STRUCTURE) else printable(c.rstrip("\n")) + "\n"
                   for c in map(scrub, chunks))


#: Traceback chunks that are structure (headers, frames, "During handling ..."), not an exception's message.
_TRACE_STRUCTURE = ("  File ", "Traceback (most recent call last)", "\n")


def scrub(text: str) -> str:
    """``text`` without any secret registered through :func:`protect`: for error messages printed outside logging."""
    return PROCESS_FILTER.scrub(text)
