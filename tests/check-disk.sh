#!/usr/bin/env bash
# Stops `make test` before it builds if the disk holding the build has too
# little room for it, with a message that says so, rather than letting the
# linker die half-way with "No space left on device" or a bus error.
#
# Usage: check-disk.sh TARGET_DIR NEED_MIB
#
# NEED_MIB is what a build from nothing writes into TARGET_DIR; what
# TARGET_DIR holds already counts towards it. XFN_SKIP_DISK_CHECK=1 skips
# the check.
set -euo pipefail

target=$1
need_mib=$2
if [ "${XFN_SKIP_DISK_CHECK:-0}" = 1 ]; then
    exit 0
fi
mkdir -p "$target"
have_mib=$(du -sm "$target" | cut -f1)
free_mib=$(df -Pm "$target" | awk 'NR == 2 { print $4 }')
missing_mib=$((need_mib - have_mib))
if [ "$missing_mib" -gt "$free_mib" ]; then
    gib() { awk -v mib="$1" 'BEGIN { printf "%.1f GiB", mib / 1024 }'; }
    echo "check-disk: the test build needs about $(gib "$need_mib") in $target;" \
        "it holds $(gib "$have_mib") and the disk has $(gib "$free_mib") free," \
        "$(gib $((missing_mib - free_mib))) short." >&2
    echo "check-disk: free some space, or point CARGO_TARGET_DIR at a larger disk" \
        "(XFN_SKIP_DISK_CHECK=1 tries anyway)." >&2
    exit 1
fi
