"""The environment every process started by the harness gets: loopback-safe AWS settings (the AWS SDK
and the KPL daemon otherwise ask the EC2 metadata address for a region and credentials), and a
PYTHONPATH that finds the project's packages from any working directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Mapping, Optional

import spark_kpl

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


#: Where the AWS SDKs and the KPL daemon find a region or credentials before the instance's metadata.
_AWS_CHAIN_KEYS = (*LOOPBACK_AWS_ENV, "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
                   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")


def instance_metadata_env(metadata_url: str, empty_dir: Path) -> Dict[str, str]:
    """This process's environment as on an EC2 instance with nothing configured: no region, keys or
    profile (the AWS config and credentials files point into ``empty_dir``, where there are none), the
    instance metadata at ``metadata_url``. Only for processes in a network namespace with loopback
    alone, where the real metadata address cannot be reached."""
    env = {key: value for key, value in os.environ.items() if key not in _AWS_CHAIN_KEYS}
    env.update(AWS_EC2_METADATA_SERVICE_ENDPOINT=metadata_url, AWS_CONFIG_FILE=str(empty_dir / "aws-config"),
               AWS_SHARED_CREDENTIALS_FILE=str(empty_dir / "aws-credentials"))
    return env


def apply_loopback_env() -> None:
    """Make this process (and every child it starts, the Spark driver JVM included) loopback-safe."""
    env = loopback_env()
    os.environ.clear()
    os.environ.update(env)


def python_path() -> str:
    """The caller's PYTHONPATH made absolute, plus the folders holding ``spark_kpl`` and this harness.

    Executors and child drivers run with another working directory, so a relative entry
    (``PYTHONPATH=python``) would not find the packages there.
    """
    entries = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    entries += [str(Path(spark_kpl.__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1])]
    return os.pathsep.join(dict.fromkeys(entries))
