"""``attach(catalog)``: lineage for a notebook in one line, with a log of exactly what was sent.

The session's client is a copy of the configured one whose transport fans out to the configured transport and to an
in-memory recorder. The recorder sits behind the client, so it keeps each event as the transport received it (client
facets added, filters applied), serialised at that moment; openlineage-python's composite keeps delivery and the
spool working as for any client (the real transport's failures are still seen and spooled).
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence, cast, overload

from openlineage.client import OpenLineageClient
from openlineage.client.transport.composite import CompositeConfig, CompositeTransport
from openlineage.client.transport.noop import NoopTransport
from openlineage.client.transport.transport import Transport

from iceberg_lineage.config import load_settings
from iceberg_lineage.delivery.client import describe_transport, make_client
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.emitter import EMITTERS, Emitter
from iceberg_lineage.delivery.transports import Sendable, tapped
from iceberg_lineage.hook import observe
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.jobs import JobsReport, jobs_of_events
import iceberg_lineage.notebook.html as h

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog


class RecordingTransport(Transport):
    """Keeps the JSON of every event it is handed, in order; thread-safe."""

    kind = "iceberg-lineage-notebook"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sent: list[str] = []

    def emit(self, event: Sendable) -> None:
        text = to_json(event)
        with self._lock:
            self.sent.append(text)


def recording_client(client: OpenLineageClient) -> tuple[OpenLineageClient, RecordingTransport]:
    """A copy of ``client`` that also records what it sends; ``client`` keeps its own transport."""
    recorder = RecordingTransport()
    # openlineage-python's composite over both (each target given to its factory as an instance, in a tap of ours):
    # every event goes to every target; one target failing does not stop the others
    fan_out = CompositeTransport(CompositeConfig(transports=[tapped(client.transport), tapped(recorder)],
                                                 continue_on_failure=True, continue_on_success=True))
    return OpenLineageClient(transport=fan_out, config=client.user_defined_config), recorder


@dataclass(frozen=True)
class JsonDocument:
    """A JSON document that Jupyter shows collapsible and pretty-printed."""

    title: str
    data: Any

    def _repr_html_(self) -> str:
        return h.json_html(self.title, self.data)

    def __repr__(self) -> str:
        return f"{self.title}\n{json.dumps(self.data, indent=2, sort_keys=True, default=str)}"


@dataclass(frozen=True)
class EmittedEvent:
    """One event exactly as sent (its JSON text), with the few fields a reader looks for first."""

    json: str

    @cached_property
    def data(self) -> dict[str, Any]:
        return json.loads(self.json)

    @property
    def event_type(self) -> str:
        return h.event_kind(self.data)

    @property
    def job(self) -> str:
        return (self.data.get("job") or {}).get("name", "")

    @property
    def inputs(self) -> list[str]:
        return [h.dataset_label(d) for d in self.data.get("inputs") or ()]

    @property
    def outputs(self) -> list[str]:
        return [h.dataset_label(d) for d in self.data.get("outputs") or ()]

    def facet(self, name: str) -> JsonDocument:
        """The first facet called ``name`` in the run, the job, then each dataset (incl. input/output facets)."""
        places: list[Mapping[str, Any]] = [(self.data.get("run") or {}).get("facets") or {},
                                           (self.data.get("job") or {}).get("facets") or {}]
        for d in [*(self.data.get("inputs") or ()), *(self.data.get("outputs") or ()), self.data.get("dataset") or {}]:
            places += [d.get("facets") or {}, d.get("inputFacets") or {}, d.get("outputFacets") or {}]
        for facets in places:
            if name in facets:
                return JsonDocument(f"{name} of {h.event_summary(self.data)}", facets[name])
        raise KeyError(f"no facet {name!r} in {h.event_summary(self.data)}")

    def _repr_html_(self) -> str:
        return h.event_html(self.data)

    def __repr__(self) -> str:
        flow = f"{', '.join(self.inputs) or '-'} -> {', '.join(self.outputs) or '-'}"
        return f"<{self.data.get('eventTime')} {self.event_type} {self.job}: {flow}>"


class EventLog(Sequence[EmittedEvent]):
    """Events in the order they were sent; a table in Jupyter, one line per event in a terminal."""

    def __init__(self, events: Sequence[EmittedEvent]) -> None:
        self._events = tuple(events)

    @overload
    def __getitem__(self, index: int) -> EmittedEvent: ...
    @overload
    def __getitem__(self, index: slice) -> EventLog: ...

    def __getitem__(self, index: int | slice) -> EmittedEvent | EventLog:
        if isinstance(index, slice):
            return EventLog(self._events[index])
        return self._events[index]

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[EmittedEvent]:
        return iter(self._events)

    def of_job(self, suffix: str) -> EventLog:
        """The events whose job name ends with ``suffix`` (``.scan``: reads; ``.pyiceberg``: commits)."""
        return EventLog([ev for ev in self._events if ev.job.endswith(suffix)])

    def _repr_html_(self) -> str:
        return h.events_html([ev.data for ev in self._events])

    def __repr__(self) -> str:
        return "\n".join(repr(ev) for ev in self._events) or "<no events>"


@dataclass(frozen=True)
class SessionStatus:
    """Where a session's events go and what became of them (``%lineage status``)."""

    transport: str
    kind: str
    emitted: int
    delivered: int
    spooled: int
    failed: int
    spool_path: str

    def lines(self) -> dict[str, Any]:
        return {
            "events to": self.transport,
            "transport kind": self.kind,
            "events emitted": self.emitted,
            "delivered": self.delivered,
            "spooled (iceberg-lineage replay)": self.spooled,
            "failed (lost)": self.failed,
            "spool": self.spool_path,
        }

    def _repr_html_(self) -> str:
        return h.mapping_html("iceberg-lineage session", self.lines())

    def __repr__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.lines().items())


@dataclass
class Session:
    """A catalog observed from a notebook: its events (``events``), status and the catalog itself."""

    catalog: Catalog
    #: The client as configured (where events go); ``client`` is the recording copy the hook sends through.
    configured: OpenLineageClient
    client: OpenLineageClient
    emitter: Emitter
    recorder: RecordingTransport | None = field(repr=False)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the events queued by the hook's background thread were sent."""
        return self.emitter.flush(timeout)

    @property
    def events(self) -> EventLog:
        self.flush()
        sent = list(self.recorder.sent) if self.recorder is not None else []
        return EventLog([EmittedEvent(text) for text in sent])

    def jobs(self, *, since: Any = None, job: Any = (), max_failure_rate: Any = None) -> JobsReport:
        """Runs, failure rates and durations of the jobs in the events this session sent (as ``jobs(...)``)."""
        self.flush()
        sent = list(self.recorder.sent) if self.recorder is not None else []
        return jobs_of_events(sent, source="session", since=since, job=job, max_failure_rate=max_failure_rate)

    @property
    def delivery(self) -> Delivery:
        """The exporter behind the session's emitter (its counts and its spool)."""
        return cast(Delivery, self.emitter.exporter)

    def status(self) -> SessionStatus:
        self.flush()
        stats = self.delivery.stats
        return SessionStatus(
            transport=describe_transport(self.configured),
            kind=str(self.configured.transport.kind),
            emitted=len(self.recorder.sent) if self.recorder is not None else 0,
            delivered=stats.delivered,
            spooled=stats.spooled,
            failed=stats.failed,
            spool_path=str(self.delivery.spool_path),
        )

    def _repr_html_(self) -> str:
        return self.status()._repr_html_() + self.events._repr_html_()

    def __repr__(self) -> str:
        return f"{self.status()!r}\n{self.events!r}"


@dataclass
class LatestSession:
    """The session ``%lineage`` talks about: that of the latest :func:`attach`."""

    session: Session | None = None


_LATEST = LatestSession()


def attach(catalog: Catalog, client: OpenLineageClient | None = None, *, job_name: str | None = None) -> Session:
    """Observe ``catalog`` as :func:`iceberg_lineage.hook.observe` does and keep a log of the events sent.

    ``client`` defaults to :func:`iceberg_lineage.delivery.client.make_client` (``openlineage.yml``, ``OPENLINEAGE_URL``, or
    JSON Lines in ``events.jsonl`` beside the state file, in the per-user state folder by default). A disabled client (``OPENLINEAGE_DISABLED``) is kept as is:
    nothing is sent, so nothing is logged. The latest session is the one ``%lineage`` talks about.
    """
    configured = client if client is not None else make_client()
    if configured.transport.kind == NoopTransport.kind:
        session_client, recorder = configured, None
    else:
        session_client, recorder = recording_client(configured)
    observe(catalog, client=session_client, job_name=job_name)
    emitter = EMITTERS.emitter_for(session_client, load_settings())
    session = Session(catalog, configured, session_client, emitter, recorder)
    _LATEST.session = session
    return session


def current_session() -> Session | None:
    """The session of the latest :func:`attach`, if any."""
    return _LATEST.session
