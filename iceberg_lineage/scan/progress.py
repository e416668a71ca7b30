"""What a scan shows while it runs, on stderr: a rich progress bar on a terminal (tables done of tables listed, the
total once discovery has listed every table), plain lines otherwise (each updated or failed table, and a count every
:data:`PLAIN_EVERY` tables), nothing when it is off."""
from __future__ import annotations

from typing import IO

from iceberg_lineage.printable import markup_safe
from iceberg_lineage.scan.summary import TableOutcome, outcome_line

#: Plain progress prints a count line every this many tables (updated and failed tables always get a line).
PLAIN_EVERY = 100


class Progress:
    """A rich progress bar on a terminal, plain lines otherwise, nothing when not ``enabled``."""

    def __init__(self, enabled: bool, stream: IO[str]) -> None:
        self.stream = stream
        self.rich = None
        self.enabled = enabled
        self.count = 0
        if enabled and stream.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn, MofNCompleteColumn, Progress as RichProgress, SpinnerColumn, TextColumn, TimeElapsedColumn,
            )

            # the total is unknown ("3/?", a pulsing bar) until discovery has listed every table; stdout stays
            # where it goes (a dry run's events), never drawn through the bar's console
            self.rich = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     MofNCompleteColumn(), TextColumn("tables"), TimeElapsedColumn(),
                                     console=Console(file=stream, force_terminal=True), transient=True,
                                     redirect_stdout=False)
            self.task = self.rich.add_task("scanning", total=None)

    def __enter__(self) -> "Progress":
        if self.rich is not None:
            self.rich.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.rich is not None:
            self.rich.stop()

    def listed(self, total: int) -> None:
        """Discovery is over: ``total`` tables were listed, so the bar gets its total."""
        if self.rich is not None:
            self.rich.update(self.task, total=total)

    def __call__(self, outcome: TableOutcome) -> None:
        if not self.enabled:
            return
        self.count += 1
        line = outcome_line(outcome)
        if self.rich is not None:
            if line:
                self.rich.console.print(line, markup=False, highlight=False)
            last = markup_safe(f"{outcome.catalog}.{outcome.name}")  # the description is rendered as markup
            self.rich.update(self.task, completed=self.count, description=f"scanning, last {last}")
            return
        if line:
            print(f"scan: {line}", file=self.stream, flush=True)
        elif self.count % PLAIN_EVERY == 0:
            print(f"scan: {self.count} tables scanned", file=self.stream, flush=True)
