#!/usr/bin/env bash
# Prepares third_party/wasmtime: the wasmtime release of Cargo.toml's
# `[patch.crates-io]`, taken from crates.io, checked against its pinned
# checksum, with our patches applied. Cargo builds xfn against it.
#
# Idempotent: does nothing when the prepared copy matches the release and
# the patches. Needs cargo (to download the crate from the configured
# registry), sha256sum, tar and patch.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
name=wasmtime
version=50.0.1
# crates.io's checksum of wasmtime-50.0.1.crate (Cargo.lock's, before the patch).
sha256=fdfacce893df54d319b29720e79edb001cd1b48faaf78fdb3b9c608eaeeea29f
dest="$here/$name"

# Cargo.toml's [patch] only takes effect for the version the workspace asks
# for; for any other, cargo would warn that the patch is unused and build
# the release as it is, without the fix.
wanted="$(sed -n 's/^wasmtime = { version = "\([^"]*\)".*/\1/p' "$here/../Cargo.toml")"
if [[ "$wanted" != "$version" ]]; then
    echo "third_party: Cargo.toml asks for wasmtime '${wanted:-?}', but prepare.sh patches $version;" \
        "set version and sha256 in third_party/prepare.sh to the new release and check that its patches still apply" >&2
    exit 1
fi
patches=("$here"/wasmtime-*.patch)

# What the prepared copy is made of: the release and each patch's content.
stamp="$name-$version $sha256 $(cat "${patches[@]}" | sha256sum | cut -d' ' -f1)"
if [[ -f "$dest/.prepared" && "$(cat "$dest/.prepared")" == "$stamp" ]]; then
    exit 0
fi

scratch=""
work=""
trap 'rm -rf "$scratch" "$work"' EXIT

cargo_home="${CARGO_HOME:-$HOME/.cargo}"
find_crate() {
    find "$cargo_home/registry/cache" -name "$name-$version.crate" -print -quit 2>/dev/null || true
}

crate="$(find_crate)"
if [[ -z "$crate" ]]; then
    # Let cargo download it, through whatever registry it is configured for,
    # from a throwaway package outside this workspace (whose manifest needs
    # the prepared copy to exist already).
    scratch="$(mktemp -d)"
    mkdir -p "$scratch/src"
    touch "$scratch/src/lib.rs"
    cat > "$scratch/Cargo.toml" <<EOF
[package]
name = "xfn-fetch-wasmtime"
version = "0.0.0"
edition = "2024"

[dependencies]
$name = { version = "=$version", default-features = false }
EOF
    echo "third_party: downloading $name $version" >&2
    if ! (cd "$here/.." && cargo fetch --quiet --manifest-path "$scratch/Cargo.toml"); then
        echo "third_party: cannot download $name $version (above: cargo's reason); xfn builds against" \
            "a patched copy of it, so check that cargo reaches its registry (crates.io or your mirror)" \
            "and run make again" >&2
        exit 1
    fi
    crate="$(find_crate)"
    if [[ -z "$crate" ]]; then
        echo "third_party: cargo fetched $name $version, but its .crate is not under $cargo_home/registry/cache" >&2
        exit 1
    fi
fi

actual="$(sha256sum "$crate" | cut -d' ' -f1)"
if [[ "$actual" != "$sha256" ]]; then
    echo "third_party: $crate has checksum $actual, expected $sha256" >&2
    exit 1
fi

work="$(mktemp -d "$here/.prepare.XXXXXX")"
tar -xzf "$crate" -C "$work"
for p in "${patches[@]}"; do
    if ! patch --quiet --forward -p1 -d "$work/$name-$version" < "$p"; then
        echo "third_party: $(basename "$p") does not apply to $name $version" >&2
        exit 1
    fi
done
echo "$stamp" > "$work/$name-$version/.prepared"
rm -rf "$dest"
mv "$work/$name-$version" "$dest"
echo "third_party: prepared $name $version with $(basename -a "${patches[@]}" | paste -sd' ')" >&2
