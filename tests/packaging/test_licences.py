"""The jar carries the sink's licence and notice and every bundled library's own, each under a name of its
own (never one file kept by its position in a merge). The list of bundled libraries is the build's
(build.gradle's bundledDependencies), not a list kept here, so a new dependency cannot slip through."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path
from typing import Dict, List, NamedTuple

import pytest

import spark_kpl

REPO = Path(__file__).resolve().parents[2]
#: What counts as a licence or notice file in a bundled jar: at its root or in META-INF, a name holding
#: "license", "notice" or "copying" (FastDoubleParser-LICENSE, THIRD_PARTY_NOTICES), or httpclient's DEPENDENCIES.
LICENCE_FILE = re.compile(r"(?i)(META-INF/)?([^/]*(licen[cs]e|notice|copying)[^/]*|DEPENDENCIES)")
RELOCATED = "sparkkpl/shaded/"


class Bundled(NamedTuple):
    coordinates: str  # group:artifact:version
    jar: Path

    @property
    def folder(self) -> str:
        group, artifact, _ = self.coordinates.split(":")
        return f"META-INF/licenses/{group}/{artifact}/"

    def licence_files(self) -> Dict[str, bytes]:
        with zipfile.ZipFile(self.jar) as jar:
            return {name: jar.read(name) for name in jar.namelist()
                    if LICENCE_FILE.fullmatch(name) and not name.endswith(".class")}


@pytest.fixture(scope="module")
def bundled() -> List[Bundled]:
    run = subprocess.run([str(REPO / "scripts" / "build.sh"), "bundledDependencies"], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [line.split(" ", 1) for line in run.stdout.splitlines() if re.match(r"\S+:\S+:\S+ /", line)]
    listed = [Bundled(coordinates, Path(jar)) for coordinates, jar in lines]
    assert any(b.coordinates.startswith("software.amazon.kinesis:amazon-kinesis-producer:") for b in listed), run.stdout
    return listed


@pytest.fixture(scope="module")
def jar() -> Dict[str, bytes]:
    """The built jar's META-INF files, and the names of all its other entries (as empty values)."""
    with zipfile.ZipFile(spark_kpl.jar_path()) as built:
        return {name: built.read(name) if name.startswith("META-INF/") else b"" for name in built.namelist()}


def test_every_bundled_librarys_licence_and_notice_files_are_in_the_jar_under_its_own_folder(bundled, jar):
    missing = []
    for library in bundled:
        for name, text in library.licence_files().items():
            kept = library.folder + name.rsplit("/", 1)[-1]
            if jar.get(kept) != text:
                missing.append(f"{library.coordinates}: its {name} is not the jar's {kept}")
        kept_names = [name[len(library.folder):] for name in jar if name.startswith(library.folder)]
        if not any(re.match(r"(?i)(licen[cs]e|copying)", name) for name in kept_names):
            missing.append(f"{library.coordinates}: no licence in {library.folder} (it has {kept_names})")
    assert not missing, "\n".join(missing)


def test_the_jars_license_and_notice_are_the_sinks_own_then_every_bundled_library(bundled, jar):
    licence = jar["META-INF/LICENSE"].decode()
    notice = jar["META-INF/NOTICE"].decode()
    assert licence.startswith((REPO / "LICENSE").read_text()) and notice.startswith((REPO / "NOTICE").read_text())
    unlisted = [b.coordinates for b in bundled if f"{b.coordinates}: {b.folder}" not in licence]
    assert not unlisted, f"META-INF/LICENSE does not list {unlisted}"
    dropped = [f"{b.coordinates} {name}" for b in bundled for name, text in b.licence_files().items()
               if "notice" in name.lower() and text.decode().strip() not in notice]
    assert not dropped, f"META-INF/NOTICE leaves out the notices of {dropped}"


def test_everything_the_jar_bundles_comes_from_a_listed_library(bundled, jar):
    """So the list the licences are collected from is the whole of what the jar carries."""
    provided = set()
    for library in bundled:
        with zipfile.ZipFile(library.jar) as dependency:
            provided.update(dependency.namelist())
    foreign = [name for name in jar if not name.endswith("/") and not name.startswith("META-INF/")
               and (not name.startswith("sparkkpl/") or name.startswith(RELOCATED))]
    unaccounted = [name for name in foreign if name.removeprefix(RELOCATED) not in provided]
    assert foreign and not unaccounted, f"{len(unaccounted)} entries from no listed library: {unaccounted[:10]}"
