#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine, and nothing twice.
#
#   scripts/install.sh --demo   what scripts/demo.sh's job needs: JDK 17, Gradle and Node.js (apt), Spark 4.1
#                               in .venv (python/requirements-demo.txt, PyPI, pinned), kinesis-local in .tools
#                               (npm, pinned)
#   scripts/install.sh          all of that, plus what the tests need: patchelf, gpg and (on x86_64) qemu-user-static
#                               with arm64 glibc and libuuid (apt), the test, lint
#                               and release tools in .venv (python/requirements-dev.txt), and each other Spark line in
#                               .venv-sparkNN (python/requirements-sparkNN.txt); and the benchmarks'
#                               harness (bench/harness) in .venv
set -euo pipefail
cd "$(dirname "$0")/.."

KINESIS_LOCAL_VERSION=0.6.2

demo_only=false
case "${1:-}" in
  --demo) demo_only=true ;;
  "") ;;
  *) echo "usage: scripts/install.sh [--demo]" >&2; exit 2 ;;
esac

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v gradle >/dev/null || missing+=(gradle)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# Tests only: rewrites copies of the KPL daemon whose loader or library cannot be found.
$demo_only || command -v patchelf >/dev/null || missing+=(patchelf)
# Tests only: signs the release scripts/release.sh builds (tests/packaging/test_release.py); the agent holds the key.
$demo_only || command -v gpg >/dev/null || missing+=(gpg)
$demo_only || command -v gpg-agent >/dev/null || missing+=(gpg-agent)
# Tests only, on x86_64: runs the KPL's aarch64 daemon under qemu-user with Debian's arm64 libraries
# (tests/sink/daemon/test_aarch64_daemon.py), as Graviton nodes run it.
arm64_libraries=(libc6:arm64 libgcc-s1:arm64 libuuid1:arm64)
if ! $demo_only && [ "$(uname -m)" = x86_64 ]; then
  command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
  dpkg -s "${arm64_libraries[@]}" >/dev/null 2>&1 || missing+=("${arm64_libraries[@]}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install: apt packages ${missing[*]}"
  case " ${missing[*]} " in
    *:arm64*) dpkg --print-foreign-architectures | grep -qx arm64 || as_root dpkg --add-architecture arm64 ;;
  esac
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# A venv with pinned requirements; the package and its test harness are installed editable into each.
install_venv() {
  local venv="$1" requirements="$2"
  if [ ! -x "$venv/bin/python" ]; then
    echo "install: Python venv in $venv"
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e python -e python/testing
}
if $demo_only; then
  install_venv .venv python/requirements-demo.txt
else
  # One venv per Spark line the jar supports.
  install_venv .venv python/requirements-dev.txt
  for requirements in python/requirements-spark*.txt; do
    line=$(basename "$requirements" .txt)
    install_venv ".venv-${line#requirements-}" "$requirements"
  done
  # The benchmarks' harness (bench/, scripts/soak.py, scripts/reliability.py): in .venv only, where they run.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e bench/harness
fi

installed_version() {
  node -p 'require("./.tools/node_modules/kinesis-local/package.json").version' 2>/dev/null || true
}
if [ "$(installed_version)" != "$KINESIS_LOCAL_VERSION" ]; then
  echo "install: kinesis-local $KINESIS_LOCAL_VERSION in .tools"
  npm install --silent --prefix .tools --no-audit --no-fund --save-exact "kinesis-local@$KINESIS_LOCAL_VERSION" >/dev/null
fi
