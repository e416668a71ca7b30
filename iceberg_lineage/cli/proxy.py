"""``iceberg-lineage proxy``: the proxy (the REST-catalog bridge) in front of an Iceberg REST catalog (see
:mod:`iceberg_lineage.proxy`).

Exit codes: 0 stopped by SIGTERM/SIGINT; 1 a worker process failed; 2 usage or configuration error (a listen address
in use included).
"""
from __future__ import annotations

from urllib.parse import urlsplit

import click

from iceberg_lineage.cli.common import profile_option, run_guarded
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.redact import strip_userinfo

def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise click.BadParameter(f"expected HOST:PORT, got {value!r}", param_hint="--listen")
    return host.strip("[]"), int(port)


def parse_properties(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter("expected KEY=VALUE", param_hint="--io-property")  # the value may be a secret
        out[key] = val
    return out


def check_upstream(upstream: str) -> None:
    """An http(s) URL without user information: aiohttp refuses to send an engine's ``Authorization`` beside
    credentials in the URL (every such request would fail), so they are refused at start, and never printed."""
    if not upstream.startswith(("http://", "https://")):
        raise ConfigError("--upstream must be an http:// or https:// URL")
    if "@" in urlsplit(upstream).netloc:
        raise ConfigError(f"--upstream must not carry user information ({strip_userinfo(upstream)} without it): "
                          "engines send their own Authorization; give the proxy's own credentials with "
                          "--io-property credential=... or token=...")


@click.command("proxy")
@click.option("--upstream", metavar="URL", help="The Iceberg REST catalog to pass requests to (proxy.upstream).")
@click.option("--listen", metavar="HOST:PORT", help="Where to listen (proxy.host, proxy.port; default 127.0.0.1:8181).")
@click.option("--public-uri", metavar="URL",
              help="The URI engines use to reach the proxy (default: the listen address); /v1/config points an "
                   "override uri at it, and it names tables in the TABLE symlink.")
@click.option("--depth", type=click.Choice(["summary", "manifest_list", "entries"]),
              help="How far to read each new snapshot (proxy.depth, default summary); deeper than summary reads "
                   "storage with --io-property.")
@click.option("--io-property", "io_properties", multiple=True, metavar="KEY=VALUE",
              help="The proxy's own catalog and FileIO properties (credential=..., s3.*): for its own table loads "
                   "and storage reads, never the engines' credentials.")
@click.option("--workers", type=click.IntRange(1, 64), help="Server processes (proxy.workers, default 1).")
@click.option("--run-idle-timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Seconds without activity after which an engine application's run completes "
                   "(proxy.run_idle_timeout_s, default 300).")
@profile_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def proxy_command(upstream: str | None, listen: str | None, public_uri: str | None, depth: str | None,
                  io_properties: tuple[str, ...], workers: int | None, run_idle_timeout: float | None,
                  profile: str | None, debug: bool) -> None:
    """Pass every request through to an Iceberg REST catalog and report its commits as OpenLineage events."""
    host, port = parse_listen(listen) if listen is not None else (None, None)
    flags = {"proxy.upstream": upstream, "proxy.host": host, "proxy.port": port, "proxy.public_uri": public_uri,
             "proxy.depth": depth, "proxy.io_properties": parse_properties(io_properties) or None,
             "proxy.workers": workers, "proxy.run_idle_timeout_s": run_idle_timeout, "consumer.profile": profile}

    def body() -> int:
        import logging

        from iceberg_lineage.config import load_settings
        from iceberg_lineage.extras import require

        require("the REST bridge", "aiohttp")
        from iceberg_lineage.proxy import serve
        from iceberg_lineage.proxy.server import default_announce

        settings = load_settings(flags=flags)
        options = settings.proxy
        check_upstream(options.upstream or "")
        logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, format="%(levelname)s %(message)s")
        try:
            return serve(settings, announce=default_announce)
        except OSError as exc:
            raise ConfigError(f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}") from None

    run_guarded(debug, body)
