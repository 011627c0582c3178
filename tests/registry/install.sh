#!/usr/bin/env bash
# Installs what the OCI registry tests need, if missing: Debian's
# docker-registry (the CNCF distribution registry), skopeo (interop and
# building test layouts) and htpasswd (apache2-utils, for basic auth).
# Idempotent and quiet; run as root (CI) or with sudo.
set -euo pipefail

missing=()
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
command -v htpasswd >/dev/null 2>&1 || missing+=(apache2-utils)

if [ ${#missing[@]} -gt 0 ]; then
    "$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh" "${missing[@]}"
fi
