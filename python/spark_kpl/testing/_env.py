"""The environment that keeps the AWS SDK and the KPL daemon away from the EC2 metadata address."""

from __future__ import annotations

import os
from typing import Dict, Mapping, Optional

#: Set in every process that runs the KPL or an AWS client during tests, scripts and benchmarks.
LOOPBACK_AWS_ENV: Dict[str, str] = {
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "spark-kpl-local",
    "AWS_SECRET_ACCESS_KEY": "spark-kpl-local",
}


def loopback_env(base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """Return ``base`` (default: ``os.environ``) with :data:`LOOPBACK_AWS_ENV` laid over it."""
    env = dict(os.environ if base is None else base)
    env.update(LOOPBACK_AWS_ENV)
    # A profile or session token from the caller's shell must not override the static keys.
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        env.pop(key, None)
    return env


def apply_loopback_env() -> None:
    """Make this process (and every child it starts, the Spark driver JVM included) loopback-safe."""
    env = loopback_env()
    os.environ.clear()
    os.environ.update(env)
