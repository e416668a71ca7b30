"""What a transport's failure means for delivery: one line saying why (never a message: URLs and headers can carry
credentials), and whether the server refused the very event for good."""
from __future__ import annotations

from requests.exceptions import Timeout
from urllib3.exceptions import ResponseError

#: 4xx statuses that say "later", not "never".
_TRANSIENT_4XX = frozenset({408, 429})


class NotSent(Exception):
    """An event was kept without trying to send it (the breaker is open, a deadline passed, a caller asked)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KafkaNotAcknowledged(Exception):
    """The broker did not acknowledge a message: the error of its delivery report (a librdkafka error name such as
    ``_MSG_TIMED_OUT``, never a message text), or no report in time."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RedirectRefused(Exception):
    """The server answered with a redirect that would resend the event as a GET, without its body; ``reason``
    names the status and the target's scheme and host (never its path or query, which may carry a token)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DeadlineExceeded(Timeout):
    """A request did not end by its deadline (connecting, sending and the whole answer: a server that drips its
    answer restarts every socket timeout); its sockets were shut down. ``reason`` says how long it had."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _origin(exc: BaseException) -> BaseException:
    """The error a wrapper re-raised ``from`` (a composite transport wraps its targets' errors)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _status_code(exc: BaseException) -> int | None:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def describe_error(exc: BaseException) -> str:
    exc = _origin(exc)
    name = type(exc).__name__
    if isinstance(exc, (DeadlineExceeded, KafkaNotAcknowledged, NotSent, RedirectRefused)):
        return f"{name}: {exc.reason}"
    status = _status_code(exc)
    if status is not None:
        return f"{name}: HTTP {status}"
    reason = getattr(exc.args[0], "reason", None) if exc.args else None  # urllib3's MaxRetryError in requests'
    if isinstance(reason, ResponseError):
        return f"{name}: {reason}"  # "too many 500 error responses"
    return f"{name}: {type(reason).__name__}" if isinstance(reason, Exception) else name


def is_rejection(exc: BaseException) -> bool:
    """The server refused this very event (a 4xx that retrying will not change)."""
    status = _status_code(_origin(exc))
    return status is not None and 400 <= status < 500 and status not in _TRANSIENT_4XX
