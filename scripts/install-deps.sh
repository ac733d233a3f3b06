#!/usr/bin/env bash
# Installs what msgbench needs and does not find: the Debian packages of every
# target whose runtime is missing (from targets/*/target.toml), the test tools
# (headless Chromium) with --test, and the Python package with its dependencies
# in .venv. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[ "${1:-}" = "--test" ] && with_tests=1

packages=$(python3 -c 'from msgbench.targets import missing_packages; print(" ".join(missing_packages()))')
if [ "$with_tests" = 1 ] && ! command -v chromium >/dev/null; then
  packages="$packages chromium"
fi
python3 -c 'import venv, ensurepip' 2>/dev/null || packages="$packages python3-venv"

if [ -n "${packages// /}" ]; then
  echo "msgbench: installing Debian packages:$packages" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # Brokers (redis-server, mosquitto, rabbitmq-server, nats-server) must not start as
  # system services when installed: msgbench starts its own on free ports and leaves
  # nothing running. policy-rc.d tells the packages' scripts not to start them.
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  # shellcheck disable=SC2086
  $sudo apt-get install -y -q --no-install-recommends $packages
  if [ "$own_policy" = 1 ]; then $sudo rm -f /usr/sbin/policy-rc.d; fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.msgbench-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q 'pip==26.3'
  .venv/bin/python -m pip install -q -c constraints.txt -e '.[test]'
  touch "$stamp"
fi
