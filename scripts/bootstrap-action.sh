#!/usr/bin/env bash
# Cluster bootstrap action for spark-kpl. Runs on every node at provisioning, as root or as the user
# the executors run as; safe to run again. It:
#   1. checks the node can run the KPL's native daemon (Linux x86_64 or aarch64, glibc new enough) and
#      has the Java runtime that places it;
#   2. downloads the jar and the Python package and checks their SHA-256 when given, before anything
#      is installed;
#   3. installs the jar at a fixed path (<root>/lib/spark-kpl.jar), and the Python package (it has no
#      dependencies: nothing is taken from an index);
#   4. pre-places the native daemon where executors look for it, as the executors' user, with the
#      jar's own placement (the code executors run), so the folder passes their owner checks.
# Then point Spark at both (spark-defaults.conf): spark.jars <root>/lib/spark-kpl.jar and, with
# --native-dir, spark.kpl.nativeDir <native dir>. (Without it the daemon goes to /tmp/spark-kpl-<user>,
# where executors look by default, in YARN containers too.)
#
# Usage: bootstrap-action.sh --jar JAR --package PKG [--jar-sha256 HEX] [--package-sha256 HEX]
#          [--executor-user USER] [--root DIR] [--native-dir DIR] [--python PY]
#   JAR, PKG: a local path, an https:// URL (a presigned one too) or an s3:// URL (s3 needs the aws
#   CLI). Plain http:// is refused: anyone on the path could swap the jar that executors run.
#   PKG is a wheel, an sdist or a source folder (a folder has no single SHA-256).
#   --executor-user: when this runs as root and executors as USER, the daemon is placed as USER.
set -euo pipefail
umask 022  # executors, whoever they run as, read the jar and the installed package

root=/opt/spark-kpl
native_dir=""  # empty: where executors look by default, /tmp/spark-kpl-<user>
python=python3
jar_source=""
jar_sha256=""
package_source=""
package_sha256=""
executor_user=""

fail() { echo "spark-kpl bootstrap: $*" >&2; exit 1; }
say() { echo "spark-kpl bootstrap: $*"; }

while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || fail "$1 needs a value (see the usage at the top of this script)"
  case "$1" in
    --jar) jar_source="$2" ;;
    --jar-sha256) jar_sha256="$2" ;;
    --package) package_source="$2" ;;
    --package-sha256) package_sha256="$2" ;;
    --executor-user) executor_user="$2" ;;
    --root) root="$2" ;;
    --native-dir) native_dir="$2" ;;
    --python) python="$2" ;;
    *) fail "unknown argument '$1' (see the usage at the top of this script)" ;;
  esac
  shift 2
done

# A source as it may be printed: a presigned URL's query string is a credential.
shown() {
  case "$1" in
    *\?*) printf '%s?<query hidden>' "${1%%\?*}" ;;
    *) printf '%s' "$1" ;;
  esac
}

# The file name a source ends in, without any query string or fragment.
file_name() {
  local path="${1%%[?#]*}"
  printf '%s' "${path##*/}"
}

check_source() {
  local option="$1" source="$2"
  [ -n "$source" ] || fail "$option is required"
  case "${source,,}" in
    http://*) fail "$option: plain http:// is refused ($(shown "$source")): anyone on the network path could" \
      "replace the file that every executor runs. Use https://, s3:// or a local path." ;;
    https://*|s3://*) ;;
    *://*) fail "$option: unsupported URL scheme in $(shown "$source"); use https://, s3:// or a local path" ;;
  esac
}

check_sha256_argument() {
  local option="$1" value="$2"
  [ -z "$value" ] || [[ "$value" =~ ^[0-9a-fA-F]{64}$ ]] \
    || fail "$option: expected 64 hexadecimal digits (a SHA-256), got '$value'"
}

# Executors refuse a daemon folder that is not their user's own: place it as that user.
executor_user_command=()
check_executor_user() {
  [ -n "$executor_user" ] || return 0
  local uid
  uid=$(id -u "$executor_user" 2>/dev/null) || fail "--executor-user: no user '$executor_user' on this node"
  [ "$uid" != "$(id -u)" ] || return 0
  [ "$(id -u)" = 0 ] || fail "--executor-user $executor_user: placing the daemon as another user needs root" \
    "(this runs as $(id -un)); run as root, or as $executor_user without --executor-user"
  command -v runuser >/dev/null || fail "--executor-user needs the runuser command (util-linux)"
  executor_user_command=(runuser -u "$executor_user" --)
}

# The daemon is placed from /, which every user may enter: paths given relative to here must survive.
absolute() {
  case "$1" in
    /*) printf '%s' "$1" ;;
    *) printf '%s/%s' "$PWD" "$1" ;;
  esac
}
root=$(absolute "$root")
[ -z "$native_dir" ] || native_dir=$(absolute "$native_dir")
[[ "$python" != */* ]] || python=$(absolute "$python")

check_source --jar "$jar_source"
check_source --package "$package_source"
check_sha256_argument --jar-sha256 "$jar_sha256"
check_sha256_argument --package-sha256 "$package_sha256"
if [ -n "$package_sha256" ] && [ -d "$package_source" ]; then
  fail "--package-sha256: $package_source is a folder, which has no single SHA-256; give a wheel or an sdist"
fi
check_executor_user

# The daemon in KPL 1.1.1 (as in 1.0.9) needs these glibc versions (read off the binaries with objdump -T).
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
  say "$arch with glibc $have (needs $needed): ok"
}

# The daemon is placed by the jar's own code, in the JVM Spark would start: $JAVA_HOME/bin/java, else
# java on the PATH (as spark_kpl.native looks for it).
check_java() {
  local java="" where="PATH"
  if [ -n "${JAVA_HOME:-}" ]; then
    java="$JAVA_HOME/bin/java" where="JAVA_HOME=$JAVA_HOME"
  else
    java=$(command -v java || true)
  fi
  [ -n "$java" ] && [ -x "$java" ] || fail "no Java runtime on $where: the native daemon is placed by the jar's" \
    "own code, which runs in a JVM; install Java 17 or newer, or set JAVA_HOME"
  say "Java runtime $java: ok"
}

# Copies a source to a local file. curl is held to https, redirects included.
download() {
  local source="$1" target="$2"
  case "$source" in
    s3://*) aws s3 cp --only-show-errors "$source" "$target" ;;
    https://*) curl --proto =https --proto-redir =https --fail --silent --show-error --location \
      --output "$target" -- "$source" ;;
    *) cp -- "$source" "$target" ;;
  esac
}

# Downloads a source into the staging folder and checks its SHA-256 if one is expected.
stage() {
  local option="$1" source="$2" target="$3" expected="${4,,}" actual
  download "$source" "$target" || fail "$option: cannot fetch $(shown "$source")"
  [ -n "$expected" ] || return 0
  actual=$(sha256sum "$target" | cut -d ' ' -f 1)
  [ "$actual" = "$expected" ] || fail "$option: $(shown "$source") has SHA-256 $actual, but $expected was" \
    "expected; nothing was installed"
  say "$(file_name "$source"): SHA-256 $actual as expected"
}

# Puts a staged file in place atomically (a running job never sees half a jar); an identical file is
# left alone.
install_file() {
  local staged="$1" target="$2" tmp
  if [ -f "$target" ] && cmp -s "$staged" "$target"; then
    say "$target already in place"
    return 0
  fi
  tmp=$(mktemp "$(dirname "$target")/.install.XXXXXX")
  cp -- "$staged" "$tmp"
  chmod 0644 "$tmp"
  mv -f "$tmp" "$target"
  say "installed $target"
}

# A folder named by --native-dir that does not exist yet is made for the executor user: its parent
# may be writable by root only. An existing one is left as it is: the placement checks its owner.
make_native_dir_for_executor_user() {
  if [ -z "$native_dir" ] || [ ${#executor_user_command[@]} -eq 0 ] || [ -e "$native_dir" ]; then
    return 0
  fi
  mkdir -p -- "$(dirname -- "$native_dir")"
  mkdir -m 0700 -- "$native_dir"
  chown -h -- "$executor_user:" "$native_dir"
}

check_platform
check_java
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

stage --jar "$jar_source" "$staging/spark-kpl.jar" "$jar_sha256"
package="$package_source"
if [ ! -d "$package_source" ]; then
  package="$staging/$(file_name "$package_source")"  # pip reads the version from the file's name
  stage --package "$package_source" "$package" "$package_sha256"
fi

mkdir -p "$root/lib"
jar="$root/lib/spark-kpl.jar"
install_file "$staging/spark-kpl.jar" "$jar"

"$python" -m pip install --quiet --disable-pip-version-check --no-deps --upgrade "$package"
say "Python package installed for $python"

make_native_dir_for_executor_user
native_args=(--jar "$jar")
[ -z "$native_dir" ] || native_args+=(--dir "$native_dir")
# ${a[@]+...}: bash before 4.4 calls an empty array unset.
daemon=$(cd / && ${executor_user_command[@]+"${executor_user_command[@]}"} \
  "$python" -m spark_kpl extract-native "${native_args[@]}")
say "native daemon ready at $daemon (owned by $(stat -c %U "$daemon"))"
say "add to spark-defaults.conf: spark.jars $jar"
[ -z "$native_dir" ] || say "and: spark.kpl.nativeDir $native_dir"
