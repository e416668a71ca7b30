"""Server processes the tests start in a process group of their own (``start_new_session=True``)."""
from __future__ import annotations

import os
import signal
import subprocess


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
