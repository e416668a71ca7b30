"""The docs site's tools for tests/docs: MkDocs with the Material theme (the ``test`` extra) builds ``mkdocs.yml``,
and Debian's Chromium (``make provision``) loads a built page headless, as a reader's browser would."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from tests.support.engines import INTEROP, REPO


def missing_docs_tool(component: str) -> str | None:
    """Why ``mkdocs`` or ``chromium`` is not usable here (one line), or None when it is."""
    if component == "mkdocs":
        if importlib.util.find_spec("mkdocs") and importlib.util.find_spec("material"):
            return None
        return "mkdocs or mkdocs-material is not installed (the test extra: make)"
    if shutil.which("chromium"):
        return None
    error = INTEROP / "chromium.error"
    return "Debian's chromium is not installed (make provision)" + (
        f": {error.read_text().strip()}" if error.exists() else "")


def build_site(site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the repository's mkdocs.yml into ``site``: any warning fails the build."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
         "--site-dir", str(site)],
        cwd=REPO, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True, timeout=300)


def dump_dom(page: Path, profile: Path) -> str:
    """The DOM of ``page`` once headless Chromium has loaded it (from file://, no network), as HTML."""
    result = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout, result.stderr[-2000:]
    return result.stdout


class Outline(HTMLParser):
    """The headings (level, text) and the text of every ``<pre>`` block of an HTML page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.headings: list[tuple[int, str]] = []
        self.blocks: list[str] = []
        self._heading: tuple[int, list[str]] | None = None
        self._pre: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs) -> None:
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._heading = (int(tag[1]), [])
        elif tag == "pre":
            self._pre = []

    def handle_endtag(self, tag: str) -> None:
        if self._heading is not None and tag == f"h{self._heading[0]}":
            self.headings.append((self._heading[0], "".join(self._heading[1]).strip().rstrip("¶").strip()))
            self._heading = None
        elif tag == "pre" and self._pre is not None:
            self.blocks.append("".join(self._pre))
            self._pre = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading[1].append(data)
        if self._pre is not None:
            self._pre.append(data)
