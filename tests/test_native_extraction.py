"""Placing the KPL daemon: the Python side's protocol, then many JVMs and Python processes at once.

The contention tests start every extractor together (each waits for a go-file) in a fresh folder per
round: ours (``NativeDaemon`` in JVMs whose thread gets interrupted as Spark's task cancellation
would, and ``spark_kpl.native`` in Python processes) must never fail. The stock KPL's own extraction
runs under the same load and in a folder another user made; what it does is recorded, not asserted:
``scripts/extraction-contention.sh`` writes it to ``docs/extraction-contention.md``.
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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

from spark_kpl import jar_path
from spark_kpl.native import (
    NATIVE_DIR_CONF,
    NativeDaemonError,
    cli_extract_native,
    default_dir,
    install,
    platform_name,
)
from spark_kpl.testing._env import loopback_env

from install_main import install_main_classpath

REPO = Path(__file__).resolve().parents[1]
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
        assert _resource() in archive.namelist(), f"{jar_path()} has no daemon (being rebuilt?)"
    return snapshot


@pytest.fixture(scope="module")
def bundled_sha(jar: Path) -> str:
    with zipfile.ZipFile(jar) as archive:
        return hashlib.sha256(archive.read(_resource())).hexdigest()


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


# ---------------------------------------------------------------------------------- the Python protocol


def test_fresh_install_is_private_verified_and_reused_without_rewrite(jar, bundled_sha, tmp_path):
    dir = tmp_path / "natives"

    executable = install(dir, jar)

    assert executable == dir / bundled_sha[:16] / "kinesis_producer"
    assert_verified(executable, bundled_sha)
    assert _mode(dir) == _mode(executable.parent) == 0o700
    before = executable.stat()
    assert install(dir, jar) == executable
    after = executable.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_corrupted_daemon_in_place_is_replaced(jar, bundled_sha, tmp_path):
    executable = install(tmp_path, jar)
    inode = executable.stat().st_ino
    with open(executable, "r+b") as file:
        file.seek(executable.stat().st_size // 2)
        original = file.read(1)
        file.seek(-1, os.SEEK_CUR)
        file.write(bytes([original[0] ^ 0xFF]))

    assert install(tmp_path, jar) == executable

    assert_verified(executable, bundled_sha)
    assert executable.stat().st_ino != inode


def test_truncated_daemon_is_replaced(jar, bundled_sha, tmp_path):
    executable = install(tmp_path, jar)
    os.truncate(executable, 4096)

    assert install(tmp_path, jar) == executable

    assert_verified(executable, bundled_sha)


def test_foreign_executable_is_replaced_without_being_run(jar, bundled_sha, tmp_path):
    executable = _owner_only_folder(tmp_path, bundled_sha) / "kinesis_producer"
    marker = tmp_path / "foreign-ran"
    executable.write_text(f"#!/bin/sh\ntouch {marker}\necho Usage:\n")
    executable.chmod(0o700)

    assert install(tmp_path, jar) == executable

    assert_verified(executable, bundled_sha)
    assert not marker.exists()


def test_symlink_in_place_of_the_daemon_is_replaced_not_followed(jar, bundled_sha, tmp_path):
    dir = tmp_path / "natives"
    executable = _owner_only_folder(dir, bundled_sha) / "kinesis_producer"
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    executable.symlink_to(victim)

    assert install(dir, jar) == executable

    assert not executable.is_symlink()
    assert_verified(executable, bundled_sha)
    assert victim.read_text() == "untouched"


def test_symlink_where_the_dir_should_be_is_refused(jar, tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    dir = tmp_path / "natives"
    dir.symlink_to(real)

    assert_refused(dir, jar, "is a symbolic link")


@pytest.mark.root_only
def test_dir_owned_by_another_user_is_refused(jar, tmp_path):
    dir = tmp_path / "natives"
    dir.mkdir(mode=0o700)
    os.chown(dir, NOBODY.pw_uid, NOBODY.pw_gid)

    assert_refused(dir, jar, "not by this user")


def test_dir_writable_by_others_is_refused(jar, tmp_path):
    dir = tmp_path / "natives"
    dir.mkdir()
    dir.chmod(0o777)

    assert_refused(dir, jar, "can be written by other users")


def test_dir_only_readable_by_others_is_tightened(jar, bundled_sha, tmp_path):
    dir = tmp_path / "natives"
    dir.mkdir()
    dir.chmod(0o755)

    assert_verified(install(dir, jar), bundled_sha)
    assert _mode(dir) == 0o700


def test_read_only_dir_is_an_error_naming_path_and_conf_key(jar, tmp_path):
    dir = tmp_path / "natives"
    dir.mkdir(mode=0o500)
    with _read_only(dir):
        with pytest.raises(NativeDaemonError) as error:
            install(dir, jar)
    assert_names_path_and_conf_key(error.value, dir)


def test_noexec_file_system_is_an_error_naming_path_and_conf_key(jar, tmp_path):
    with _tmpfs(tmp_path / "noexec", "noexec,size=200m") as mount_point:
        dir = mount_point / "natives"
        with pytest.raises(NativeDaemonError, match="noexec") as error:
            install(dir, jar)
    assert_names_path_and_conf_key(error.value, dir)


def test_full_disk_is_an_error_naming_path_and_conf_key(jar, bundled_sha, tmp_path):
    with _tmpfs(tmp_path / "small", "size=32m") as mount_point:
        dir = mount_point / "natives"
        with pytest.raises(NativeDaemonError, match="No space left on device") as error:
            install(dir, jar)
        assert list((dir / bundled_sha[:16]).iterdir()) == [], "no temp file left behind"
    assert_names_path_and_conf_key(error.value, dir)


def test_stale_temp_files_of_killed_writers_are_removed(jar, bundled_sha, tmp_path):
    folder = _owner_only_folder(tmp_path, bundled_sha)
    stale = folder / "kinesis_producer.killed.tmp"
    stale.touch()
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))
    live = folder / "kinesis_producer.writing.tmp"
    live.touch()

    assert_verified(install(tmp_path, jar), bundled_sha)

    assert not stale.exists()
    assert live.exists()


def test_platforms_are_named_as_the_kpl_names_them():
    assert platform_name("Linux", "x86_64") == "linux-x86_64"
    assert platform_name("Linux", "aarch64") == "linux-aarch64"
    assert platform_name("Darwin", "arm64") == "osx"
    with pytest.raises(NativeDaemonError, match="linux-x86_64, linux-aarch64, osx"):
        platform_name("Windows", "AMD64")
    with pytest.raises(NativeDaemonError):
        platform_name("Linux", "ppc64le")


def test_default_dir_is_the_one_the_jvm_uses():
    settings = subprocess.run(["java", "-XshowSettings:properties", "-version"], capture_output=True, text=True)
    properties = {}
    for line in settings.stderr.splitlines():
        key, equals, value = line.strip().partition(" = ")
        if equals:
            properties[key] = value
    assert default_dir() == Path(properties["java.io.tmpdir"]) / f"spark-kpl-{properties['user.name']}"


def test_cli_prints_the_path_or_explains_the_refusal(jar, bundled_sha, tmp_path, capsys):
    dir = tmp_path / "natives"
    assert cli_extract_native(SimpleNamespace(dir=str(dir), jar=str(jar))) == 0
    assert capsys.readouterr().out.strip() == str(dir / bundled_sha[:16] / "kinesis_producer")

    dir.chmod(0o777)
    assert cli_extract_native(SimpleNamespace(dir=str(dir), jar=str(jar))) == 1
    assert NATIVE_DIR_CONF in capsys.readouterr().err


def test_jvm_and_python_reuse_each_others_daemon(jar, java_classpath, tmp_path):
    def jvm_install(dir: Path) -> Path:
        outcome = run_at_once([Contender("JVM", _java(java_classpath, "ours", dir, -1))],
                              tmp_path / f"run-{dir.name}").outcomes[0]
        assert outcome.ok, outcome.detail
        return Path(outcome.path)

    by_python = install(tmp_path / "python-first", jar)
    inode = by_python.stat().st_ino
    assert jvm_install(tmp_path / "python-first") == by_python
    assert by_python.stat().st_ino == inode

    by_jvm = jvm_install(tmp_path / "jvm-first")
    inode = by_jvm.stat().st_ino
    assert install(tmp_path / "jvm-first", jar) == by_jvm
    assert by_jvm.stat().st_ino == inode


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
        while not all(r.exists() for r in ready) and all(p.poll() is None for p in processes):
            assert time.monotonic() < deadline, "contenders never got ready"
            time.sleep(0.01)
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
    """Every contender got the one verified file at the one path, and no temp file is left beside it."""
    problems = [f"{o.label} failed: {o.detail}" for o in outcomes if not o.ok]
    problems += [f"{o.label} reported {o.path} {o.sha}" for o in outcomes
                 if o.ok and (o.path, o.sha) != (str(expected), bundled_sha)]
    if not expected.is_file() or _sha256(expected) != bundled_sha:
        problems.append(f"{expected} is not the jar's daemon")
    else:
        problems += [f"left behind: {p}" for p in expected.parent.iterdir() if p.name != "kinesis_producer"]
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
            f"`{_resource()}`; {os.cpu_count()} CPUs, {platform.platform()}, "
            f"{'root' if IS_ROOT else 'not root'}, {time.strftime('%Y-%m-%d')}.",
            "",
            "| scenario | rounds | processes per round | failed | wall time after go | notes and errors |",
            "|---|---|---|---|---|---|",
            *self.rows,
            "",
            "The stock KPL's `extractBinaries` is called by reflection on an instance whose constructor never",
            "ran, so no daemon is started. It extracts into one folder shared by every user of the host, under",
            "a `FileChannel` lock that a thread interrupt breaks. Ours: `jvm/src/main/java/sparkkpl/natives/`",
            "and `python/spark_kpl/native.py`.",
            "",
        ])


# -------------------------------------------------------------------------------------------------- helpers


def assert_verified(executable: Path, bundled_sha: str) -> None:
    status = os.lstat(executable)
    assert stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o700
    assert _sha256(executable) == bundled_sha


def assert_refused(dir: Path, jar: Path, reason: str) -> None:
    with pytest.raises(NativeDaemonError, match=reason) as error:
        install(dir, jar)
    assert_names_path_and_conf_key(error.value, dir)


def assert_names_path_and_conf_key(error: BaseException, dir: Path) -> None:
    assert str(dir) in str(error) and NATIVE_DIR_CONF in str(error), str(error)


def _resource() -> str:
    return f"{KPL_FOLDER}/{platform_name()}/kinesis_producer"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _owner_only_folder(dir: Path, bundled_sha: str) -> Path:
    folder = dir / bundled_sha[:16]
    folder.mkdir(parents=True)
    dir.chmod(0o700)
    folder.chmod(0o700)
    return folder


@contextmanager
def _read_only(dir: Path) -> Iterator[None]:
    """Mode 0500; as root also the immutable attribute, since root ignores modes."""
    if IS_ROOT and subprocess.run(["chattr", "+i", str(dir)], capture_output=True).returncode != 0:
        pytest.skip("root cannot make a folder read-only here (chattr +i failed)")
    try:
        yield
    finally:
        if IS_ROOT:
            subprocess.run(["chattr", "-i", str(dir)], check=True)
        dir.chmod(0o700)


@contextmanager
def _tmpfs(mount_point: Path, options: str) -> Iterator[Path]:
    if not IS_ROOT:
        pytest.skip("needs root to mount a tmpfs")
    mount_point.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)
