"""What of the platform recipes (docs/recipes/glue.md, databricks.md, kubernetes.md) runs without the platform:
Glue's job script with stand-ins for its modules, Databricks' init script, and the Kubernetes Dockerfile's
references (there is no Docker engine here to build it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Dict, List

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.env import loopback_env

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "kubernetes" / "Dockerfile"
INIT_SCRIPT = REPO / "deploy" / "databricks" / "spark-kpl-init.sh"
VERSION = (REPO / "python" / "spark_kpl" / "VERSION").read_text().strip()


def marked_block(doc: Path, name: str, language: str) -> str:
    found = re.search(rf"<!-- run: {name} -->\n```{language}\n(.*?)```", doc.read_text(), re.S)
    assert found, f"{doc.relative_to(REPO)} has no {language} block marked run: {name}"
    return found.group(1)


# ---------------------------------------------------------------------------------------------- Glue


def glue_modules(spark) -> Dict[str, types.ModuleType]:
    """``awsglue.context``, ``.job`` and ``.utils`` as far as the recipe's script uses them: Glue's
    session is the one already running, as on Glue."""
    context, job, utils = (types.ModuleType(f"awsglue.{name}") for name in ("context", "job", "utils"))

    class GlueContext:
        def __init__(self, spark_context) -> None:
            assert spark_context is spark.sparkContext
            self.spark_session = spark

    class Job:
        def __init__(self, glue_context: GlueContext) -> None:
            self.states: List[str] = []

        def init(self, name: str, args: Dict[str, str]) -> None:
            self.states.append("init")

        def commit(self) -> None:
            self.states.append("commit")

    def get_resolved_options(argv: List[str], names: List[str]) -> Dict[str, str]:
        given = dict(zip(argv[1::2], argv[2::2]))
        return {name: given[f"--{name}"] for name in names}

    context.GlueContext = GlueContext  # type: ignore[attr-defined]
    job.Job = Job  # type: ignore[attr-defined]
    utils.getResolvedOptions = get_resolved_options  # type: ignore[attr-defined]
    return {"awsglue": types.ModuleType("awsglue"), "awsglue.context": context, "awsglue.job": job,
            "awsglue.utils": utils}


def test_the_glue_job_runs_as_written(spark, endpoint, ep_stream, tmp_path, monkeypatch, capsys):
    events = [{"user_id": i % 7, "page": f"page-{i}", "ms": i} for i in range(300)]
    source = tmp_path / "events"
    source.mkdir()
    (source / "part-0.json").write_text("".join(json.dumps(event) + "\n" for event in events))
    for name, module in glue_modules(spark).items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(sys, "argv", ["glue-job.py", "--JOB_NAME", "clicks-to-kinesis", "--source_path", str(source),
                                      "--stream_name", ep_stream, "--region", endpoint.region])
    # Where the job writes: the endpoint, as spark.kpl.* keys beside the script (Glue's would be Kinesis).
    endpoint_keys = {f"spark.kpl.{name}": value for name, value in endpoint.kpl_options().items() if name != "Region"}
    for key, value in endpoint_keys.items():
        spark.conf.set(key, value)
    try:
        exec(compile(marked_block(REPO / "docs/recipes/glue.md", "glue-job", "python"), "glue-job.py", "exec"), {})
    finally:
        for key in endpoint_keys:
            spark.conf.unset(key)

    assert "written 300, failed 0" in capsys.readouterr().out
    expected = {json.dumps({"ms": e["ms"], "page": e["page"], "user_id": str(e["user_id"])}, separators=(",", ":"))
                .encode(): str(e["user_id"]) for e in events}
    report = compare(expected, ((record.data, record.partition_key) for record in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()


# ---------------------------------------------------------------------------------------------- Databricks


def test_the_databricks_init_script_places_the_daemon(tmp_path):
    native_dir = tmp_path / "local_disk0" / "spark-kpl" / "native"
    env = {**loopback_env(), "SPARK_KPL_JAR": str(spark_kpl.jar_path()), "SPARK_KPL_NATIVE_DIR": str(native_dir)}
    runs = [subprocess.run(["bash", str(INIT_SCRIPT)], capture_output=True, text=True, timeout=120, env=env)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    daemon = next(native_dir.glob("*/kinesis_producer"))
    assert f"native daemon ready at {daemon}; Spark config: spark.kpl.nativeDir {native_dir}" in runs[0].stdout
    # The first run may also install libuuid1 (a fresh machine lacks it); the daemon line must not change.
    assert runs[1].stdout.splitlines()[-1] == runs[0].stdout.splitlines()[-1], "the second run finds the daemon placed"
    assert oct(native_dir.stat().st_mode & 0o777) == oct(0o700)


def test_the_databricks_init_script_names_a_missing_jar(tmp_path):
    env = {**loopback_env(), "SPARK_KPL_JAR": str(tmp_path / "absent.jar"), "SPARK_KPL_NATIVE_DIR": str(tmp_path)}
    run = subprocess.run(["bash", str(INIT_SCRIPT)], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 1
    assert f"cannot read {tmp_path / 'absent.jar'} (set SPARK_KPL_JAR" in run.stderr


# ---------------------------------------------------------------------------------------------- Kubernetes


def dockerfile_args() -> Dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", DOCKERFILE.read_text(), re.M))


def resolved(text: str, args: Dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda name: args[name.group(1)], text)


def test_the_dockerfile_copies_what_the_build_makes_at_the_projects_version():
    args = dockerfile_args()
    assert args["SPARK_KPL_VERSION"] == VERSION
    copied = [resolved(source, args) for source in re.findall(r"^COPY (\S+) ", DOCKERFILE.read_text(), re.M)]
    # scripts/build.sh and scripts/build-wheel.sh name their outputs so (docs/deploying.md).
    assert copied == [f"build/libs/spark-kpl-{VERSION}.jar", f"dist/spark_kpl-{VERSION}-py3-none-any.whl"]
    assert spark_kpl.jar_path().name == Path(copied[0]).name
    assert "dist/spark_kpl-<version>-py3-none-any.whl" in (REPO / "scripts" / "build-wheel.sh").read_text()


def test_the_dockerfile_starts_from_a_spark_release_the_suite_tests_on_java_17():
    image = dockerfile_args()["SPARK_IMAGE"]
    found = re.fullmatch(r"spark:(\d+\.\d+\.\d+)-scala(2\.1[23])-java17-python3-ubuntu", image)
    assert found, image
    tested = {re.search(r"^pyspark==(\S+)$", path.read_text(), re.M).group(1)  # type: ignore[union-attr]
              for path in (REPO / "python").glob("requirements-*.txt") if "pyspark==" in path.read_text()}
    assert found.group(1) in tested, f"{image}: Spark {found.group(1)} is not among the tested {sorted(tested)}"
    assert found.group(2) == ("2.12" if found.group(1).startswith("3.") else "2.13")


def test_the_dockerfile_and_the_recipe_name_the_same_folder_and_user():
    text = DOCKERFILE.read_text()
    recipe = (REPO / "docs" / "recipes" / "kubernetes.md").read_text()
    args = dockerfile_args()
    assert "apt-get install -y --no-install-recommends libuuid1" in text
    assert "chown ${SPARK_UID}:${SPARK_UID} /opt/spark-kpl/native" in text
    assert "chmod 0700 /opt/spark-kpl/native" in text
    assert text.rstrip().endswith("USER ${SPARK_UID}") and args["SPARK_UID"] == "185"
    assert "--conf spark.kpl.nativeDir=/opt/spark-kpl/native" in recipe
    assert f"the jar at\n`/opt/spark-kpl/spark-kpl-{VERSION}.jar`" in recipe
    assert f"--jars local:///opt/spark-kpl/spark-kpl-{VERSION}.jar" in recipe


@pytest.mark.parametrize("doc", ["docs/recipes/kubernetes.md", "docs/recipes/emr.md"])
def test_the_recipes_link_the_dockerfile(doc):
    assert "deploy/kubernetes/Dockerfile" in (REPO / doc).read_text()
