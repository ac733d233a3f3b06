#!/usr/bin/env bash
# Installs what msgbench needs and does not find: the Python package with its pinned
# dependencies in .venv, then the Debian packages of every target whose runtime is
# missing (from targets/*/target.toml), and the test tools (headless Chromium) with
# --test. Safe to run again: it only installs what is missing.
#
# The venv comes first so that the list of Debian packages is computed by msgbench
# with its own dependencies, never with whatever the system's Python happens to hold.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
UV_VERSION=0.13.8
[ "${1:-}" = "--test" ] && with_tests=1

if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
apt_updated=0

apt_install() {
  echo "msgbench: installing Debian packages: $*" >&2
  if [ "$apt_updated" = 0 ]; then $sudo apt-get update -q; apt_updated=1; fi
  # Brokers (redis-server, mosquitto, rabbitmq-server, nats-server) must not start as
  # system services when installed: msgbench starts its own on free ports and leaves
  # nothing running. policy-rc.d tells the packages' scripts not to start them.
  local own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  $sudo apt-get install -y -q --no-install-recommends "$@"
  if [ "$own_policy" = 1 ]; then $sudo rm -f /usr/sbin/policy-rc.d; fi
}

python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv

# A line before each step that can take a while: nothing is silent for long.
if [ ! -x .venv/bin/python ]; then
  echo "msgbench: creating the Python environment in .venv" >&2
  python3 -m venv .venv
fi
stamp=.venv/.msgbench-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  # uv installs the same pinned set as pip would, in 3 s where pip took 20 (it fetches
  # and unpacks in parallel and links from its cache): docs/decisions.md, "The install".
  # UV_NATIVE_TLS: the system's certificates, as pip here uses (PIP_CERT).
  echo "msgbench: installing uv $UV_VERSION into .venv" >&2
  .venv/bin/python -m pip install -q "uv==$UV_VERSION"
  echo "msgbench: installing msgbench and its pinned Python packages (constraints.txt) into .venv" >&2
  UV_NATIVE_TLS=1 .venv/bin/uv pip install -q --python .venv/bin/python -c constraints.txt -e '.[test]' 'pip==26.3'
  touch "$stamp"
fi

echo "msgbench: looking for missing runtimes and services" >&2
packages=$(.venv/bin/python -c 'from msgbench.workers.targets import missing_packages; print(" ".join(missing_packages()))')
if [ "$with_tests" = 1 ] && ! command -v chromium >/dev/null; then
  packages="$packages chromium"
fi
# targets/c's lint runs cppcheck after GCC's analyzer, kits/caf's after g++ -Werror and
# clang-format; both skip it where it is missing.
if [ "$with_tests" = 1 ] && ! command -v cppcheck >/dev/null; then
  packages="$packages cppcheck"
fi
# The erlang and elixir targets' lint checks their launch scripts with shellcheck and
# skips it where it is missing; CI must not skip it.
if [ "$with_tests" = 1 ] && ! command -v shellcheck >/dev/null; then
  packages="$packages shellcheck"
fi
# Hosts (--hosts): ssh and rsync reach and deploy; the tests run an sshd per namespace.
command -v ssh >/dev/null || packages="$packages openssh-client"
command -v rsync >/dev/null || packages="$packages rsync"
if [ "$with_tests" = 1 ] && [ ! -x /usr/sbin/sshd ]; then
  packages="$packages openssh-server"
fi
if [ -n "${packages// /}" ]; then
  # shellcheck disable=SC2086
  apt_install $packages
fi
