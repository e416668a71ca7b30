"""The one shaping function: a built event in, the events a consumer gets out (:func:`shaped`). It applies the
consumer profile (:mod:`~iceberg_lineage.lineage.profiles`: job namespace, names too long, a checks run, links per
event and per run) and the byte budget (:mod:`~iceberg_lineage.lineage.budget`) of each event sent.

Delivery and the commands that print events both go through :func:`shape`, after openlineage-python's client
prepared the event (:func:`iceberg_lineage.delivery.preview.outgoing`), so what is printed is what is sent. Pure: events are openlineage-python objects in and out, never JSON or dicts, and the event given is
never changed; the notes say what was trimmed or left out.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from openlineage.client.event_v2 import RunEvent

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.budget import trim
from iceberg_lineage.lineage.profiles import (
    checks_runs, is_orphan_start, profile_of, split_links, with_job_namespace, with_table_parent, without_long_names,
)
from iceberg_lineage.lineage.serde import Event

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shaped:
    """The events one built event is sent as (several when it carries more links than one event may, or a checks
    run), and notes saying what was trimmed or left out."""

    events: tuple[Event, ...]
    notes: tuple[str, ...] = ()


def shaped(event: Event, settings: Settings) -> Shaped:
    """The events ``event`` goes out as under ``settings``' consumer profile and byte budget, with notes; the event
    itself when nothing applies."""
    profile = profile_of(settings)
    max_links = settings.events.max_links or profile.max_links
    max_bytes = min(settings.events.max_bytes, profile.max_bytes) if profile.max_bytes else None
    notes: list[str] = []
    if profile.requires_parent:
        event = with_table_parent(event)
        if is_orphan_start(event):
            return Shaped(())
    if profile.connection_namespace:
        event = with_job_namespace(event, settings.job.namespace, str(settings.consumer.connection))
    if profile.max_name_chars:
        event, left_out = without_long_names(event, profile.max_name_chars)
        notes += left_out
    parts: list[Event] = [event, *(checks_runs(event, start=settings.events.start_events)
                                   if profile.checks_run else ())]
    if max_links and isinstance(event, RunEvent):
        split = [split_links(part, max_links, profile.max_run_links) for part in parts]  # type: ignore[arg-type]
        parts = [p for part, _ in split for p in part]
        notes += [note for _, left_out in split for note in left_out]
    if max_bytes:
        parts = [_fitted(part, max_bytes, notes) for part in parts]
    return Shaped(tuple(parts), tuple(notes))


def shape(event: Event, settings: Settings) -> list[Event]:
    """:func:`shaped`'s events, its notes logged as warnings: what delivery sends and printing commands show."""
    result = shaped(event, settings)
    for note in result.notes:
        log.warning("consumer profile %s: %s", settings.consumer.profile, note)
    return list(result.events)


def _fitted(event: Event, max_bytes: int, notes: list[str]) -> Event:
    trimmed = trim(event, max_bytes)
    if trimmed.steps:
        run_id = getattr(getattr(event, "run", None), "runId", None) or "-"
        notes.append(f"event of run {run_id} over {max_bytes} bytes: trimmed ({', '.join(trimmed.steps)}), "
                     f"now {trimmed.size} bytes")
    return trimmed.event
