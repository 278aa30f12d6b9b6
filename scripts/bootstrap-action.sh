#!/usr/bin/env bash
# Cluster bootstrap action for spark-kpl. Runs on every node at provisioning, as the user the
# executors run as; safe to run again. It:
#   1. checks the node can run the KPL's native daemon (Linux x86_64 or aarch64, glibc new enough);
#   2. installs the spark-kpl jar at a fixed path (<root>/lib/spark-kpl.jar) and the Python package;
#   3. pre-places the native daemon where executors look for it, so no executor extracts it.
# Then point Spark at both (spark-defaults.conf): spark.jars <root>/lib/spark-kpl.jar and, where the
# executors' java.io.tmpdir is not /tmp (YARN containers), spark.kpl.nativeDir <native dir>.
#
# Usage: bootstrap-action.sh --jar JAR --package PKG [--root DIR] [--native-dir DIR] [--python PY]
#   JAR, PKG: a local path, an http(s):// URL or an s3:// URL (s3 needs the aws CLI).
#   PKG is anything pip installs: a wheel, an sdist or a source folder.
set -euo pipefail

root=/opt/spark-kpl
native_dir=""  # empty: where executors look by default, <java.io.tmpdir>/spark-kpl-<user>
python=python3
jar_source=""
package_source=""

fail() { echo "spark-kpl bootstrap: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --jar) jar_source="$2"; shift 2 ;;
    --package) package_source="$2"; shift 2 ;;
    --root) root="$2"; shift 2 ;;
    --native-dir) native_dir="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    *) fail "unknown argument '$1' (see the usage at the top of this script)" ;;
  esac
done
[ -n "$jar_source" ] || fail "--jar is required"
[ -n "$package_source" ] || fail "--package is required"

# The daemon in KPL 1.0.9 needs these glibc versions (read off the binaries with objdump -T).
check_platform() {
  local arch needed have
  [ "$(uname -s)" = Linux ] || fail "the KPL ships a native daemon for Linux nodes only, not $(uname -s)"
  arch=$(uname -m)
  case "$arch" in
    x86_64) needed=2.12 ;;
    aarch64) needed=2.25 ;;
    *) fail "the KPL ships no native daemon for $arch; it has linux-x86_64 and linux-aarch64" ;;
  esac
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  [ -n "$have" ] || fail "cannot tell this node's glibc version (getconf GNU_LIBC_VERSION); the KPL daemon needs glibc $needed or newer"
  if [ "$(printf '%s\n%s\n' "$needed" "$have" | sort -V | head -n 1)" != "$needed" ]; then
    fail "this node has glibc $have; the KPL daemon for $arch needs glibc $needed or newer. Use a newer OS image."
  fi
  echo "spark-kpl bootstrap: $arch with glibc $have (needs $needed): ok"
}

# Copies a source to a local file; an existing identical file is left alone.
fetch() {
  local source="$1" target="$2" tmp
  tmp=$(mktemp "$(dirname "$target")/.fetch.XXXXXX")
  case "$source" in
    s3://*) aws s3 cp --only-show-errors "$source" "$tmp" ;;
    http://*|https://*) curl -fsSL -o "$tmp" "$source" ;;
    *) cp "$source" "$tmp" ;;
  esac
  if [ -f "$target" ] && cmp -s "$tmp" "$target"; then
    rm -f "$tmp"
    echo "spark-kpl bootstrap: $target already in place"
  else
    chmod 0644 "$tmp"
    mv -f "$tmp" "$target"  # atomic: a running job never sees half a jar
    echo "spark-kpl bootstrap: installed $target"
  fi
}

check_platform
mkdir -p "$root/lib"
jar="$root/lib/spark-kpl.jar"
fetch "$jar_source" "$jar"

package="$package_source"
case "$package_source" in
  s3://*|http://*|https://*)
    package="$root/lib/$(basename "$package_source")"
    fetch "$package_source" "$package" ;;
esac
"$python" -m pip install --quiet --disable-pip-version-check --upgrade "$package"
echo "spark-kpl bootstrap: Python package installed for $python"

native_args=()
[ -z "$native_dir" ] || native_args=(--dir "$native_dir")
daemon=$("$python" -m spark_kpl extract-native "${native_args[@]}" --jar "$jar")
echo "spark-kpl bootstrap: native daemon ready at $daemon"
echo "spark-kpl bootstrap: add to spark-defaults.conf: spark.jars $jar"
echo "spark-kpl bootstrap: and, where executors' java.io.tmpdir is not /tmp (YARN): spark.kpl.nativeDir $(dirname "$(dirname "$daemon")")"
