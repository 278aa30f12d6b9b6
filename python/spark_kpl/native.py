"""Place the KPL's native daemon from Python, e.g. in a cluster bootstrap action.

The same layout, checks and protocol as the JVM's ``sparkkpl.natives.NativeDaemon``, so a bootstrap
action and the executors may run in either order or at the same time:
``<dir>/<first 16 hex digits of the daemon's SHA-256>/kinesis_producer``.

A complete, genuine file is guaranteed by the order of the steps, not by the lock: a unique temp file
beside the target, fsync, its SHA-256 checked against the daemon in the jar, chmod 0700, atomic
rename, fsync of the folder. ``<dir>/.lock`` only stops processes writing 86 MB in parallel:
:mod:`filelock` takes flock(2) locks, the JVM takes fcntl locks, and on Linux they do not exclude
each other.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Iterator, Optional, Union

import filelock

#: The Spark config key that moves the folder on the executors; ``--dir`` must match it.
NATIVE_DIR_CONF = "spark.kpl.nativeDir"
RESOURCE_ROOT = "amazon-kinesis-producer-native-binaries"
EXECUTABLE_NAME = "kinesis_producer"
#: The platforms the KPL 1.0.9 jar carries a daemon for, named as the KPL names them.
PLATFORMS = ("linux-x86_64", "linux-aarch64", "osx")

_OWNER_ONLY = 0o700
_LOCK_FILE_NAME = ".lock"
_TEMP_PREFIX = EXECUTABLE_NAME + "."
_TEMP_SUFFIX = ".tmp"
#: A killed writer leaves its temp file behind; a live one finishes within seconds.
_STALE_TEMP_AGE_S = 3600
_LOCK_PATIENCE_S = 60
_PROBE_TIMEOUT_S = 30
#: Printed by the daemon when started without arguments (then it exits 1).
_USAGE_BANNER = "Usage:"
_CHUNK = 1 << 20

PathLike = Union[str, "os.PathLike[str]"]


class NativeDaemonError(RuntimeError):
    """The daemon could not be placed; the message names the folder and :data:`NATIVE_DIR_CONF`."""


def default_dir() -> Path:
    """Return ``<java.io.tmpdir>/spark-kpl-<user>``: where executors look when the config key is unset.

    Examples
    --------
    >>> from spark_kpl.native import default_dir
    >>> default_dir().name.startswith("spark-kpl-")
    True
    """
    user = re.sub(r"[^A-Za-z0-9._-]", "_", pwd.getpwuid(os.getuid()).pw_name)
    # On Linux the JVM's java.io.tmpdir is /tmp whatever $TMPDIR says; on macOS both use the user's folder.
    java_tmpdir = Path("/tmp") if sys.platform.startswith("linux") else Path(tempfile.gettempdir())
    return java_tmpdir / f"spark-kpl-{user}"


def platform_name(system: Optional[str] = None, machine: Optional[str] = None) -> str:
    """Return the KPL's name for this platform (or the given one), e.g. ``linux-x86_64``.

    Examples
    --------
    >>> from spark_kpl.native import platform_name
    >>> platform_name("Linux", "aarch64")
    'linux-aarch64'
    """
    system = platform.system() if system is None else system
    machine = platform.machine() if machine is None else machine
    if system == "Linux":
        name = "linux-" + ("x86_64" if machine in ("x86_64", "amd64") else machine)
    elif system == "Darwin":
        name = "osx"
    else:
        name = f"{system}/{machine}"
    if name not in PLATFORMS:
        raise NativeDaemonError(
            f"The KPL has no native daemon for {system} on {machine}; it ships one for {', '.join(PLATFORMS)}"
        )
    return name


def install(dir: Optional[PathLike] = None, jar: Optional[PathLike] = None) -> Path:
    """Place the KPL daemon from ``jar`` under ``dir`` if needed; return the verified executable.

    Parameters
    ----------
    dir
        The folder, as ``spark.kpl.nativeDir`` names it for the executors (default: :func:`default_dir`).
        Created ``0700``; refused if it is a symbolic link, someone else's, or writable by others.
    jar
        The spark-kpl jar (default: :func:`spark_kpl.jar_path`).

    Examples
    --------
    >>> from spark_kpl.native import install
    >>> install()  # doctest: +SKIP
    PosixPath('/tmp/spark-kpl-hadoop/6cceb1a730cbb2a8/kinesis_producer')
    """
    target_dir = Path(os.path.abspath(default_dir() if dir is None else dir))
    resource = f"{RESOURCE_ROOT}/{platform_name()}/{EXECUTABLE_NAME}"
    with _open_jar(_default_jar() if jar is None else Path(jar)) as archive:
        if resource not in archive.namelist():
            raise NativeDaemonError(f"{archive.filename} has no {resource}")
        with archive.open(resource) as bundled:
            expected = _sha256(bundled)
        try:
            return _place(target_dir, archive, resource, expected)
        except OSError as error:
            raise NativeDaemonError(
                f"Cannot install the KPL native daemon in {target_dir}: {error}. Set {NATIVE_DIR_CONF} to a"
                " folder of your own on a local file system with free space that allows executables."
            ) from error


def cli_extract_native(args: argparse.Namespace) -> int:
    """``python -m spark_kpl extract-native [--dir DIR] [--jar JAR]``: place the daemon, print its path."""
    try:
        print(install(args.dir, args.jar))
    except NativeDaemonError as error:
        print(f"spark-kpl: {error}", file=sys.stderr)
        return 1
    return 0


def _default_jar() -> Path:
    from spark_kpl import jar_path

    return jar_path()


def _open_jar(jar: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(jar)
    except (OSError, zipfile.BadZipFile) as error:
        raise NativeDaemonError(f"Cannot read the spark-kpl jar {jar}: {error}") from error


def _place(dir: Path, archive: zipfile.ZipFile, resource: str, expected: str) -> Path:
    _ensure_private_dir(dir)
    folder = dir / expected[:16]
    _ensure_private_dir(folder)
    executable = folder / EXECUTABLE_NAME
    if not _is_intact(executable, expected):
        with _lock_within_patience(dir / _LOCK_FILE_NAME):
            if not _is_intact(executable, expected):
                _write_verified(archive, resource, expected, executable)
            _remove_stale_temps(folder)
    _check_runs(executable)
    return executable


def _ensure_private_dir(path: Path) -> None:
    """Create ``path`` 0700, or check an existing one: PrivateDirectory.java explains the policy.

    Refused: a symbolic link, a non-directory, another user's folder, or one others may write to (they may
    have planted entries). Read/search bits of others are removed: nobody else can have changed it.
    """
    created = False
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        with suppress(FileExistsError):  # another process won the race; checked below like any folder
            os.mkdir(path, _OWNER_ONLY)
            created = True
        status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise OSError(f"{path} is a symbolic link")
    if not stat.S_ISDIR(status.st_mode):
        raise OSError(f"{path} is not a directory")
    if status.st_uid != os.getuid():
        raise OSError(f"{path} is owned by uid {status.st_uid}, not by this user (uid {os.getuid()})")
    mode = stat.S_IMODE(status.st_mode)
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(f"{path} can be written by other users ({stat.filemode(status.st_mode)})")
    # mkdir's mode is filtered by the umask: set a folder we made exactly.
    wanted = _OWNER_ONLY if created else mode & _OWNER_ONLY
    if wanted != mode:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(descriptor, wanted)
        finally:
            os.close(descriptor)


def _is_intact(executable: Path, expected: str) -> bool:
    """A regular file of ours, mode 0700, with the bundled daemon's SHA-256; anything else gets replaced."""
    try:
        status = os.lstat(executable)
    except FileNotFoundError:
        return False
    return (
        stat.S_ISREG(status.st_mode)
        and stat.S_IMODE(status.st_mode) == _OWNER_ONLY
        and status.st_uid == os.getuid()
        and _file_sha256(executable) == expected
    )


def _sha256(stream: IO[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(_CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as file:
        return _sha256(file)


@contextmanager
def _lock_within_patience(lock_file: Path) -> Iterator[None]:
    """Hold the lock file, or go on without it once the patience runs out: correct, maybe duplicated work."""
    lock = filelock.FileLock(str(lock_file), timeout=_LOCK_PATIENCE_S)
    try:
        lock.acquire()
    except filelock.Timeout:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _write_verified(archive: zipfile.ZipFile, resource: str, expected: str, executable: Path) -> None:
    descriptor, temp_name = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=_TEMP_SUFFIX, dir=executable.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(descriptor, "wb") as out, archive.open(resource) as bundled:
            shutil.copyfileobj(bundled, out, _CHUNK)
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), _OWNER_ONLY)
        if _file_sha256(temp) != expected:
            raise OSError(f"{temp} does not hold what was written to it")
        os.replace(temp, executable)
        folder_descriptor = os.open(executable.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder_descriptor)
        finally:
            os.close(folder_descriptor)
    finally:
        with suppress(FileNotFoundError):
            temp.unlink()


def _remove_stale_temps(folder: Path) -> None:
    cutoff = time.time() - _STALE_TEMP_AGE_S
    for temp in folder.glob(f"{_TEMP_PREFIX}*{_TEMP_SUFFIX}"):
        with suppress(FileNotFoundError):  # another process cleaned it up first
            if temp.lstat().st_mtime < cutoff:
                temp.unlink()


def _check_runs(executable: Path) -> None:
    """Start the daemon without arguments: it prints its usage and exits.

    A launch refused with EACCES means a noexec mount; a missing banner means the binary does not run here.
    """
    try:
        probe = subprocess.run(
            [str(executable)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise OSError(f"{executable} did not exit within {_PROBE_TIMEOUT_S} s without arguments") from error
    except OSError as error:
        raise OSError(f"{executable} cannot be executed (is its file system mounted noexec?): {error}") from error
    output = probe.stdout.decode("utf-8", "replace")
    if _USAGE_BANNER not in output:
        raise OSError(f"{executable} does not run on this host (exit {probe.returncode}): {output.strip()}")
