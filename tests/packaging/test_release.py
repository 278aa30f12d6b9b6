"""scripts/release.sh as a maintainer runs it, with a throwaway signing key, and what it writes checked offline
as the registries check an upload: Maven Central's requirements (coordinates, the POM's elements, sources and
javadoc jars, checksums and signatures of every file), `twine check` on the wheel and the sdist, and a CycloneDX
SBOM naming every library the jar bundles with its version and licence.

The release runs in a throwaway repository (its git folder in a temporary folder) over this checkout's files: the
build reuses this checkout's Gradle outputs, and the tag goes into the throwaway repository, never the real one."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[2]
VERSION = (REPO / "python" / "spark_kpl" / "VERSION").read_text().strip()
GROUP, ARTIFACT = "io.github.sparkkpl", "spark-kpl"
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
CHECKSUMS = {"md5": hashlib.md5, "sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha512": hashlib.sha512}
#: What Maven Central requires of a POM, each present and not empty (its "Requirements" page).
REQUIRED_POM_ELEMENTS = ["m:modelVersion", "m:groupId", "m:artifactId", "m:version", "m:name", "m:description",
                         "m:url", "m:licenses/m:license/m:name", "m:developers/m:developer/m:name", "m:scm/m:url",
                         "m:scm/m:connection"]
RELEASED_SECTION = re.compile(r"^## \[(\d[^\]]*)\] - (\d{4}-\d{2}-\d{2})$", re.MULTILINE)

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None,
                                reason="gpg is not installed (scripts/install.sh installs it): it signs the release")


class Signer(NamedTuple):
    home: str  # GNUPGHOME
    fingerprint: str


class Release(NamedTuple):
    out: Path  # dist/release-<version>
    git: Dict[str, str]  # the environment that points git at the throwaway repository
    seconds: float


def test_changelogs_newest_release_is_the_version_the_build_makes():
    """The jar (build.gradle) and the wheel (pyproject.toml) both take their version from python/spark_kpl/VERSION,
    which must name CHANGELOG.md's newest released section: the release commit changes them together."""
    assert "version = file('python/spark_kpl/VERSION').text.trim()" in (REPO / "build.gradle").read_text()
    assert 'version = {file = "spark_kpl/VERSION"}' in (REPO / "python" / "pyproject.toml").read_text()
    changelog = (REPO / "CHANGELOG.md").read_text()
    newest = RELEASED_SECTION.search(changelog)
    assert newest and newest.group(1) == VERSION, f"CHANGELOG.md's newest release is {newest and newest.group(0)}, " \
                                                  f"python/spark_kpl/VERSION says {VERSION}"
    assert changelog.index("## [Unreleased]") < newest.start()


@pytest.fixture(scope="module")
def signer() -> Iterator[Signer]:
    # A short path: gpg-agent's socket lives in GNUPGHOME where /run/user has no folder for this user.
    home = tempfile.mkdtemp(prefix="gpg-")
    env = {**os.environ, "GNUPGHOME": home}
    try:
        subprocess.run(["gpg", "--batch", "--quiet", "--passphrase", "", "--quick-generate-key",
                        "spark-kpl release test <release-test@example.invalid>", "ed25519", "sign", "never"],
                       env=env, check=True, capture_output=True, timeout=60)
        listing = subprocess.run(["gpg", "--batch", "--with-colons", "--list-secret-keys"], env=env, check=True,
                                 capture_output=True, text=True, timeout=60).stdout
        yield Signer(home, next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")))
    finally:
        # The agent that gpg started for this home, and nothing else.
        subprocess.run(["gpgconf", "--kill", "all"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(home, ignore_errors=True)


def throwaway_repository(git_dir: Path, work_tree: Path) -> Dict[str, str]:
    """A repository in ``git_dir`` whose one commit holds ``work_tree``'s files (less what .gitignore leaves out);
    the returned environment points git at it, with no user or system configuration."""
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Release Test",
           "GIT_AUTHOR_EMAIL": "release-test@example.invalid", "GIT_COMMITTER_NAME": "Release Test",
           "GIT_COMMITTER_EMAIL": "release-test@example.invalid"}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the release commit"]):
        subprocess.run(["git", *command], cwd=work_tree, env=env, check=True, capture_output=True, timeout=120)
    return env


def git(env: Dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def release(signer, tmp_path_factory) -> Release:
    real_tags = git(dict(os.environ), "tag", "--list").stdout
    env = {**throwaway_repository(tmp_path_factory.mktemp("git"), REPO), "GNUPGHOME": signer.home}
    started = time.monotonic()
    run = subprocess.run([str(REPO / "scripts" / "release.sh"), "--sign", signer.fingerprint, VERSION], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    print(f"scripts/release.sh took {seconds:.0f} s")
    assert git(dict(os.environ), "tag", "--list").stdout == real_tags, "the release tagged the real repository"
    return Release(REPO / "dist" / f"release-{VERSION}", env, seconds)


def maven_folder(release: Release) -> Path:
    return release.out / "maven" / GROUP.replace(".", "/") / ARTIFACT / VERSION


def verify_signature(signer: Signer, file: Path) -> None:
    run = subprocess.run(["gpg", "--batch", "--status-fd", "1", "--verify", f"{file}.asc", str(file)],
                         env={**os.environ, "GNUPGHOME": signer.home}, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and f"VALIDSIG {signer.fingerprint}" in run.stdout, f"{file.name}.asc: {run.stderr}"


def test_every_maven_file_has_correct_checksums_and_a_signature_that_verifies(release, signer):
    stem = f"{ARTIFACT}-{VERSION}"
    published = [f"{stem}.jar", f"{stem}-sources.jar", f"{stem}-javadoc.jar", f"{stem}.pom", f"{stem}-cyclonedx.json"]
    folder = maven_folder(release)
    others = sorted(p.name for p in folder.iterdir()
                    if p.name not in published and p.name.rsplit(".", 1)[0] not in published)
    assert not others, f"files that are no published file's checksum or signature: {others}"
    for name in published:
        content = (folder / name).read_bytes()
        for extension, algorithm in CHECKSUMS.items():
            assert (folder / f"{name}.{extension}").read_text().strip() == algorithm(content).hexdigest(), \
                f"{name}.{extension}"
        verify_signature(signer, folder / name)


def test_the_pom_has_what_maven_central_requires_and_names_its_own_coordinates(release):
    pom = ElementTree.parse(maven_folder(release) / f"{ARTIFACT}-{VERSION}.pom").getroot()
    missing = [path for path in REQUIRED_POM_ELEMENTS if not (pom.findtext(path, namespaces=POM_NS) or "").strip()]
    assert not missing, f"the POM lacks {missing}"
    coordinates = [pom.findtext(f"m:{name}", namespaces=POM_NS) for name in ("groupId", "artifactId", "version")]
    assert coordinates == [GROUP, ARTIFACT, VERSION]
    assert pom.findtext("m:packaging", default="jar", namespaces=POM_NS) == "jar"
    # Everything the jar needs is inside it: --packages fetches nothing else.
    assert pom.find("m:dependencies", POM_NS) is None


def test_the_jars_are_the_sink_its_sources_and_its_javadoc(release):
    folder = maven_folder(release)
    with zipfile.ZipFile(folder / f"{ARTIFACT}-{VERSION}.jar") as jar:
        # The data source Spark finds by its short name, and the KPL, relocated.
        source = jar.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").decode().strip()
        assert source.replace(".", "/") + ".class" in jar.namelist()
        assert any(name.startswith("sparkkpl/shaded/software/amazon/kinesis/producer/") for name in jar.namelist())
    with zipfile.ZipFile(folder / f"{ARTIFACT}-{VERSION}-sources.jar") as sources:
        java = [name for name in sources.namelist() if name.startswith("sparkkpl/") and name.endswith(".java")]
        assert java and "META-INF/LICENSE" in sources.namelist()
    with zipfile.ZipFile(folder / f"{ARTIFACT}-{VERSION}-javadoc.jar") as javadoc:
        names = javadoc.namelist()
        assert "index.html" in names and any(name.startswith("sparkkpl/") and name.endswith(".html") for name in names)
        assert "META-INF/LICENSE" in names


def python_files(release: Release) -> List[Path]:
    files = sorted(p for p in (release.out / "python").iterdir() if p.suffix in (".whl", ".gz"))
    assert [p.name for p in files] == [f"spark_kpl-{VERSION}-py3-none-any.whl", f"spark_kpl-{VERSION}.tar.gz"]
    return files


def test_the_wheel_and_sdist_pass_twine_check_are_signed_and_carry_the_released_jar(release, signer):
    files = python_files(release)
    run = subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "twine", "check", "--strict",
                          *map(str, files)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    released_jar = (maven_folder(release) / f"{ARTIFACT}-{VERSION}.jar").read_bytes()
    wheel, sdist = files
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(f"spark_kpl/jars/{ARTIFACT}-{VERSION}.jar") == released_jar
    with tarfile.open(sdist) as archive:
        member = archive.extractfile(f"spark_kpl-{VERSION}/spark_kpl/jars/{ARTIFACT}-{VERSION}.jar")
        assert member is not None and member.read() == released_jar
    for file in files:
        assert Path(f"{file}.sha256").read_text().strip() == hashlib.sha256(file.read_bytes()).hexdigest()
        verify_signature(signer, file)


def test_the_sbom_lists_every_bundled_library_with_its_version_and_licence(release):
    folder = maven_folder(release)
    bom = json.loads((folder / f"{ARTIFACT}-{VERSION}-cyclonedx.json").read_text())
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.5"
    sink = bom["metadata"]["component"]
    assert (sink["group"], sink["name"], sink["version"]) == (GROUP, ARTIFACT, VERSION)
    # The jar's own list of what it bundles (META-INF/LICENSE, written from the same resolved libraries).
    with zipfile.ZipFile(folder / f"{ARTIFACT}-{VERSION}.jar") as jar:
        licence = jar.read("META-INF/LICENSE").decode()
    bundled = sorted(re.findall(r"^  (\S+:\S+:\S+): META-INF/licenses/", licence, re.MULTILINE))
    assert bundled, "the jar's META-INF/LICENSE lists no bundled library"
    listed = sorted(f"{c['group']}:{c['name']}:{c['version']}" for c in bom["components"])
    assert listed == bundled
    unlicensed = [c["name"] for c in bom["components"]
                  if not c.get("licenses") or not all(entry["license"].get("id") or entry["license"].get("name")
                                                      for entry in c["licenses"])]
    assert not unlicensed, f"components without a licence: {unlicensed}"
    for component in bom["components"]:
        group, name, version = component["group"], component["name"], component["version"]
        assert component["purl"] == f"pkg:maven/{group}/{name}@{version}?type=jar"


def test_the_release_commit_gets_an_annotated_signed_tag(release):
    tag = f"v{VERSION}"
    assert git(release.git, "cat-file", "-t", tag).stdout.strip() == "tag"
    assert git(release.git, "rev-parse", f"{tag}^{{commit}}").stdout == git(release.git, "rev-parse", "HEAD").stdout
    verified = git(release.git, "tag", "--verify", tag)
    assert verified.returncode == 0, verified.stderr


def release_checks_copy(folder: Path, version_file: str, changelog: str) -> Dict[str, str]:
    """What release.sh checks before it builds (itself, the VERSION file and CHANGELOG.md), in a repository of
    their own."""
    (folder / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "release.sh", folder / "scripts")
    (folder / "python" / "spark_kpl").mkdir(parents=True)
    (folder / "python" / "spark_kpl" / "VERSION").write_text(version_file + "\n")
    (folder / "CHANGELOG.md").write_text(changelog)
    return throwaway_repository(folder / ".git", folder)


@pytest.mark.parametrize("version_file, changelog, asked, refusal", [
    ("0.3.0", "## [Unreleased]\n\n## [0.2.0] - 2026-11-27\n", "0.3.0", "CHANGELOG.md has no section '## [0.3.0]"),
    ("0.3.0", "## [Unreleased]\n\n## [0.3.0]\n", "0.3.0", "CHANGELOG.md has no section '## [0.3.0]"),
    ("0.2.0", "## [0.3.0] - 2026-12-01\n\n## [0.2.0] - 2026-11-27\n", "0.3.0", "VERSION says 0.2.0"),
    ("0.3.0", "## [0.3.0] - 2026-12-01\n", "v0.3.0", "MAJOR.MINOR.PATCH"),
])
def test_a_version_the_commit_does_not_release_is_refused_before_building(tmp_path, version_file, changelog, asked,
                                                                          refusal):
    env = release_checks_copy(tmp_path, version_file, changelog)
    run = subprocess.run([str(tmp_path / "scripts" / "release.sh"), asked], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and refusal in run.stderr, run.stderr
    assert not git(env, "tag", "--list").stdout and not (tmp_path / "build").exists()


def test_a_tree_with_changes_is_refused(tmp_path):
    env = release_checks_copy(tmp_path, "0.3.0", "## [0.3.0] - 2026-12-01\n")
    (tmp_path / "CHANGELOG.md").write_text("## [0.3.0] - 2026-12-01\n\n- one more line\n")
    run = subprocess.run([str(tmp_path / "scripts" / "release.sh"), "0.3.0"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "the working tree has changes" in run.stderr, run.stderr
