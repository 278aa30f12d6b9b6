"""An opt-in IAM check: with a policy set, the endpoint answers any action it does not grant with
``AccessDeniedException``, worded as Kinesis words it, so that a minimal policy can be proven enough."""

from __future__ import annotations

import json
import threading
from typing import Any, FrozenSet, Iterable, Mapping, Optional, Set
from urllib.parse import parse_qs

from spark_kpl_testing.endpoint.errors import ACCOUNT, ApiError

__all__ = ["Policy", "cloudwatch_action", "granted_actions"]


def granted_actions(document: Mapping[str, Any]) -> FrozenSet[str]:
    """The actions an IAM policy document's ``Allow`` statements grant (resources are not checked)."""
    statements = document["Statement"]
    actions: Set[str] = set()
    for statement in statements if isinstance(statements, list) else [statements]:
        if statement.get("Effect") == "Allow":
            action = statement["Action"]
            actions.update([action] if isinstance(action, str) else action)
    return frozenset(actions)


class Policy:
    """The actions the callers may perform; None (the default) grants everything."""

    def __init__(self, region: str) -> None:
        self._region = region
        self._lock = threading.Lock()
        self._granted: Optional[FrozenSet[str]] = None

    def grant_only(self, actions: Optional[Iterable[str]]) -> None:
        with self._lock:
            self._granted = None if actions is None else frozenset(actions)

    def check(self, action: str, access_key_id: str, body: bytes) -> None:
        """Raise Kinesis's ``AccessDeniedException`` unless ``action`` (``kinesis:PutRecords``) is granted."""
        with self._lock:
            granted = self._granted
        if granted is None or action in granted:
            return
        raise ApiError(400, "AccessDeniedException",
                       f"User: arn:aws:iam::{ACCOUNT}:user/{access_key_id} is not authorized to perform: {action} "
                       f"on resource: {self._resource(action, body)} because no identity-based policy allows the "
                       f"{action} action")

    def _resource(self, action: str, body: bytes) -> str:
        if not action.startswith("kinesis:"):
            return "*"
        try:
            stream = json.loads(body or b"{}").get("StreamName", "*")
        except ValueError:
            stream = "*"
        return f"arn:aws:kinesis:{self._region}:{ACCOUNT}:stream/{stream}"


def cloudwatch_action(target: str, path: str, body: bytes) -> str:
    """The CloudWatch action of a call: in the JSON protocol by its target, in RPC v2 CBOR (the KPL's
    C++ SDK) by its path's last segment, in the query protocol by the body's ``Action``."""
    if target:
        return "cloudwatch:" + target.rsplit(".", 1)[-1]
    if "/operation/" in path:
        return "cloudwatch:" + path.rstrip("/").rsplit("/", 1)[-1]
    names = parse_qs(body.decode("utf-8", "replace")).get("Action", ["(unknown)"])
    return "cloudwatch:" + names[0]
