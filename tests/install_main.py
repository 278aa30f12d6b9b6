"""InstallMain (jvm/src/testPrograms) compiled against a jar: NativeDaemon as executors run it."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import zipfile
from pathlib import Path

import pyspark

REPO = Path(__file__).resolve().parents[1]


def install_main_classpath(jar: Path, folder: Path) -> str:
    """Compile InstallMain into ``folder/classes`` and return the classpath that runs it with ``jar``.

    Every part is readable by other users when ``folder`` and ``jar`` are, so InstallMain can run as
    another user too.
    """
    classes = folder / "classes"
    javac = subprocess.run(
        ["javac", "--release", "17", "-Werror", "-d", str(classes), "-cp", str(jar),
         str(REPO / "jvm/src/testPrograms/java/sparkkpl/natives/InstallMain.java")],
        capture_output=True, text=True,
    )
    assert javac.returncode == 0, javac.stderr
    spark_jars = Path(pyspark.__file__).parent / "jars"
    slf4j = next(spark_jars.glob("slf4j-api-*.jar"))  # the KPL logs through it; Spark provides it
    return os.pathsep.join(map(str, [classes, jar, slf4j]))


def bundled_daemon_resource() -> str:
    """The daemon the jar carries for this Linux host, named as the KPL names its platforms."""
    return f"amazon-kinesis-producer-native-binaries/linux-{platform.machine()}/kinesis_producer"


def bundled_daemon_sha256(jar: Path) -> str:
    with zipfile.ZipFile(jar) as archive:
        return hashlib.sha256(archive.read(bundled_daemon_resource())).hexdigest()
