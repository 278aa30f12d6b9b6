"""spark-submit of scripts/example_job.py, for the tests that deploy the way users do."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

import spark_kpl
from spark_kpl_testing.cluster import spark_home

REPO = Path(__file__).resolve().parents[1]


def run_spark(tool: str, args: Sequence[str], env: Optional[Mapping[str, str]] = None,
              cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Runs one of Spark's commands (``spark-submit``, ``spark-sql``) as a user would. A failed run fails
    the test with the non-INFO lines of its log."""
    command = [os.path.join(spark_home(), "bin", tool), *args]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    problems = [line for line in run.stderr.splitlines() if " INFO " not in line]
    assert run.returncode == 0, "\n".join(problems[-60:]) + run.stdout[-2000:]
    return run


def submit_example_job(spark_args: List[str], job_args: List[str], env: Optional[Mapping[str, str]] = None,
                       jars_before: Sequence[Path] = ()) -> Dict[str, Any]:
    """Runs the example job with the jar on ``--jars`` (after ``jars_before``); returns what it printed
    as JSON, by tag (``RESULT``, ``SETTINGS``)."""
    jars = ",".join(str(jar) for jar in (*jars_before, spark_kpl.jar_path()))
    run = run_spark("spark-submit", ["--jars", jars, *spark_args, str(REPO / "scripts" / "example_job.py"),
                                     *job_args], env=env)
    return {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1])
            for line in run.stdout.splitlines() if line.startswith(("RESULT ", "SETTINGS "))}
