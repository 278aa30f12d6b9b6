"""EMR's two users on one node: the bootstrap action runs as ``hadoop``, the executors as ``yarn``.

Two throwaway users stand in for them. The daemon is placed as one (with ``sparkkpl.tools.PlaceDaemon``,
what scripts/bootstrap-action.sh runs); a spark-submit job as the other writes to the project's endpoint
as a YARN container would run it (``CONTAINER_ID`` and ``TMPDIR`` set). Every row must arrive once,
whichever user placed the daemon.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Iterator, List, NamedTuple

import pytest

import spark_kpl
from spark_kpl_testing.cluster import spark_home
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.env import loopback_env

from example_job import REPO

pytestmark = [pytest.mark.root_only, pytest.mark.one_spark_line]

ROWS = 300
#: Names no real account would have; removed with their files afterwards.
PLACER, EXECUTOR = "skpl-hadoop", "skpl-yarn"
OS_PYTHON = Path("/usr/bin/python3")


class Node(NamedTuple):
    #: The node's temp folder (every user may enter it), the YARN containers' ``TMPDIR``.
    tmp: Path
    #: The jar, where both users can read it, as the bootstrap action installs it.
    jar: Path
    placer: pwd.struct_passwd
    executor: pwd.struct_passwd


def _add_user(name: str) -> pwd.struct_passwd:
    subprocess.run(["userdel", name], capture_output=True)  # a leftover of an interrupted run
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    return pwd.getpwnam(name)


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    if shutil.which("useradd") is None:
        pytest.skip("needs useradd to make the two users")
    if not OS_PYTHON.exists() or subprocess.run([str(OS_PYTHON), "-c", "import sys; assert sys.version_info[:2] == "
                                                 f"{tuple(sys.version_info[:2])}"]).returncode:
        pytest.skip(f"the other user runs the job with {OS_PYTHON}, which must be Python "
                    f"{sys.version_info.major}.{sys.version_info.minor} as this venv's pyspark is")
    tmp = Path(tempfile.mkdtemp(prefix="spark-kpl-two-users-"))
    tmp.chmod(0o1777)  # as /tmp
    jar = Path(shutil.copy(spark_kpl.jar_path(), tmp / "spark-kpl.jar"))
    jar.chmod(0o644)
    placer, executor = _add_user(PLACER), _add_user(EXECUTOR)
    try:
        yield Node(tmp, jar, placer, executor)
    finally:
        for name in (PLACER, EXECUTOR):
            subprocess.run(["userdel", name], check=True)
        shutil.rmtree(tmp)


def run_as(user: pwd.struct_passwd, command: List[str], cwd: str = "/", **options: Any) -> subprocess.CompletedProcess:
    return subprocess.run(command, user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd=cwd,
                          capture_output=True, text=True, **options)


def place_daemon(node: Node, user: pwd.struct_passwd, *folder: str) -> Path:
    """PlaceDaemon as ``user``, as the bootstrap action runs it: into ``folder``, else the user's default."""
    placed = run_as(user, ["java", f"-Djava.io.tmpdir={node.tmp}", "-cp", str(node.jar), "sparkkpl.tools.PlaceDaemon",
                           *folder], timeout=120, env=loopback_env())
    assert placed.returncode == 0, placed.stderr
    return Path(placed.stdout.strip())


def submit_as_executor(node: Node, endpoint, stream: str, *conf: str,
                       java_options: str = "") -> subprocess.CompletedProcess:
    """The example job in local mode as the executors' user, its environment as in a YARN container;
    ``java_options`` added to the driver JVM's, which runs the tasks."""
    home = node.tmp / "executor-home"
    home.mkdir(exist_ok=True)
    os.chown(home, node.executor.pw_uid, node.executor.pw_gid)
    local_dir = home / "container"
    local_dir.mkdir(exist_ok=True)
    os.chown(local_dir, node.executor.pw_uid, node.executor.pw_gid)
    env = {**loopback_env(), "HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           # What YARN gives a container, and Spark then requires.
           "TMPDIR": str(node.tmp), "CONTAINER_ID": "container_1_0001_01_000002", "LOCAL_DIRS": str(local_dir),
           # The test's Python lives under /root; the OS's (the same minor version) runs the job with
           # this venv's pyspark and the checkout's package.
           "PYSPARK_PYTHON": str(OS_PYTHON), "PYSPARK_DRIVER_PYTHON": str(OS_PYTHON),
           "PYTHONPATH": os.pathsep.join([sysconfig.get_paths()["purelib"], str(REPO / "python")])}
    options = [arg for name, value in endpoint.kpl_options().items() for arg in ("--option", f"{name}={value}")]
    command = [os.path.join(spark_home(), "bin", "spark-submit"), "--master", "local[2]", "--jars", str(node.jar),
               "--conf", f"spark.driver.extraJavaOptions=-Djava.io.tmpdir={home} {java_options}", *conf,
               str(REPO / "scripts" / "example_job.py"), "--stream", stream, "--rows", str(ROWS), *options]
    return run_as(node.executor, command, cwd=str(home), timeout=300, env=env)


def assert_every_row_once(endpoint, stream: str, run: subprocess.CompletedProcess) -> None:
    assert run.returncode == 0, "\n".join(line for line in run.stderr.splitlines() if " INFO " not in line)[-4000:]
    report = compare({f"row-{i}".encode(): f"key-{i % 10}" for i in range(ROWS)},
                     ((record.data, record.partition_key) for record in endpoint.records(stream)))
    assert report.exactly_once, report.summary()


def test_daemon_placed_by_another_user_leaves_the_executors_to_place_their_own(node, endpoint, ep_stream):
    # The bootstrap action run as hadoop, without --executor-user: the daemon lands in hadoop's folder.
    placed = place_daemon(node, node.placer)
    assert placed.parent.parent == node.tmp / f"spark-kpl-{PLACER}"
    inode = placed.stat().st_ino

    run = submit_as_executor(node, endpoint, ep_stream)
    assert_every_row_once(endpoint, ep_stream, run)
    own = node.tmp / f"spark-kpl-{EXECUTOR}"
    assert [path.stat().st_uid for path in own.glob("*/kinesis_producer")] == [node.executor.pw_uid]
    assert placed.stat().st_ino == inode, "hadoop's copy was left as it was"


def test_daemon_placed_for_the_executors_user_is_the_one_they_run(node, endpoint, ep_stream):
    # The bootstrap action under sudo with --executor-user yarn --native-dir: placed as yarn, in a folder
    # made for yarn, which spark.kpl.nativeDir then names.
    native_dir = node.tmp / "native"
    native_dir.mkdir(mode=0o700)
    os.chown(native_dir, node.executor.pw_uid, node.executor.pw_gid)
    placed = place_daemon(node, node.executor, str(native_dir))
    inode = placed.stat().st_ino

    run = submit_as_executor(node, endpoint, ep_stream, "--conf", f"spark.kpl.nativeDir={native_dir}")
    assert_every_row_once(endpoint, ep_stream, run)
    assert [daemon.stat().st_ino for daemon in native_dir.glob("*/kinesis_producer")] == [inode]


def test_a_native_dir_placed_as_another_user_is_passed_over_for_the_executors_own(node, endpoint, ep_stream):
    # spark.kpl.nativeDir naming the folder the bootstrap action filled as hadoop: another user's folder,
    # whose binary hadoop could swap. The executors say so once and place their own copy in their own
    # folder, leaving hadoop's as it was.
    native_dir = node.tmp / "hadoop-native"
    native_dir.mkdir(mode=0o700)
    os.chown(native_dir, node.placer.pw_uid, node.placer.pw_gid)
    placed = place_daemon(node, node.placer, str(native_dir))
    before = sorted((path.name, path.stat().st_ino, path.stat().st_mtime_ns) for path in native_dir.rglob("*"))

    run = submit_as_executor(node, endpoint, ep_stream, "--conf", f"spark.kpl.nativeDir={native_dir}")
    assert_every_row_once(endpoint, ep_stream, run)
    own = node.tmp / f"spark-kpl-{EXECUTOR}"
    assert [path.stat().st_uid for path in own.glob("*/kinesis_producer")] == [node.executor.pw_uid]
    passed_over = [line for line in run.stderr.splitlines() if f"Not running the KPL daemon from {native_dir}" in line]
    assert len(passed_over) == 1 and "spark.kpl.nativeDir" in passed_over[0] and str(own) in passed_over[0], run.stderr
    assert sorted((path.name, path.stat().st_ino, path.stat().st_mtime_ns) for path in native_dir.rglob("*")) == before
    assert placed.stat().st_uid == node.placer.pw_uid


def test_no_folder_of_the_executors_own_left_is_refused_with_the_setting_named(node, endpoint, ep_stream):
    # Another user made every folder the executors could fall back to: nowhere is safe to run from, so the
    # write is refused before any row is sent.
    uid = node.executor.pw_uid
    squatted = [node.tmp / "hadoop-only", node.tmp / f"spark-kpl-{EXECUTOR}-squatted",
                node.tmp / f"spark-kpl-{EXECUTOR}-squatted-{uid}"]
    for folder in squatted:
        folder.mkdir(mode=0o700)
        os.chown(folder, node.placer.pw_uid, node.placer.pw_gid)
    try:
        # The sink names the executors' default folder after user.name: one the other user made already.
        run = submit_as_executor(node, endpoint, ep_stream, "--conf", f"spark.kpl.nativeDir={squatted[0]}",
                                 java_options=f"-Duser.name={EXECUTOR}-squatted")
    finally:
        for folder in squatted:
            shutil.rmtree(folder)
    assert run.returncode != 0
    assert f"Cannot install the KPL native daemon in {squatted[2]}" in run.stderr, run.stderr[-4000:]
    assert "spark.kpl.nativeDir" in run.stderr
    assert endpoint.records(ep_stream) == []
