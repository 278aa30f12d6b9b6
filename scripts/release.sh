#!/usr/bin/env bash
# Builds release VERSION into dist/release-VERSION and tags the commit vVERSION; uploads nothing. The
# procedure, and what to upload where, is docs/releasing.md.
#
#   scripts/release.sh [--sign KEYID] VERSION
#
# Refuses unless the commit is the release's own: python/spark_kpl/VERSION says VERSION, CHANGELOG.md's
# newest released section is "## [VERSION] - YYYY-MM-DD", the working tree is clean and tag vVERSION is new.
# Writes:
#   dist/release-VERSION/maven/io/github/sparkkpl/spark-kpl/VERSION/: the shaded jar, its -sources and
#       -javadoc jars, the POM and the CycloneDX SBOM (-cyclonedx.json), each with .md5, .sha1, .sha256 and
#       .sha512 files (Maven Central's layout)
#   dist/release-VERSION/python/: the wheel and the sdist, both passed by `twine check`, with .sha256 files
# With a key (--sign KEYID, or SPARK_KPL_SIGNING_KEY; gpg reads GNUPGHOME as always), each of those files
# gets a detached ASCII-armoured signature (.asc), checked once written, and the tag is signed too.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/release.sh [--sign KEYID] VERSION" >&2; exit 2; }
refuse() { echo "release: $*" >&2; exit 1; }

key=${SPARK_KPL_SIGNING_KEY:-}
version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sign) [ $# -ge 2 ] || usage; key="$2"; shift 2 ;;
    -*) usage ;;
    *) [ -z "$version" ] || usage; version="$1"; shift ;;
  esac
done
[ -n "$version" ] || usage
python=${PYTHON:-.venv/bin/python}

# ---- Is this commit release VERSION? ----
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || refuse "VERSION is MAJOR.MINOR.PATCH (docs/versioning.md), not '$version'"
built_version=$(cat python/spark_kpl/VERSION)
[ "$built_version" = "$version" ] || refuse "python/spark_kpl/VERSION says $built_version: set it to $version and commit"
grep -qE "^## \[$version\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" CHANGELOG.md \
  || refuse "CHANGELOG.md has no section '## [$version] - YYYY-MM-DD': move [Unreleased]'s entries into one and commit"
newest=$(grep -m1 -oE '^## \[[0-9][^]]*\]' CHANGELOG.md)
[ "$newest" = "## [$version]" ] || refuse "CHANGELOG.md's newest released section is $newest, not [$version]"
[ -z "$(git status --porcelain)" ] || refuse "the working tree has changes; the release is built from a commit"
! git rev-parse -q --verify "refs/tags/v$version" >/dev/null || refuse "tag v$version exists already"
"$python" -m twine --version >/dev/null 2>&1 || refuse "$python has no twine: run scripts/install.sh"
if [ -n "$key" ]; then
  gpg --batch --list-secret-keys "$key" >/dev/null 2>&1 || refuse "gpg has no secret key '$key' (GNUPGHOME=${GNUPGHOME:-~/.gnupg})"
fi

# ---- Build ----
scripts/build.sh releaseRepo
PYTHON="$python" scripts/build-wheel.sh --sdist >/dev/null
out="dist/release-$version"
rm -rf "$out"
mkdir -p "$out/python"
cp -r build/release-repo "$out/maven"
cp "dist/spark_kpl-$version.tar.gz" dist/spark_kpl-"$version"-*.whl "$out/python/"
"$python" -m twine check --strict "$out"/python/*
for file in "$out"/python/*; do
  (cd "$(dirname "$file")" && sha256sum "$(basename "$file")" | cut -d' ' -f1 > "$(basename "$file").sha256")
done

# ---- Sign: every file but the checksums ----
if [ -n "$key" ]; then
  find "$out" -type f ! -name '*.md5' ! -name '*.sha1' ! -name '*.sha256' ! -name '*.sha512' | sort | while read -r file; do
    gpg --batch --yes --quiet --local-user "$key" --armor --detach-sign --output "$file.asc" "$file"
    gpg --batch --quiet --verify "$file.asc" "$file" 2>/dev/null || refuse "the signature of $file does not verify"
  done
fi

# ---- Tag the commit the release was built from ----
if [ -n "$key" ]; then
  git tag --sign --local-user "$key" -m "spark-kpl $version" "v$version"
else
  git tag --annotate -m "spark-kpl $version" "v$version"
fi
echo "release: spark-kpl $version in $out, tagged v$version ($(git rev-parse --short HEAD))$([ -n "$key" ] && echo ", signed by $key")"
