"""The KPL's aarch64 daemon (what Graviton nodes run), placed and started by the sink, under qemu-user.

The executor's JVM stays x86_64 but reports ``os.arch=aarch64``, so the sink places the aarch64 daemon
and starts it through its launcher; the kernel hands the aarch64 binary to qemu (binfmt_misc), which
runs it against Debian's arm64 glibc and libuuid (libc6:arm64, libgcc-s1:arm64, libuuid1:arm64, from
scripts/install.sh). Skipped where the kernel has no aarch64 handler: installing qemu-user-static registers
one where systemd runs, not in a container (docs/recipes/graviton.md says how).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import spark_kpl
from spark_kpl_testing.cluster import spark_home
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.env import loopback_env

from example_job import REPO

pytestmark = pytest.mark.one_spark_line

ROWS = 200
#: Registered by the qemu-user-static package where systemd-binfmt runs (or by hand, see docs).
BINFMT_AARCH64 = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")
ARM64_LOADER = Path("/lib/ld-linux-aarch64.so.1")
EM_AARCH64 = 183


def elf_machine(path: Path) -> int:
    """The ELF header's e_machine (bytes 18-19, little-endian)."""
    with path.open("rb") as binary:
        header = binary.read(20)
    return int.from_bytes(header[18:20], "little")


def qemu_runs_aarch64_binaries() -> bool:
    return BINFMT_AARCH64.exists() and BINFMT_AARCH64.read_text().startswith("enabled")


@pytest.mark.skipif(not qemu_runs_aarch64_binaries(),
                    reason=f"no qemu-user handler for aarch64 binaries ({BINFMT_AARCH64}): install qemu-user-static "
                    "on a host whose systemd-binfmt registers it, or register it by hand (docs/recipes/graviton.md)")
@pytest.mark.skipif(not ARM64_LOADER.exists(), reason=f"no arm64 glibc ({ARM64_LOADER}): apt-get install libc6:arm64 "
                    "libgcc-s1:arm64 libuuid1:arm64 after dpkg --add-architecture arm64 (scripts/install.sh)")
def test_the_aarch64_daemon_delivers_every_row_under_qemu(endpoint, ep_stream, tmp_path):
    native_dir = tmp_path / "native"
    env = {**loopback_env(), "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    options = {**endpoint.kpl_options(), "nativeDir": str(native_dir),
               # An emulated daemon answers slowly: give its first requests room.
               "RequestTimeout": "30000"}
    command = [os.path.join(spark_home(), "bin", "spark-submit"), "--master", "local[2]",
               "--jars", str(spark_kpl.jar_path()),
               "--conf", "spark.driver.extraJavaOptions=-Dos.arch=aarch64",
               str(REPO / "scripts" / "example_job.py"), "--stream", ep_stream, "--rows", str(ROWS),
               *(arg for name, value in options.items() for arg in ("--option", f"{name}={value}"))]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0, "\n".join(line for line in run.stderr.splitlines() if " INFO " not in line)[-4000:]

    daemons = list(native_dir.glob("*/kinesis_producer"))
    assert [elf_machine(daemon) for daemon in daemons] == [EM_AARCH64], "the sink placed the aarch64 daemon"
    report = compare({f"row-{i}".encode(): f"key-{i % 10}" for i in range(ROWS)},
                     ((record.data, record.partition_key) for record in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
