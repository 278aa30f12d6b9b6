"""The suite's Kinesis in a container, through testcontainers, where a Docker engine exists.

Opt-in: ``SPARK_KPL_KINESIS=localstack scripts/test.sh`` runs the end-to-end tests against
LocalStack instead of the embedded kinesis-mock. Not run on machines without a Docker engine
(this project's CI has none), so the embedded emulator stays the default.
"""

from __future__ import annotations

from typing import Any, Optional

from spark_kpl_testing.env import LOOPBACK_AWS_ENV
from spark_kpl_testing.kinesis import LocalKinesis

#: Pinned: LocalStack serves Kinesis, HTTP and HTTPS alike, on its edge port.
LOCALSTACK_IMAGE = "localstack/localstack:3.8.1"
EDGE_PORT = 4566


class LocalStackKinesis(LocalKinesis):
    """:class:`LocalKinesis`'s interface (kpl_options, streams, read_records) over LocalStack."""

    def __init__(self, region: str = "us-east-1") -> None:
        super().__init__(region=region)
        self._container: Optional[Any] = None

    def _start(self) -> None:
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.waiting_utils import wait_for_logs

        container = (DockerContainer(LOCALSTACK_IMAGE).with_exposed_ports(EDGE_PORT)
                     .with_env("SERVICES", "kinesis").with_env("AWS_DEFAULT_REGION", self.region))
        for key, value in LOOPBACK_AWS_ENV.items():
            container = container.with_env(key, value)
        container.start()
        self._container = container
        wait_for_logs(container, "Ready.", timeout=120)
        port = int(container.get_exposed_port(EDGE_PORT))
        self._ports = (port, port)  # the edge port speaks both TLS and plain HTTP

    def _stop(self) -> None:
        self._close_clients()
        container, self._container = self._container, None
        if container is not None:
            container.stop()
        self._ports = None
