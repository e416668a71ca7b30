"""Compact HTML of OpenLineage events for Jupyter: pure functions from event JSON to markup. The statistics'
HTML, and the table markup used here, is :mod:`iceberg_lineage.stats.html` (re-exported).

Every name and value goes through :func:`html.escape`: job names and facet values come from tables and catalogs we do
not control, and must never become markup in the notebook.
"""
from __future__ import annotations

import html
import json
from typing import Any, Mapping, Sequence

from iceberg_lineage.stats.html import escaped, history_html, html_table, html_title, human_bytes, snapshot_html


def dataset_label(dataset: Mapping[str, Any]) -> str:
    """The table's catalog name when the event has one (``symlinks``), else ``namespace:name``; then ``@ version``."""
    facets = dataset.get("facets") or {}
    names = [i.get("name") for i in (facets.get("symlinks") or {}).get("identifiers") or [] if i.get("name")]
    label = names[0] if names else f"{dataset.get('namespace')}:{dataset.get('name')}"
    version = (facets.get("version") or {}).get("datasetVersion")
    return f"{label} @ {version}" if version else label


def _datasets(items: Sequence[Mapping[str, Any]] | None) -> str:
    return "<br>".join(
        f'<span title="{html.escape(str(d.get("namespace")))}:{html.escape(str(d.get("name")))}">'
        f"{html.escape(dataset_label(d))}</span>"
        for d in items or ()
    )


def event_kind(event: Mapping[str, Any]) -> str:
    """RunEvents have an eventType; dataset and job events are named by their kind."""
    if event.get("eventType"):
        return str(event["eventType"])
    return "DATASET" if "dataset" in event else "JOB"


def event_type_label(event: Mapping[str, Any]) -> str:
    """The event type with the job type our events carry (``COMPLETE · ALTER``): a commit, a scan and a schema
    change are all COMPLETE runs."""
    job_type = (((event.get("job") or {}).get("facets") or {}).get("jobType") or {}).get("jobType")
    return f"{event_kind(event)} · {job_type}" if job_type else event_kind(event)


def event_job(event: Mapping[str, Any]) -> str:
    job = event.get("job") or {}
    return f"{job.get('namespace')}/{job.get('name')}" if job else ""


def events_html(events: Sequence[Mapping[str, Any]]) -> str:
    """Events in the order they were sent: time, type, job, inputs and outputs with their versions."""
    if not events:
        return "<div>no OpenLineage events yet</div>"
    rows = []
    for i, ev in enumerate(events):
        outputs = ev.get("outputs") or ([ev["dataset"]] if "dataset" in ev else [])
        rows.append((escaped(i), escaped(ev.get("eventTime")), escaped(event_type_label(ev)), escaped(event_job(ev)),
                     _datasets(ev.get("inputs")), _datasets(outputs)))
    return html_table(("#", "time", "type", "job", "inputs", "outputs"), rows, right=(0,))


def json_html(summary: str, data: Any) -> str:
    """A pretty-printed JSON document, open, that a click on its summary line folds away."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
    return (f"<details open><summary>{html.escape(summary)}</summary>"
            f'<pre style="font-size:11px;max-height:40em;overflow:auto">{html.escape(text)}</pre></details>')


def event_summary(event: Mapping[str, Any]) -> str:
    """One line naming an event: type, job, time."""
    return f"{event_kind(event)} {event_job(event)} at {event.get('eventTime')}"


def event_html(event: Mapping[str, Any]) -> str:
    return json_html(event_summary(event), event)


def mapping_html(title: str, values: Mapping[str, Any]) -> str:
    """A two-column table of named values (status lines, scan summaries)."""
    return html_title(escaped(title)) + html_table(("", ""), ((escaped(k), escaped(v)) for k, v in values.items()))


__all__ = [
    "dataset_label",
    "event_html",
    "event_kind",
    "event_summary",
    "event_type_label",
    "events_html",
    "history_html",
    "human_bytes",
    "json_html",
    "mapping_html",
    "snapshot_html",
]
