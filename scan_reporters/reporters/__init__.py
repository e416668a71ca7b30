"""Built-in reporters and the registry; see ``base`` for configuration."""

from scan_reporters.reporters.base import (
    CompositeMetricsReporter,
    MetricsReporter,
    load_reporter,
    load_reporters,
)

__all__ = ["CompositeMetricsReporter", "MetricsReporter", "load_reporter", "load_reporters"]
