#!/usr/bin/env bash
# Installs the Debian packages named as arguments, quietly: as root (CI),
# else with sudo. The install scripts of the tests' tools share it.
#
# Usage: apt-install.sh PACKAGE...
set -euo pipefail

if [ $# -eq 0 ]; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
