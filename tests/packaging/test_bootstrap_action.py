"""scripts/bootstrap-action.sh, run as a cluster would run it (as root) into a temporary root.

Each test runs it with a fresh Python environment standing in for a node's, made from the OS's own
Python so that another user may run it too. Downloads come from the test's own loopback servers.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import pwd
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional

import pytest

import spark_kpl
from spark_kpl_testing.endpoint import self_signed_certificate

from install_main import bundled_daemon_sha256, install_main_classpath

if sys.version_info >= (3, 11):
    import tomllib

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bootstrap-action.sh"
#: The node's Python: the OS's, which every user may run (the test's own lives under /root).
OS_PYTHON = Path("/usr/bin/python3")
PRESIGNED_QUERY = "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE&X-Amz-Signature=0b5e1ac7f00d"


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder under /tmp that other users may enter (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="spark-kpl-bootstrap-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def node_python(shared_tmp: Path) -> Path:
    """A fresh Python environment, as on a node that never had the package."""
    if not OS_PYTHON.exists():
        pytest.skip(f"{OS_PYTHON} is the node's Python in these tests")
    venv = shared_tmp / "node-venv"
    subprocess.run([str(OS_PYTHON), "-m", "venv", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The package as a wheel, as users upload it."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(REPO / "python")], check=True, timeout=300)
    return next(out.glob("spark_kpl-*.whl"))


@pytest.fixture
def jar(shared_tmp: Path) -> Path:
    return Path(shutil.copy(spark_kpl.jar_path(), shared_tmp / "built.jar"))


def node_env(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment, less PYTHONPATH: the node's Python sees what is installed, not this checkout."""
    return {name: value for name, value in (env or os.environ).items() if name != "PYTHONPATH"}


def bootstrap(node_python: Path, root: Path, jar: str, package: str, *options: str,
              env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), "--jar", jar, "--package", package, "--root", str(root),
         "--python", str(node_python), *options],
        capture_output=True, text=True, timeout=600, env=node_env(env), stdin=subprocess.DEVNULL)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def installed(node_python: Path) -> Dict[str, str]:
    """Distribution name to version, as pip lists them in the node's environment."""
    frozen = subprocess.run([str(node_python), "-m", "pip", "list", "--format=freeze", "--exclude", "pip",
                             "--exclude", "setuptools"], capture_output=True, text=True, check=True,
                            env=node_env()).stdout
    return dict(line.split("==", 1) for line in frozen.split())


# ---------------------------------------------------------------------------------------------- servers


class _Files(http.server.BaseHTTPRequestHandler):
    server: _FileServer

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        server = self.server
        server.requests.append(self.path)
        body = server.files.get(self.path.split("?", 1)[0])
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args: object) -> None:
        pass


class _FileServer(http.server.ThreadingHTTPServer):
    def __init__(self, files: Dict[str, bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Files)
        self.files = files
        self.requests: List[str] = []


@contextmanager
def file_server(files: Dict[str, bytes], tls: Optional[ssl.SSLContext] = None) -> Iterator[_FileServer]:
    """Serves ``files`` by path on 127.0.0.1 and records each request's path."""
    server = _FileServer(files)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class Tls(NamedTuple):
    context: ssl.SSLContext
    #: The environment in which curl trusts the server.
    env: Dict[str, str]


@pytest.fixture
def https(shared_tmp: Path) -> Tls:
    """A server context with a self-signed certificate for 127.0.0.1."""
    folder = shared_tmp / "tls"
    folder.mkdir()
    cert, key = self_signed_certificate(str(folder))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return Tls(context, {**os.environ, "CURL_CA_BUNDLE": cert})


# ---------------------------------------------------------------------------------------------- tests


def test_installs_jar_package_and_daemon_and_a_second_run_changes_nothing(node_python, shared_tmp, jar, wheel):
    root, native_dir = shared_tmp / "opt", shared_tmp / "native"
    matching = ("--jar-sha256", sha256(jar).upper(), "--package-sha256", sha256(wheel))
    first = bootstrap(node_python, root, str(jar), str(wheel), "--native-dir", str(native_dir), *matching)
    assert first.returncode == 0, first.stderr
    assert f"{wheel.name}: SHA-256 {sha256(wheel)} as expected" in first.stdout
    installed_jar = root / "lib" / "spark-kpl.jar"
    assert installed_jar.read_bytes() == jar.read_bytes()
    daemons = list(native_dir.glob("*/kinesis_producer"))
    assert len(daemons) == 1 and os.access(daemons[0], os.X_OK)
    assert sha256(daemons[0]) == bundled_daemon_sha256(jar)
    placed = subprocess.run([str(node_python), "-c", "import spark_kpl.native; print('ok')"],
                            capture_output=True, text=True, check=True, env=node_env())
    assert placed.stdout.strip() == "ok"

    jar_inode, daemon_inode = installed_jar.stat().st_ino, daemons[0].stat().st_ino
    second = bootstrap(node_python, root, str(jar), str(wheel), "--native-dir", str(native_dir), *matching)
    assert second.returncode == 0, second.stderr
    assert "already in place" in second.stdout
    assert (installed_jar.stat().st_ino, daemons[0].stat().st_ino) == (jar_inode, daemon_inode)


def test_refuses_a_node_whose_glibc_is_too_old_with_a_clear_message(node_python, shared_tmp, jar, wheel):
    shims = shared_tmp / "shims"
    shims.mkdir()
    getconf = shims / "getconf"
    getconf.write_text("#!/bin/sh\necho 'glibc 2.5'\n")
    getconf.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    result = bootstrap(node_python, shared_tmp / "opt", str(jar), str(wheel), env=env)
    assert result.returncode != 0
    assert "glibc 2.5" in result.stderr and "needs glibc" in result.stderr
    assert not (shared_tmp / "opt").exists(), "nothing is installed on a node that cannot run the daemon"


def test_a_plain_http_url_is_refused_without_being_fetched(node_python, shared_tmp, jar, wheel):
    with file_server({"/spark-kpl.jar": jar.read_bytes()}) as server:
        url = f"http://127.0.0.1:{server.server_port}/spark-kpl.jar"
        result = bootstrap(node_python, shared_tmp / "opt", url, str(wheel))
    assert result.returncode != 0
    assert "--jar: plain http:// is refused" in result.stderr and "Use https://, s3:// or a local path" in result.stderr
    assert server.requests == []
    assert not (shared_tmp / "opt").exists()


@pytest.mark.parametrize("wrong", ["jar", "package"])
def test_a_sha256_mismatch_names_the_file_and_both_hashes_and_installs_nothing(
        node_python, shared_tmp, jar, wheel, wrong):
    hashes = {"jar": sha256(jar), "package": sha256(wheel)}
    expected = hashes[wrong] = "0" * 64
    result = bootstrap(node_python, shared_tmp / "opt", str(jar), str(wheel),
                       "--jar-sha256", hashes["jar"], "--package-sha256", hashes["package"])
    assert result.returncode != 0
    source, actual = (jar, sha256(jar)) if wrong == "jar" else (wheel, sha256(wheel))
    assert f"--{wrong}: {source} has SHA-256 {actual}, but {expected} was expected" in result.stderr
    assert not (shared_tmp / "opt" / "lib" / "spark-kpl.jar").exists()
    assert "spark-kpl" not in installed(node_python)


def test_a_presigned_https_download_keeps_its_query_out_of_file_names_and_output(
        node_python, shared_tmp, jar, wheel, https):
    files = {"/bucket/spark-kpl.jar": jar.read_bytes(), f"/bucket/{wheel.name}": wheel.read_bytes()}
    root = shared_tmp / "opt"
    with file_server(files, https.context) as server:
        base = f"https://127.0.0.1:{server.server_port}/bucket"
        result = bootstrap(node_python, root, f"{base}/spark-kpl.jar{PRESIGNED_QUERY}",
                           f"{base}/{wheel.name}{PRESIGNED_QUERY}", "--native-dir", str(shared_tmp / "native"),
                           env=https.env)
        refused = bootstrap(node_python, shared_tmp / "other", f"{base}/spark-kpl.jar{PRESIGNED_QUERY}",
                            str(wheel), "--jar-sha256", "1" * 64, env=https.env)
    assert result.returncode == 0, result.stderr
    assert set(server.requests) == {f"/bucket/{name}{PRESIGNED_QUERY}" for name in ("spark-kpl.jar", wheel.name)}
    assert (root / "lib" / "spark-kpl.jar").read_bytes() == jar.read_bytes()
    assert installed(node_python)["spark-kpl"] == spark_kpl.__version__
    assert f"{base}/spark-kpl.jar?<query hidden> has SHA-256 {sha256(jar)}" in refused.stderr
    printed = result.stdout + result.stderr + refused.stdout + refused.stderr
    assert "X-Amz" not in printed and "AKIDEXAMPLE" not in printed
    assert not [path for path in shared_tmp.rglob("*") if "X-Amz" in path.name or "?" in path.name]


def test_refuses_a_node_without_a_java_runtime_before_installing_anything(node_python, shared_tmp, jar, wheel):
    no_jdk = shared_tmp / "no-jdk"
    result = bootstrap(node_python, shared_tmp / "opt", str(jar), str(wheel),
                       env={**os.environ, "JAVA_HOME": str(no_jdk)})
    assert result.returncode != 0
    assert f"no Java runtime on JAVA_HOME={no_jdk}" in result.stderr and "Java 17 or newer" in result.stderr
    assert not (shared_tmp / "opt").exists()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="reads pyproject.toml with tomllib")
def test_the_package_has_no_dependencies_the_nodes_would_take_from_an_index():
    """The script installs the package with --no-deps: a dependency would be missing on the nodes."""
    assert tomllib.loads((REPO / "python" / "pyproject.toml").read_text())["project"]["dependencies"] == []


@pytest.mark.root_only
def test_as_root_the_daemon_is_placed_for_the_executor_user_whose_jvm_and_python_accept_it(
        node_python, shared_tmp, jar, wheel):
    executor = pwd.getpwnam("nobody")
    root, native_dir = shared_tmp / "opt", shared_tmp / "native"
    result = bootstrap(node_python, root, str(jar), str(wheel), "--native-dir", str(native_dir),
                       "--executor-user", executor.pw_name)
    assert result.returncode == 0, result.stderr
    daemon = next(native_dir.glob("*/kinesis_producer"))
    assert f"owned by {executor.pw_name}" in result.stdout
    assert {path.stat().st_uid for path in (native_dir, daemon.parent, daemon)} == {executor.pw_uid}
    assert oct(native_dir.stat().st_mode & 0o777) == oct(0o700)
    inode = daemon.stat().st_ino

    installed_jar = root / "lib" / "spark-kpl.jar"
    as_executor = {"user": executor.pw_uid, "group": executor.pw_gid, "extra_groups": [], "cwd": "/"}
    python_side = subprocess.run(
        [str(node_python), "-c", "import sys; from spark_kpl.native import install; print(install(*sys.argv[1:]))",
         str(native_dir), str(installed_jar)],
        capture_output=True, text=True, timeout=120, env=node_env(), **as_executor)
    assert python_side.stdout.strip() == str(daemon), python_side.stderr

    runs = shared_tmp / "jvm"
    runs.mkdir()
    classpath = install_main_classpath(installed_jar, runs)
    os.chown(runs, executor.pw_uid, executor.pw_gid)
    (runs / "go").touch()
    jvm_side = subprocess.run(
        ["java", "-XX:-UsePerfData", "-cp", classpath, "sparkkpl.natives.InstallMain", "ours", str(native_dir),
         str(runs / "ready"), str(runs / "go"), "-1"],
        capture_output=True, text=True, timeout=120, **as_executor)
    assert jvm_side.stdout.startswith(f"OK {daemon} {bundled_daemon_sha256(jar)}"), jvm_side.stdout + jvm_side.stderr
    assert daemon.stat().st_ino == inode, "the executor user reused the placed daemon"
