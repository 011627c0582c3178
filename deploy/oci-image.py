#!/usr/bin/env python3
"""Writes xfn's container image as an OCI image layout, without Docker.

The image has one layer: the static `xfn` binary at /xfn, an /etc/passwd
and /etc/group naming the non-root user it runs as (uid and gid 65532), the
CA certificates xfn's registry client trusts (it reads the system's roots),
a home directory for that user and /tmp. Its config runs /xfn as that user.

The output is reproducible: every file has the same mtime (--epoch), owner
and mode whatever the build machine had, entries are sorted, the gzip
header carries no name or time, and JSON is written with sorted keys. The
same binary, CA bundle, name, tag and epoch give the same digests (with the
same zlib).

Usage (what `make image` runs):

    deploy/oci-image.py --binary target/x86_64-unknown-linux-musl/release/xfn \\
        --ca-bundle /etc/ssl/certs/ca-certificates.crt \\
        --name ghcr.io/xfn-dev/xfn --tag v0.1.0 --epoch 1700000000 \\
        --out target/image

Then `skopeo copy oci:target/image:v0.1.0 docker://REGISTRY/xfn:v0.1.0`.
Only the Python standard library is used.
"""

import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import struct
import sys
import tarfile

# The user the image runs as: not root, and the uid distroless images use.
UID = 65532
GID = 65532
USER = "nonroot"
HOME = "/home/nonroot"
CA_PATH = "etc/ssl/certs/ca-certificates.crt"

# Largest input read into memory: the binary is tens of MiB.
MAX_INPUT = 512 << 20

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"

# The OCI distribution spec's grammar of tags and repository names.
TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
NAME = re.compile(
    r"(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?" + PATH_COMPONENT + r"(?:/" + PATH_COMPONENT + r")*"
)


class Refused(Exception):
    """An input the image cannot be built from."""


def read_input(path, what):
    """The bytes of regular file `path`, at most MAX_INPUT of them."""
    # Checked before opening: opening a FIFO would wait for a writer.
    if not os.path.isfile(path):
        raise Refused(f"{what} {path} is not a regular file")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_INPUT + 1)
    except OSError as e:
        raise Refused(f"cannot read {what} {path}: {e.strerror}") from None
    if len(data) > MAX_INPUT:
        raise Refused(f"{what} {path} is larger than {MAX_INPUT >> 20} MiB")
    return data


def check_static_elf(binary, path):
    """Refuses anything but a 64-bit little-endian x86-64 ELF executable
    without an interpreter: the image has no libc or dynamic loader."""
    if len(binary) < 64 or binary[:4] != b"\x7fELF":
        raise Refused(f"{path} is not an ELF file")
    if binary[4] != 2 or binary[5] != 1:
        raise Refused(f"{path} is not a 64-bit little-endian ELF file")
    (machine,) = struct.unpack_from("<H", binary, 0x12)
    if machine != 62:
        raise Refused(f"{path} is not an x86-64 binary (e_machine {machine})")
    (phoff,) = struct.unpack_from("<Q", binary, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", binary, 0x36)
    if phentsize < 4 or phoff + phentsize * phnum > len(binary):
        raise Refused(f"{path} has a truncated program header table")
    for i in range(phnum):
        (kind,) = struct.unpack_from("<I", binary, phoff + i * phentsize)
        if kind == 3:  # PT_INTERP: needs a dynamic loader
            raise Refused(
                f"{path} is dynamically linked; build it for x86_64-unknown-linux-musl"
            )


def layer_files(binary, ca_bundle):
    """(path, mode, uid, gid, contents or None for a directory), sorted by
    path, so that every directory comes before what it holds."""
    passwd = (
        "root:x:0:0:root:/root:/sbin/nologin\n"
        f"{USER}:x:{UID}:{GID}:{USER}:{HOME}:/sbin/nologin\n"
    ).encode()
    group = f"root:x:0:\n{USER}:x:{GID}:\n".encode()
    files = [
        ("etc", 0o755, 0, 0, None),
        ("etc/group", 0o644, 0, 0, group),
        ("etc/passwd", 0o644, 0, 0, passwd),
        ("etc/ssl", 0o755, 0, 0, None),
        ("etc/ssl/certs", 0o755, 0, 0, None),
        (CA_PATH, 0o644, 0, 0, ca_bundle),
        ("home", 0o755, 0, 0, None),
        (HOME.lstrip("/"), 0o700, UID, GID, None),
        ("tmp", 0o1777, 0, 0, None),
        ("xfn", 0o755, 0, 0, binary),
    ]
    return sorted(files, key=lambda f: f[0])


def layer_tar(files, epoch):
    """The uncompressed layer: a ustar archive of `files`."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, mode, uid, gid, data in files:
            info = tarfile.TarInfo(path)
            info.mode = mode
            info.uid, info.gid = uid, gid
            info.uname = info.gname = ""
            info.mtime = epoch
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def gzipped(data):
    """`data` gzipped with no file name and mtime 0 in the header."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) as gz:
        gz.write(data)
    return out.getvalue()


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def descriptor(media_type, data, **extra):
    return {"mediaType": media_type, "digest": sha256(data), "size": len(data), **extra}


def build(binary, ca_bundle, name, tag, epoch):
    """The layout's files: {relative path: bytes}."""
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    created = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    version = tag[1:] if re.fullmatch(r"v[0-9].*", tag) else tag
    tar = layer_tar(layer_files(binary, ca_bundle), epoch)
    layer = gzipped(tar)
    config = canonical_json(
        {
            "created": created,
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "User": f"{UID}:{GID}",
                "Entrypoint": ["/xfn"],
                "Env": [f"HOME={HOME}", "PATH=/"],
                "WorkingDir": HOME,
                # gRPC for Crossplane, and the probes and metrics.
                "ExposedPorts": {"9443/tcp": {}, "8080/tcp": {}},
                "Labels": {
                    "org.opencontainers.image.title": "xfn",
                    "org.opencontainers.image.version": version,
                },
            },
            "rootfs": {"type": "layers", "diff_ids": [sha256(tar)]},
            "history": [{"created": created, "created_by": "deploy/oci-image.py"}],
        }
    )
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": descriptor(CONFIG_TYPE, config),
            "layers": [descriptor(LAYER_TYPE, layer)],
            "annotations": {
                "org.opencontainers.image.created": created,
                "org.opencontainers.image.version": version,
            },
        }
    )
    index = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": INDEX_TYPE,
            "manifests": [
                descriptor(
                    MANIFEST_TYPE,
                    manifest,
                    platform={"architecture": "amd64", "os": "linux"},
                    annotations={
                        # What `oci:DIR:TAG` names, and the full name for
                        # tools (containerd's import) that read it.
                        "org.opencontainers.image.ref.name": tag,
                        "io.containerd.image.name": f"{name}:{tag}",
                    },
                )
            ],
        }
    )
    files = {"oci-layout": canonical_json({"imageLayoutVersion": "1.0.0"}), "index.json": index}
    for blob in (layer, config, manifest):
        files["blobs/sha256/" + hashlib.sha256(blob).hexdigest()] = blob
    return files


def write_layout(out, files):
    """Writes `files` under a fresh directory, then puts it at `out`
    (replacing what was there), so `out` is never half-written."""
    out = os.path.abspath(out)
    # Only an earlier layout (or nothing) is replaced: never a directory
    # that holds something else, such as a cargo profile's output.
    if os.path.lexists(out):
        if os.path.islink(out) or not os.path.isdir(out):
            raise Refused(f"{out} exists and is not a directory")
        if os.listdir(out) and not os.path.isfile(os.path.join(out, "oci-layout")):
            raise Refused(f"{out} is not empty and not an OCI layout; not replacing it")
    staging = out + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    for path, data in sorted(files.items()):
        full = os.path.join(staging, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    if os.path.lexists(out):
        shutil.rmtree(out)
    os.rename(staging, out)


def epoch_arg(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    # ustar mtimes are 11 octal digits.
    if not 0 <= value < 8**11:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the static xfn binary")
    parser.add_argument("--ca-bundle", required=True, help="PEM file of CA certificates")
    parser.add_argument("--name", required=True, help="repository, e.g. ghcr.io/xfn-dev/xfn")
    parser.add_argument("--tag", required=True, help="tag, e.g. v0.1.0")
    parser.add_argument(
        "--epoch",
        type=epoch_arg,
        default=os.environ.get("SOURCE_DATE_EPOCH", "0"),
        help="mtime and creation time, in seconds since 1970 (default: $SOURCE_DATE_EPOCH, else 0)",
    )
    parser.add_argument("--out", required=True, help="the OCI layout directory to write")
    args = parser.parse_args()
    try:
        if not TAG.fullmatch(args.tag):
            raise Refused(f"--tag {args.tag!r} is not an OCI tag")
        if not NAME.fullmatch(args.name) or len(args.name) > 255:
            raise Refused(f"--name {args.name!r} is not a repository name")
        binary = read_input(args.binary, "the binary")
        check_static_elf(binary, args.binary)
        ca_bundle = read_input(args.ca_bundle, "the CA bundle")
        if b"-----BEGIN CERTIFICATE-----" not in ca_bundle:
            raise Refused(f"{args.ca_bundle} holds no PEM certificate")
        files = build(binary, ca_bundle, args.name, args.tag, args.epoch)
        write_layout(args.out, files)
    except Refused as e:
        print(f"oci-image: {e}", file=sys.stderr)
        return 1
    manifest = json.loads(files["index.json"])["manifests"][0]
    print(f"oci-image: wrote {args.out} ({args.name}:{args.tag}, {manifest['digest']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
