"""As EMR users run it: spark-submit to a real YARN (ResourceManager, NodeManager) with HDFS, in client
and cluster deploy mode, the commands taken as written from docs/recipes/yarn-emr.md. One cluster for
the module (it takes about a minute to start); one Spark line is enough (nothing here changes between
Spark lines). ``scripts/build.sh miniHadoop`` fetches Hadoop's mini clusters (scripts/test.sh does)."""

from __future__ import annotations

import base64
import getpass
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, List, Set

import pytest

import spark_kpl
from spark_kpl import dedup
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.endpoint import Faults
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.yarn import MiniHadoop

pytestmark = [pytest.mark.one_spark_line]

REPO = Path(__file__).resolve().parents[3]
RECIPE = REPO / "docs" / "recipes" / "yarn-emr.md"
JOB = REPO / "scripts" / "example_job.py"
DAEMON = "kinesis_producer"


def recipe_command(name: str) -> str:
    """The bash block after ``<!-- run: name -->`` in the recipe."""
    found = re.search(rf"<!-- run: {name} -->\n```bash\n(.*?)```", RECIPE.read_text(), re.S)
    assert found, f"{RECIPE} has no block marked run: {name}"
    return found.group(1)


@pytest.fixture(scope="module")
def hadoop() -> Iterator[MiniHadoop]:
    with MiniHadoop(node_managers=1) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Dict[str, str]:
    """What a user uploads: the jar and the Python package as a wheel."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(REPO / "python")], check=True, timeout=300)
    return {"JAR": str(spark_kpl.jar_path()), "WHEEL": str(next(out.glob("spark_kpl-*.whl")))}


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python without spark_kpl (nor pyspark): the package must come with the submit."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


@pytest.fixture(scope="module")
def node_tmp(tmp_path_factory) -> Path:
    """The node's temp dir (TMPDIR of the containers): ours, so that only this module's daemons are in it."""
    folder = tmp_path_factory.mktemp("node-tmp")
    folder.chmod(0o755)
    return folder


class DaemonWatch:
    """Every daemon binary the cluster's containers run, sampled while a submit runs."""

    def __init__(self, hadoop: MiniHadoop) -> None:
        self.hadoop = hadoop
        self.seen: Set[Path] = set()
        self.executors: Set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "DaemonWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._done.wait(0.3):
            self.seen |= self.hadoop.daemon_binaries()
            self.executors |= set(self.hadoop.executor_pids())


def submit(hadoop: MiniHadoop, spark_conf: Dict[str, str], variables: Dict[str, str]) -> Dict[str, object]:
    """The recipe's submit command; the write's RESULT (client mode: printed by the driver here;
    cluster mode: from the ApplicationMaster's container log)."""
    env = {**hadoop.submit_env(spark_conf), **variables, "JOB": str(JOB)}
    run = subprocess.run(["bash", "-c", recipe_command("submit")], capture_output=True, text=True, env=env,
                         timeout=600)
    problems = [line for line in run.stderr.splitlines() if " INFO " not in line]
    assert run.returncode == 0, "\n".join(problems[-60:]) + run.stdout[-2000:]
    results = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    if variables["DEPLOY_MODE"] == "cluster":
        results = [line for log in hadoop.node_manager_dirs.rglob("stdout")
                   for line in log.read_text(errors="replace").splitlines() if line.startswith("RESULT ")
                   and app_id(run.stderr) in str(log)]
    assert len(results) == 1, (results, run.stdout[-2000:])
    return json.loads(results[0].split(" ", 1)[1])


def app_id(submit_log: str) -> str:
    found = re.search(r"application_\d+_\d+", submit_log)
    assert found, submit_log[-2000:]
    return found.group(0)


def job_conf(hadoop, endpoint, python, node_tmp, **kpl) -> Dict[str, str]:
    conf = hadoop.spark_conf(python)
    conf["spark.executorEnv.TMPDIR"] = str(node_tmp)
    conf.update({f"spark.kpl.{name}": value for name, value in {**endpoint.kpl_options(), **kpl}.items()})
    return conf


def expected_rows(count: int) -> Dict[bytes, str]:
    """What scripts/example_job.py writes."""
    return {f"row-{i}".encode(): f"key-{i % 10}" for i in range(count)}


def daemons_in_containers(hadoop: MiniHadoop, seen: Set[Path]) -> List[Path]:
    return sorted(path for path in seen if str(path).startswith(str(hadoop.node_manager_dirs)))


@pytest.mark.parametrize("deploy_mode", ["client", "cluster"])
def test_spark_submit_to_yarn_writes_every_row_once_and_containers_share_one_daemon(
        hadoop, endpoint, ep_stream, shipped, bare_python, node_tmp, deploy_mode):
    rows = 200_000
    conf = job_conf(hadoop, endpoint, bare_python, node_tmp)
    started = time.monotonic()
    with DaemonWatch(hadoop) as watch:
        result = submit(hadoop, conf, {**shipped, "DEPLOY_MODE": deploy_mode, "STREAM": ep_stream,
                                       "ROWS": str(rows)})
    elapsed = time.monotonic() - started
    report = compare(expected_rows(rows), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    print(f"{deploy_mode} mode: {result['records_written']} written, {report.summary()}, {elapsed:.0f} s, "
          f"daemons run from {sorted(watch.seen)} by {len(watch.executors)} executors")
    assert result["records_written"] == rows
    assert report.exactly_once, report.summary()
    assert len(watch.executors) >= 2, watch.executors
    # One copy per user on the node, outside every container's folder (which YARN deletes at its end).
    assert not daemons_in_containers(hadoop, watch.seen), f"daemons placed in containers: {sorted(watch.seen)}"
    assert watch.seen == {shared_daemon(node_tmp)}, watch.seen


def shared_daemon(node_tmp: Path) -> Path:
    """The one copy a user's containers on the node place, under the node's temp dir."""
    placed = list((node_tmp / f"spark-kpl-{getpass.getuser()}").glob(f"*/{DAEMON}"))
    assert len(placed) == 1, placed
    return placed[0]


def test_containers_run_the_daemon_the_bootstrap_action_placed_and_dead_letters_go_to_hdfs(
        hadoop, endpoint, ep_stream, shipped, bare_python, node_tmp, tmp_path):
    # One application for both (each costs ~2 minutes here): the bootstrap action's nativeDir, and
    # deadLetterPath on HDFS, as the recipe sets a job up.
    native_dir = node_tmp / "bootstrap-native"
    variables = {**shipped, "BOOTSTRAP_ACTION": str(REPO / "scripts" / "bootstrap-action.sh"),
                 "ROOT": str(tmp_path / "root"), "NATIVE_DIR": str(native_dir),
                 "NODE_PYTHON": str(node_python(tmp_path))}
    run = subprocess.run(["bash", "-c", recipe_command("bootstrap")], capture_output=True, text=True,
                         env={**os.environ, **variables}, timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    placed = next(native_dir.glob(f"*/{DAEMON}"))
    placed_as = placed.stat()
    dead = f"{hadoop.hdfs_url}/user/{getpass.getuser()}/kpl-dead-letters"
    # row-0 .. row-999 with their keys fit in 12 bytes; row-1000 .. row-1999 do not.
    conf = {**job_conf(hadoop, endpoint, bare_python, node_tmp, failOnError="false", deadLetterPath=dead,
                       maxRecordBytes="12"),
            "spark.kpl.nativeDir": str(native_dir)}
    with DaemonWatch(hadoop) as watch:
        result = submit(hadoop, conf, {**shipped, "DEPLOY_MODE": "cluster", "STREAM": ep_stream, "ROWS": "2000"})
    assert watch.seen == {placed}, watch.seen
    assert (placed.stat().st_ino, placed.stat().st_ctime_ns) == (placed_as.st_ino, placed_as.st_ctime_ns)
    assert (result["records_written"], result["records_failed"]) == (1000, 1000)
    letters = [json.loads(line) for line in hadoop.fs_shell("-cat", f"{dead}/*").splitlines() if line.startswith("{")]
    assert sorted(base64.b64decode(letter["data"]) for letter in letters) == sorted(
        f"row-{i}".encode() for i in range(1000, 2000))
    assert {letter["errorCode"] for letter in letters} == {"RecordTooLarge"}
    assert ".inprogress" not in hadoop.fs_shell("-ls", "-R", dead)
    report = compare(expected_rows(1000), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()


def node_python(tmp_path: Path) -> Path:
    """A fresh Python environment with pip, as on a node that never had the package."""
    venv = tmp_path / "node-venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


def test_an_executor_container_killed_mid_write_loses_nothing_and_duplicates_carry_their_record_id(
        hadoop, endpoint, ep_stream, shipped, bare_python, node_tmp):
    rows = 6000
    # Unaggregated and throttled to 300 records/s per shard: the write lasts ~10 s, the kill finds
    # records in flight in the killed executor's daemon.
    endpoint.set_faults(Faults(shard_records_per_second=300))
    conf = job_conf(hadoop, endpoint, bare_python, node_tmp, recordId="prefix", AggregationEnabled="false",
                    RecordTtl="120000")
    outcome: Dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = submit(hadoop, conf, {**shipped, "DEPLOY_MODE": "client", "STREAM": ep_stream,
                                                      "ROWS": str(rows)})
        except BaseException as failure:  # noqa: BLE001 - reported by the test's thread below
            outcome["error"] = failure

    writer = threading.Thread(target=run, daemon=True)
    with DaemonWatch(hadoop) as watch:
        writer.start()
        stored_at_kill = wait_for(lambda: len(endpoint.records(ep_stream)) >= 600 and len(endpoint.records(ep_stream)),
                                  300, "the write to be under way")
        victim = hadoop.executor_pids()[0]
        victims_container = Path(os.readlink(f"/proc/{victim}/cwd"))
        shared = shared_daemon(node_tmp)
        shared_as = shared.stat()
        os.kill(victim, signal.SIGKILL)
        # The NodeManager cleans up the dead container while the other executors' daemons keep running.
        wait_for(lambda: not victims_container.exists(), 120, f"{victims_container} to be cleaned up")
        writer.join(timeout=400)
    assert not writer.is_alive(), "the submit did not finish"
    assert "error" not in outcome, outcome.get("error")
    assert rows - stored_at_kill >= 1000, f"only {rows - stored_at_kill} records could be in flight at the kill"
    result = outcome["result"]
    assert isinstance(result, dict) and result["records_written"] == rows and result["records_failed"] == 0
    records = endpoint.records(ep_stream)
    first_of_each: Dict[bytes, object] = {}
    for record in records:
        first_of_each.setdefault(dedup.record_id(record.data), record)
    duplicates = len(records) - len(first_of_each)
    print(f"killed executor {victim} with {stored_at_kill} of {rows} stored; {len(records)} records arrived, "
          f"{duplicates} duplicates by record id")
    report = compare(expected_rows(rows), ((dedup.strip(r.data), r.partition_key) for r in first_of_each.values()))
    assert report.exactly_once, report.summary()
    assert watch.seen == {shared}, watch.seen
    assert (shared.stat().st_ino, shared.stat().st_ctime_ns) == (shared_as.st_ino, shared_as.st_ctime_ns)
