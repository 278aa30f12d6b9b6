"""Placing the KPL daemon: the Python CLI, then many JVMs and CLI processes at once.

The contention tests start every extractor together (each waits for a go-file) in a fresh folder per
round: ours (``NativeDaemon`` in JVMs whose thread gets interrupted as Spark's task cancellation
would, and ``spark_kpl.native`` in Python processes, as a bootstrap action runs it) must never fail.
The stock KPL's own extraction runs under the same load and in a folder another user made; what it
does is recorded, not asserted: ``scripts/extraction-contention.sh`` writes it to
``docs/extraction-contention.md``.
"""

from __future__ import annotations

import hashlib
import os
import platform
import pwd
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

from spark_kpl import jar_path
from spark_kpl.native import NATIVE_DIR_CONF
from spark_kpl_testing.env import loopback_env
from spark_kpl_testing.polling import wait_for

from install_main import bundled_daemon_resource, bundled_daemon_sha256, install_main_classpath

REPO = Path(__file__).resolve().parents[3]
#: Where the contention record goes, when asked for: tests never write into docs/ on their own;
#: scripts/extraction-contention.sh sets it to regenerate docs/extraction-contention.md.
RESULTS_ENV = "SPARK_KPL_CONTENTION_REPORT"
IS_ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody")

ROUNDS = 5
JVMS_PER_ROUND = 8
PYTHONS_PER_ROUND = 8
KPL_JVMS = 8
KPL_FOLDER = "amazon-kinesis-producer-native-binaries"
#: What the KPL starts: the script beside the daemon that sets its allocator (docs/native-daemon.md).
LAUNCHER = "launch-daemon"
#: Interrupts land this long after the go-file, spread over the time an extraction takes under load.
INTERRUPT_WINDOW_MS = 3000
ROUND_TIMEOUT_S = 120

#: A Python contender: ready-file, wait for the go-file, install, report like InstallMain.
PYTHON_CONTENDER = """
import hashlib, sys, time
from pathlib import Path
from spark_kpl.native import install
dir, jar, ready, go = sys.argv[1:5]
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.002)
try:
    path = install(dir, jar)
except Exception as error:
    print("FAIL", repr(error).replace("\\n", " "))
    sys.exit(1)
print("OK", path, hashlib.sha256(path.read_bytes()).hexdigest(), "interrupted=False")
"""


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def jar(shared_root: Path) -> Path:
    """A snapshot of the spark-kpl jar: a rebuild while the tests run must not pull it from under them."""
    snapshot = Path(shutil.copy(jar_path(), shared_root / "spark-kpl.jar"))
    with zipfile.ZipFile(snapshot) as archive:
        assert bundled_daemon_resource() in archive.namelist(), f"{jar_path()} has no daemon (being rebuilt?)"
    return snapshot


@pytest.fixture(scope="module")
def bundled_sha(jar: Path) -> str:
    return bundled_daemon_sha256(jar)


@pytest.fixture(scope="module")
def shared_root() -> Iterator[Path]:
    """A folder under /tmp that user nobody can read too (pytest's tmp_path is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="spark-kpl-contention-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)


@pytest.fixture(scope="module")
def java_classpath(jar: Path, shared_root: Path) -> str:
    return install_main_classpath(jar, shared_root)


@pytest.fixture(scope="module")
def report(shared_root: Path) -> Iterator["Report"]:
    collected = Report(shared_root)
    yield collected
    if os.environ.get(RESULTS_ENV) and collected.rows:
        Path(os.environ[RESULTS_ENV]).write_text(collected.markdown())


# ------------------------------------------------------------------------------------ the Python CLI
# The placement's own cases (refusals, replaced files, stale temps, noexec, full disk) are unit tests of
# jvm/src/test/java/sparkkpl/natives; Python runs that very code, so here only what it adds is tested.


def test_cli_prints_the_path_or_explains_the_refusal(jar, bundled_sha, tmp_path):
    dir = tmp_path / "natives"
    placed = extract_native("--dir", str(dir), "--jar", str(jar))
    assert (placed.returncode, placed.stdout.strip()) == (0, str(dir / bundled_sha[:16] / "kinesis_producer"))
    assert_verified(Path(placed.stdout.strip()), bundled_sha)

    dir.chmod(0o777)
    refused = extract_native("--dir", str(dir), "--jar", str(jar))
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.startswith("spark-kpl: Cannot install the KPL native daemon in "), refused.stderr
    assert "can be written by other users" in refused.stderr
    assert_names_path_and_conf_key(refused.stderr, dir)


def test_cli_without_dir_places_where_the_executors_jvm_looks(jar, bundled_sha, tmp_path):
    java_tmpdir = tmp_path / "java-tmpdir"
    java_tmpdir.mkdir()
    user = pwd.getpwuid(os.getuid()).pw_name
    java_options = {**os.environ, "JAVA_TOOL_OPTIONS": f"-Djava.io.tmpdir={java_tmpdir}"}
    placed = extract_native("--jar", str(jar), env=java_options)
    assert placed.stdout.strip() == str(java_tmpdir / f"spark-kpl-{user}" / bundled_sha[:16] / "kinesis_producer")


def test_cli_without_a_java_runtime_or_jar_says_what_is_missing(jar, tmp_path):
    no_java = {**os.environ, "PATH": str(tmp_path), "JAVA_HOME": str(tmp_path / "no-jdk")}
    missing_java = extract_native("--dir", str(tmp_path / "natives"), "--jar", str(jar), env=no_java)
    assert missing_java.returncode == 1
    assert "needs a Java runtime" in missing_java.stderr and str(tmp_path / "no-jdk") in missing_java.stderr

    missing_jar = extract_native("--dir", str(tmp_path / "natives"), "--jar", str(tmp_path / "absent.jar"))
    assert missing_jar.returncode == 1
    assert f"Cannot read the spark-kpl jar {tmp_path / 'absent.jar'}" in missing_jar.stderr
    assert not (tmp_path / "natives").exists()


# --------------------------------------------------------------------------------------------- contention


def test_ours_never_fails_with_jvms_and_pythons_extracting_at_once(
    jar, bundled_sha, java_classpath, shared_root, report
):
    """16 extractors per round, JVMs interrupted at random moments, Python alongside; fresh folder each round."""
    rng = random.Random(3)
    rounds: List[Round] = []
    problems: List[str] = []
    for number in range(ROUNDS):
        dir = shared_root / f"ours-{number}" / "natives"
        contenders = [
            Contender("JVM", _java(java_classpath, "ours", dir, rng.randrange(INTERRUPT_WINDOW_MS)))
            for _ in range(JVMS_PER_ROUND)
        ] + [Contender("Python", _python(dir, jar)) for _ in range(PYTHONS_PER_ROUND)]
        rng.shuffle(contenders)
        rounds.append(run_at_once(contenders, shared_root / f"round-ours-{number}"))
        expected = dir / bundled_sha[:16] / "kinesis_producer"
        problems += [f"round {number}: {p}" for p in _problems(rounds[-1].outcomes, expected, bundled_sha)]
    interrupted = sum(o.interrupted for r in rounds for o in r.outcomes)
    report.add("ours: NativeDaemon in JVMs + spark_kpl.native in Python processes", rounds,
               f"{interrupted} of {ROUNDS * JVMS_PER_ROUND} JVMs interrupted mid-install, all kept the flag")
    assert problems == []
    assert interrupted > 0, "no interrupt landed while installing: widen INTERRUPT_WINDOW_MS"
    assert _daemons_running_under(shared_root) == []


def _stock_kpl(java_classpath: str, count: int, temp_directory: Optional[Path],
               interrupts: Optional[random.Random] = None, tmpdir: Optional[Path] = None,
               as_nobody: bool = False) -> List[Contender]:
    """JVMs running the stock KPL's extraction; with ``interrupts``, each interrupted at a random moment."""
    return [Contender("KPL", _java(java_classpath, "kpl", temp_directory,
                                   interrupts.randrange(INTERRUPT_WINDOW_MS) if interrupts else -1, tmpdir),
                      as_nobody)
            for _ in range(count)]


def test_stock_kpl_extraction_under_the_same_contention(java_classpath, bundled_sha, shared_root, report):
    """Recorded, not asserted: how the KPL's own extraction fails is what ours avoids."""
    plain = run_at_once(_stock_kpl(java_classpath, KPL_JVMS, shared_root / "kpl"), shared_root / "round-kpl")
    report.add("stock KPL extractBinaries, fresh TempDirectory", [plain], _corrupt_copies(plain, bundled_sha))
    interrupted = run_at_once(_stock_kpl(java_classpath, KPL_JVMS, shared_root / "kpl-interrupted",
                                         interrupts=random.Random(5)),
                              shared_root / "round-kpl-interrupted")
    report.add("the same, each JVM interrupted at a random moment (as Spark cancels a task)", [interrupted])


@pytest.mark.root_only
def test_stock_kpl_and_ours_with_a_folder_of_another_user(java_classpath, bundled_sha, shared_root, report):
    """The stock KPL's rows recorded; ours, as user nobody beside it, asserted."""
    given_away = shared_root / "kpl-given-away"
    (given_away / KPL_FOLDER).mkdir(parents=True)
    os.chown(given_away / KPL_FOLDER, NOBODY.pw_uid, NOBODY.pw_gid)
    as_root = run_at_once(_stock_kpl(java_classpath, KPL_JVMS // 2, given_away), shared_root / "round-kpl-given-away")
    report.add("stock KPL as root, its folder chowned to nobody first", [as_root],
               "root's permissions override the folder's owner")

    # The multi-user case on one host: root's executor extracted first, then user nobody's start.
    shared_tmp = shared_root / "shared-tmp"
    shared_tmp.mkdir()
    shared_tmp.chmod(0o1777)
    (shared_tmp / KPL_FOLDER).mkdir(mode=0o755)
    contenders = _stock_kpl(java_classpath, KPL_JVMS // 2, None, tmpdir=shared_tmp, as_nobody=True) + [
        Contender("ours", _java(java_classpath, "ours", None, -1, shared_tmp), as_nobody=True)
        for _ in range(KPL_JVMS // 2)
    ]
    mixed = run_at_once(contenders, shared_root / "round-as-nobody", world_writable=True)
    kpl, ours = mixed.only("KPL"), mixed.only("ours")
    report.add(f"stock KPL as user nobody, java.io.tmpdir shared, {KPL_FOLDER} made by root", [kpl])
    report.add("ours beside it as user nobody (default dir <java.io.tmpdir>/spark-kpl-nobody)", [ours])
    expected = shared_tmp / "spark-kpl-nobody" / bundled_sha[:16] / "kinesis_producer"
    assert _problems(ours.outcomes, expected, bundled_sha) == []
    assert _daemons_running_under(shared_root) == []


# ---------------------------------------------------------------------------------------- running at once


@dataclass
class Contender:
    label: str
    argv: Callable[[Path, Path], List[str]]
    as_nobody: bool = False


@dataclass
class Outcome:
    label: str
    ok: bool
    path: str = ""
    sha: str = ""
    interrupted: bool = False
    detail: str = ""


@dataclass
class Round:
    outcomes: List[Outcome]
    seconds: float

    def only(self, label: str) -> "Round":
        return Round([o for o in self.outcomes if o.label == label], self.seconds)


def run_at_once(contenders: List[Contender], workdir: Path, world_writable: bool = False) -> Round:
    """Start every contender, wait until all are ready, create the go-file, collect what each printed."""
    workdir.mkdir()
    if world_writable:
        workdir.chmod(0o777)
    go = workdir / "go"
    ready = [workdir / f"ready-{i}" for i in range(len(contenders))]
    env = loopback_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    processes: List[subprocess.Popen] = []
    try:
        for contender, ready_file in zip(contenders, ready):
            identity: Dict[str, Any] = {}
            if contender.as_nobody:
                identity = {"user": NOBODY.pw_uid, "group": NOBODY.pw_gid, "extra_groups": []}
            processes.append(subprocess.Popen(
                contender.argv(ready_file, go), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env=env, cwd=workdir, **identity,
            ))
        deadline = time.monotonic() + ROUND_TIMEOUT_S
        wait_for(lambda: all(r.exists() for r in ready) or any(p.poll() is not None for p in processes),
                 ROUND_TIMEOUT_S, "the contenders to get ready", every=0.01)
        go.touch()
        started = time.monotonic()
        outputs = [p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in processes]
        seconds = time.monotonic() - started
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return Round([_outcome(c.label, out, err) for c, (out, err) in zip(contenders, outputs)], seconds)


def _outcome(label: str, out: str, err: str) -> Outcome:
    last = (out.strip().splitlines() or [""])[-1]
    if last.startswith("OK "):
        _, path, sha, interrupted = last.split(" ")
        return Outcome(label, True, path, sha, interrupted == "interrupted=true")
    detail = last[len("FAIL "):] if last.startswith("FAIL ") else (err.strip().splitlines() or ["no output"])[-1]
    return Outcome(label, False, detail=detail)


def _java(classpath: str, mode: str, dir: Optional[Path], interrupt_ms: int,
          tmpdir: Optional[Path] = None) -> Callable[[Path, Path], List[str]]:
    jvm = ["java", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xmx256m", "-cp", classpath]
    if tmpdir is not None:
        jvm.append(f"-Djava.io.tmpdir={tmpdir}")
    target = "-" if dir is None else str(dir)
    return lambda ready, go: [*jvm, "sparkkpl.natives.InstallMain", mode, target, str(ready), str(go),
                              str(interrupt_ms)]


def _python(dir: Path, jar: Path) -> Callable[[Path, Path], List[str]]:
    return lambda ready, go: [sys.executable, "-c", PYTHON_CONTENDER, str(dir), str(jar), str(ready), str(go)]


def _problems(outcomes: List[Outcome], expected: Path, bundled_sha: str) -> List[str]:
    """Every contender got the one verified file at the one path, its launcher beside it, and no temp file."""
    problems = [f"{o.label} failed: {o.detail}" for o in outcomes if not o.ok]
    problems += [f"{o.label} reported {o.path} {o.sha}" for o in outcomes
                 if o.ok and (o.path, o.sha) != (str(expected), bundled_sha)]
    if not expected.is_file() or _sha256(expected) != bundled_sha:
        problems.append(f"{expected} is not the jar's daemon")
    else:
        launcher = expected.parent / LAUNCHER
        if not launcher.is_file() or not launcher.read_text().startswith("#!/bin/sh\n"):
            problems.append(f"{launcher} is not the daemon's launcher")
        problems += [f"left behind: {p}" for p in expected.parent.iterdir() if p.name not in (expected.name, LAUNCHER)]
    return problems


def _corrupt_copies(round: Round, bundled_sha: str) -> str:
    corrupt = sum(o.ok and o.sha != bundled_sha for o in round.outcomes)
    return f"{corrupt} extracted copies differ from the jar's daemon"


def _daemons_running_under(root: Path) -> List[str]:
    processes = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [line for line in processes.splitlines() if "kinesis_producer" in line and str(root) in line]


# -------------------------------------------------------------------------------------------- the record


@dataclass
class Report:
    root: Path
    rows: List[str] = field(default_factory=list)

    def add(self, scenario: str, rounds: List[Round], remark: str = "") -> None:
        outcomes = [o for r in rounds for o in r.outcomes]
        failures = [o for o in outcomes if not o.ok]
        # One line per kind of error: the test's folder and round numbers vary, the error does not.
        errors = sorted({re.sub(r"-\d+/", "-N/", o.detail.replace(str(self.root), "$ROOT")) for o in failures})
        self.rows.append(
            f"| {scenario} | {len(rounds)} | {len(outcomes) // len(rounds)} | {len(failures)} of {len(outcomes)} "
            f"| {sum(r.seconds for r in rounds):.0f} s | {'; '.join(filter(None, [remark, *errors])) or '-'} |"
        )

    def markdown(self) -> str:
        return "\n".join([
            "# Native daemon extraction under contention",
            "",
            "Generated by `scripts/extraction-contention.sh` (do not edit by hand): every process of a round",
            "waits for one go-file, then extracts into the same fresh folder. KPL 1.0.9, daemon "
            f"`{bundled_daemon_resource()}`; {os.cpu_count()} CPUs, {platform.platform()}, "
            f"{'root' if IS_ROOT else 'not root'}, {time.strftime('%Y-%m-%d')}.",
            "",
            "| scenario | rounds | processes per round | failed | wall time after go | notes and errors |",
            "|---|---|---|---|---|---|",
            *self.rows,
            "",
            "The stock KPL's `extractBinaries` is called by reflection on an instance whose constructor never",
            "ran, so no daemon is started. It extracts into one folder shared by every user of the host, under",
            "a `FileChannel` lock that a thread interrupt breaks. Ours: `jvm/src/main/java/sparkkpl/natives/`,",
            "which `python/spark_kpl/native.py` runs in a JVM of its own.",
            "",
        ])


# -------------------------------------------------------------------------------------------------- helpers


def assert_verified(executable: Path, bundled_sha: str) -> None:
    status = os.lstat(executable)
    assert stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o700
    assert _sha256(executable) == bundled_sha


def assert_names_path_and_conf_key(message: str, dir: Path) -> None:
    assert str(dir) in message and NATIVE_DIR_CONF in message, message


def extract_native(*args: str, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spark_kpl", "extract-native", *args],
                          capture_output=True, text=True, timeout=ROUND_TIMEOUT_S, env=env, check=False)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
