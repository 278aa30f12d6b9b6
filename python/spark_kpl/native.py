"""Place the KPL's native daemon from Python, e.g. in a cluster bootstrap action.

The placement is the jar's own, ``sparkkpl.tools.PlaceDaemon``, run in a JVM: the code executors
run, so a bootstrap action places the daemon exactly where, and as, they look for it. Every node that
runs executors has a Java runtime (EMR's and Glue's images do), and so does a classic PySpark driver;
a Spark Connect client needs no daemon, which runs on the server's executors.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Union

from spark_kpl._facts import OPTIONS, PLACE_DAEMON_MAIN, PLACE_DAEMON_REFUSAL_PREFIX

#: The Spark config key that moves the folder on the executors; ``--dir`` must match it.
NATIVE_DIR_CONF = OPTIONS["NATIVE_DIR"].config_key
#: What PlaceDaemon puts before a refusal; this module's own errors carry it once, from the CLI.
_MESSAGE_PREFIX = PLACE_DAEMON_REFUSAL_PREFIX

PathLike = Union[str, "os.PathLike[str]"]


class NativeDaemonError(RuntimeError):
    """The daemon could not be placed; a refused folder is named with :data:`NATIVE_DIR_CONF`."""


def install(dir: Optional[PathLike] = None, jar: Optional[PathLike] = None) -> Path:
    """Place the KPL daemon from ``jar`` under ``dir`` if needed; return the verified executable.

    Parameters
    ----------
    dir
        The folder, as ``spark.kpl.nativeDir`` names it for the executors (default: where they look when
        it is unset, ``<java.io.tmpdir>/spark-kpl-<user>``). Created ``0700``; refused if it is a
        symbolic link, someone else's, or writable by others.
    jar
        The spark-kpl jar (default: :func:`spark_kpl.jar_path`).

    Examples
    --------
    >>> from spark_kpl.native import install
    >>> install()  # doctest: +SKIP
    PosixPath('/tmp/spark-kpl-hadoop/6cceb1a730cbb2a8/kinesis_producer')
    """
    jar = _default_jar() if jar is None else Path(jar)
    if not jar.is_file():
        raise NativeDaemonError(f"Cannot read the spark-kpl jar {jar}: no such file")
    command = [_java(), "-cp", str(jar), PLACE_DAEMON_MAIN]
    if dir is not None:
        command.append(os.path.abspath(dir))
    placed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    if placed.returncode != 0:
        reason = placed.stderr.strip() or f"{PLACE_DAEMON_MAIN} exited with status {placed.returncode}"
        raise NativeDaemonError(reason.replace(_MESSAGE_PREFIX, "", 1))
    return Path(placed.stdout.strip().splitlines()[-1])


def cli_extract_native(args: argparse.Namespace) -> int:
    """``python -m spark_kpl extract-native [--dir DIR] [--jar JAR]``: place the daemon, print its path."""
    try:
        print(install(args.dir, args.jar))
    except NativeDaemonError as error:
        print(f"{_MESSAGE_PREFIX}{error}", file=sys.stderr)
        return 1
    return 0


def _java() -> str:
    """The JVM Spark itself would start: ``$JAVA_HOME/bin/java``, else ``java`` on the PATH."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if java is None or not os.access(java, os.X_OK):
        raise NativeDaemonError(
            "Placing the KPL native daemon runs the spark-kpl jar's own placement, which needs a Java runtime:"
            f" found none ({'JAVA_HOME=' + java_home if java_home else 'JAVA_HOME unset, no java on PATH'})"
        )
    return java


def _default_jar() -> Path:
    from spark_kpl import jar_path

    return jar_path()
