"""scripts/bootstrap-action.sh, run as a cluster would run it, twice, into a temporary root."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import spark_kpl
from spark_kpl.native import platform_name

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "bootstrap-action.sh"


@pytest.fixture(scope="module")
def node_python(tmp_path_factory) -> Path:
    """A fresh Python environment standing in for a cluster node's."""
    venv = tmp_path_factory.mktemp("node") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


def bootstrap(node_python: Path, root: Path, native_dir: Path, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), "--jar", str(spark_kpl.jar_path()), "--package", str(REPO / "python"),
         "--root", str(root), "--native-dir", str(native_dir), "--python", str(node_python)],
        capture_output=True, text=True, timeout=600, env=env)


def bundled_daemon_sha256() -> str:
    resource = f"amazon-kinesis-producer-native-binaries/{platform_name()}/kinesis_producer"
    with zipfile.ZipFile(spark_kpl.jar_path()) as jar:
        return hashlib.sha256(jar.read(resource)).hexdigest()


def test_installs_jar_package_and_daemon_and_a_second_run_changes_nothing(node_python, tmp_path):
    root, native_dir = tmp_path / "opt", tmp_path / "native"
    first = bootstrap(node_python, root, native_dir)
    assert first.returncode == 0, first.stderr
    jar = root / "lib" / "spark-kpl.jar"
    assert jar.read_bytes() == spark_kpl.jar_path().read_bytes()
    daemons = list(native_dir.glob("*/kinesis_producer"))
    assert len(daemons) == 1 and os.access(daemons[0], os.X_OK)
    assert hashlib.sha256(daemons[0].read_bytes()).hexdigest() == bundled_daemon_sha256()
    placed = subprocess.run([str(node_python), "-c", "import spark_kpl.native; print('ok')"],
                            capture_output=True, text=True, check=True)
    assert placed.stdout.strip() == "ok"

    jar_inode, daemon_inode = jar.stat().st_ino, daemons[0].stat().st_ino
    second = bootstrap(node_python, root, native_dir)
    assert second.returncode == 0, second.stderr
    assert "already in place" in second.stdout
    assert (jar.stat().st_ino, daemons[0].stat().st_ino) == (jar_inode, daemon_inode)


def test_refuses_a_node_whose_glibc_is_too_old_with_a_clear_message(node_python, tmp_path):
    shims = tmp_path / "shims"
    shims.mkdir()
    getconf = shims / "getconf"
    getconf.write_text("#!/bin/sh\necho 'glibc 2.5'\n")
    getconf.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    result = bootstrap(node_python, tmp_path / "opt", tmp_path / "native", env=env)
    assert result.returncode != 0
    assert "glibc 2.5" in result.stderr and "needs glibc" in result.stderr
    assert not (tmp_path / "opt").exists(), "nothing is installed on a node that cannot run the daemon"
