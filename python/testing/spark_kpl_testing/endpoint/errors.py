"""How the endpoint says no: Kinesis's error answers, raised anywhere in a call and answered once."""

from __future__ import annotations

from typing import Optional

__all__ = ["ACCOUNT", "ApiError", "KinesisEndpointError", "rate_exceeded", "stream_not_found"]

#: The account every stream belongs to, as error messages and ARNs name it.
ACCOUNT = "000000000000"


class KinesisEndpointError(RuntimeError):
    """The endpoint could not start, or was used while stopped."""


class ApiError(Exception):
    """A call's error answer: HTTP ``status`` with Kinesis's error ``code`` and ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def stream_not_found(name: str) -> ApiError:
    return ApiError(400, "ResourceNotFoundException", f"Stream {name} under account {ACCOUNT} not found.")


def rate_exceeded(stream: Optional[str]) -> ApiError:
    """A call over its control-plane limit, as Kinesis words it: naming the call's stream if it names one,
    whether the limit is per stream or per account."""
    over = f"stream {stream} under account {ACCOUNT}" if stream else f"account {ACCOUNT}"
    return ApiError(400, "LimitExceededException", f"Rate exceeded for {over}.")
