"""What every ``iceberg-lineage`` command shares: exit codes, one-line errors, and the table/column options.

Exit codes (``docs/exit-codes.md``): 0 everything asked for was done; 1 some or all tables could not be read, a
rule failed, or an event was lost or refused (reason on stderr); 2 usage or configuration error; 3 the work was done, and events wait
in the spool for ``iceberg-lineage replay``. The most serious wins: 2, then 1, then 3 (:func:`most_serious`).
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable

import click

from iceberg_lineage.errors import ConfigError, IcebergLineageError
from iceberg_lineage.printable import printable
from iceberg_lineage.redact import scrub, scrubbed_traceback

if TYPE_CHECKING:
    from iceberg_lineage.delivery.results import DeliveryStats

EXIT_OK, EXIT_TABLE_FAILED, EXIT_USAGE, EXIT_SPOOLED = 0, 1, 2, 3
#: Exit codes from the most serious to the least: a cron job sees the worst thing that happened.
_PRECEDENCE = (EXIT_USAGE, EXIT_TABLE_FAILED, EXIT_SPOOLED, EXIT_OK)


def most_serious(*codes: int) -> int:
    """The code that wins among ``codes`` (2 > 1 > 3 > 0)."""
    return min(codes, key=_PRECEDENCE.index, default=EXIT_OK)


def delivery_exit_code(stats: DeliveryStats) -> int:
    """What a delivery's counts make of the exit code: 1 an event lost or refused for good, 3 events wait in the
    spool, else 0 (disabled delivery sends nothing and owes nothing)."""
    if stats.lost_or_refused:
        return EXIT_TABLE_FAILED
    return EXIT_SPOOLED if stats.waiting else EXIT_OK


def fail(exc: BaseException, debug: bool, code: int = EXIT_TABLE_FAILED) -> None:
    """Print one line on stderr (a traceback before it only with --debug) and exit. Both go through the secret
    redaction and show control characters: exception messages quote URLs, catalog bodies and names from metadata."""
    if debug:
        click.echo(scrubbed_traceback(exc).rstrip("\n"), err=True)
    message = exc.one_line() if isinstance(exc, IcebergLineageError) else f"{type(exc).__name__}: {exc}"
    click.echo(f"iceberg-lineage: error: {printable(scrub(message))}", err=True)
    sys.exit(code)


def run_guarded(debug: bool, body: Callable[[], int | None]) -> None:
    """Run a command body, mapping errors to exit codes: never a raw traceback (``--debug`` shows a cleaned one).

    An ``OSError`` that reaches here is about the environment (a configuration or state path), hence exit 2; any
    other unexpected error fails the command with exit 1. Click's own usage errors pass through to click."""
    try:
        code = body()
    except click.ClickException:
        raise
    except ConfigError as exc:
        fail(exc, debug, EXIT_USAGE)
    except IcebergLineageError as exc:
        fail(exc, debug, EXIT_TABLE_FAILED)
    except (ValueError, TypeError, OSError) as exc:
        fail(exc, debug, EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback, whatever went wrong
        fail(exc, debug, EXIT_TABLE_FAILED)
    sys.exit(code or EXIT_OK)


def parsed_by(parse: Callable[[str | None], Any]) -> Callable[[click.Context, click.Parameter, str | None], Any]:
    """A click callback that turns a parser's ValueError (``--option: why``) into click's usage error (exit 2)."""

    def callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[-1]) from None

    return callback


def parse_relocate(values: Iterable[str]) -> dict[str, str]:
    out = {}
    for v in values:
        old, sep, new = v.partition("=")
        if not sep or not old or not new:
            raise click.BadParameter(f"expected OLD=NEW, got {v!r}", param_hint="--relocate")
        out[old] = new
    return out


def stacked(*options: Callable[[Callable], Callable]) -> Callable[[Callable], Callable]:
    """One decorator for several click options, in the order given (the order of ``--help``)."""

    def apply(f: Callable) -> Callable:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


#: The options every command that reads a table shares (``check`` adds its own ``--catalog`` and ``--snapshot``).
metadata_option = click.option("--metadata", "metadata", metavar="PATH",
                               help="metadata.json path or URI, or a table directory.")
table_option = click.option("--table", metavar="NS.TABLE", help="Table identifier in --catalog.")
relocate_option = click.option(
    "--relocate", multiple=True, metavar="OLD=NEW",
    help="Read files whose paths start with OLD from NEW instead (tables copied away from their writer).")
debug_option = click.option("--debug", is_flag=True, help="Show tracebacks.")

#: The options that say which table (and which snapshots) a command is about.
table_options = stacked(
    metadata_option,
    click.option("--catalog", metavar="NAME", help="PyIceberg catalog name (.pyiceberg.yaml, PYICEBERG_CATALOG__*); "
                                                   "needed with --table. 'default', when not configured, is the "
                                                   "demo's embedded SQLite catalog in ./warehouse."),
    table_option,
    click.option("--snapshot", type=int, metavar="ID", help="Snapshot id (default: the current snapshot)."),
    click.option("--all-snapshots", is_flag=True, help="Every snapshot in snapshots[], in commit order."),
    relocate_option,
    debug_option,
)

column_options = stacked(
    click.option("--column-stats", type=click.Choice(["none", "counts", "bounds"]), default=None,
                 help="Column statistics to compute (default: column_stats.mode, bounds)."),
    click.option("--include-columns", multiple=True, metavar="GLOB", help="Only these dotted column names."),
    click.option("--exclude-columns", multiple=True, metavar="GLOB", help="Never these dotted column names."),
)


def profile_option(f: Callable) -> Callable:
    """``--profile``: the consumer the events are for (``consumer.profile``)."""
    from iceberg_lineage.config import PROFILE_NAMES

    return click.option("--profile", type=click.Choice(PROFILE_NAMES), default=None,
                        help="Shape events for this consumer (default: consumer.profile, generic).")(f)


def column_flags(column_stats: str | None, include: tuple[str, ...], exclude: tuple[str, ...]) -> dict[str, Any]:
    return {
        "column_stats.mode": column_stats,
        "column_stats.include": include or None,
        "column_stats.exclude": exclude or None,
    }


def resolve_table(metadata: str | None, catalog: str | None, table: str | None, relocate: tuple[str, ...]):
    """Open the table named by --metadata, or by --catalog and --table."""
    from iceberg_lineage.read.source import open_table

    reloc = parse_relocate(relocate)
    if metadata and (catalog or table):
        raise ConfigError("use either --metadata or --catalog/--table, not both")
    if metadata:
        return open_table(metadata, relocate=reloc)
    if catalog and table:
        return open_table(table, catalog=catalog, relocate=reloc)
    raise ConfigError("give --metadata PATH, or --catalog NAME and --table NS.TABLE")


def default_format() -> str:
    return "text" if sys.stdout.isatty() else "json"


def settings_and_table(metadata: str | None, catalog: str | None, table: str | None, relocate: tuple[str, ...],
                       snapshot: int | None, all_snapshots: bool, column_stats: str | None,
                       include_columns: tuple[str, ...], exclude_columns: tuple[str, ...], profile: str | None = None):
    """The prologue of every per-table command: check the snapshot options, resolve the settings, open the table."""
    from iceberg_lineage.config import load_settings

    if snapshot is not None and all_snapshots:
        raise ConfigError("use either --snapshot or --all-snapshots")
    settings = load_settings({**column_flags(column_stats, include_columns, exclude_columns),
                              "consumer.profile": profile})
    return settings, resolve_table(metadata, catalog, table, relocate)


def selected_snapshot_ids(loaded: Any, snapshot: int | None, all_snapshots: bool) -> list[int] | None:
    """``None`` for every snapshot, else the one asked for (default: the current one; none for an empty table)."""
    if all_snapshots:
        return None
    md = loaded.metadata
    sid = snapshot if snapshot is not None else md.current_snapshot_id
    if sid is not None and md.snapshot_by_id(sid) is None:
        raise IcebergLineageError(f"no snapshot {sid}", table=loaded.display_name, file=md.metadata_location)
    return [] if sid is None else [sid]
