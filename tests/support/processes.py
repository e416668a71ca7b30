"""Server processes the tests start in a process group of their own (``start_new_session=True``), and the one poll
loop that waits for them (and for anything else a test waits on)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any, Callable


def stop_process_group(process: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM the process and its children (a clean shutdown), SIGKILL them if that takes over ``timeout`` s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_until(condition: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Poll ``condition`` until it is truthy or ``timeout`` passed; its last value."""
    deadline = time.monotonic() + timeout
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(interval)
    return value


def wait_started(process: subprocess.Popen, ready: Callable[[], bool], *, timeout: float, what: str,
                 output: Callable[[], str], stop: Callable[[], None] | None = None) -> None:
    """Wait until a server just started is ``ready()``. If it exits first or ``timeout`` passes, stop it (its
    process group, or ``stop``) and raise a RuntimeError naming ``what`` with the end of its ``output()``."""
    def up() -> str | None:
        return "exited" if process.poll() is not None else "ready" if ready() else None

    if wait_until(up, timeout, interval=0.1) == "ready":
        return
    code = process.poll()
    (stop or (lambda: stop_process_group(process)))()
    why = f"exited with {code}" if code is not None else f"not ready within {timeout:g} s"
    raise RuntimeError(f"{what} did not start ({why}): {output() or 'no output'}")


def log_tail(path: Any, lines: int = 1) -> Callable[[], str]:
    """The last ``lines`` lines of a server's log, read when asked (after the server stopped)."""
    return lambda: " ".join(open(path, errors="replace").read().strip().splitlines()[-lines:])
