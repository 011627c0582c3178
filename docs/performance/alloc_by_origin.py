#!/usr/bin/env python3
"""Bytes a process allocates per call, by where the allocation came from.

Reads `perf script` output of allocator uprobes and sorts each allocation
into one origin by its stack: the innermost frame that names one decides
(code inlined into a frame counts as that frame's). Then prints bytes and
allocations per call.

How the figures in report.md were taken (run 14), as root:

    B=target/release/xfn   # its allocator is mimalloc, linked in
    perf probe -x $B 'mi_malloc_aligned size=%di:u64'
    perf probe -x $B 'mi_zalloc_aligned size=%di:u64'
    perf probe -x $B 'mi_realloc_aligned size=%si:u64'
    # xfn serve on PORT, a client making a few dozen calls a second
    # (a uprobe with a stack per allocation loses events at full load)
    perf record -m 8192 -e 'probe_xfn:*' --call-graph dwarf,16384 -p PID -- sleep 4
    perf script -F event,trace,ip,sym --no-inline > allocs.txt
    docs/performance/alloc_by_origin.py allocs.txt CALLS

For a program on glibc's allocator, probe libc's `malloc size=%di:u64`,
`realloc size=%si:u64` and `calloc n=%di:u64 size=%si:u64` instead.
A reallocation counts its new size, as tests/tests/serve_allocations.rs
counts it.
"""

import collections
import re
import sys

# (origin, markers): within a frame, the first origin with a marker in it.
ORIGINS = [
    ("wasmtime: the fresh instance and its store", ("wasmtime", "cranelift")),
    ("xfn: the call (sandbox, WIT)", ("xfn_runtime::wasm", "xfn_runtime::sandbox")),
    ("xfn: the depth check", ("message_depth",)),
    ("codec: the request's body", ("copy_from_slice", "decode_chunk")),
    ("tonic's generated service: its boxed futures", ("function_runner_service_server",)),
    ("xfn: protobuf to JSON text and back", ("xfn_grpc::convert", "xfn_proto")),
    ("h2 and hyper", ("h2::", "hyper")),
    ("tonic, tower, axum", ("tonic", "tower", "axum")),
]


def events(lines):
    """Yields (bytes, frames) for each probe event of `perf script`."""
    size, frames = None, []
    for line in lines:
        if "probe_" in line:
            if size is not None:
                yield size, frames
            n = re.search(r"\bn=(\d+)", line)
            size = int(re.search(r"size=(\d+)", line).group(1))
            size *= int(n.group(1)) if n else 1
            frames = []
        elif line.strip():
            frames.append(line.strip().split(None, 1)[-1])
    if size is not None:
        yield size, frames


def origin(frames):
    for frame in frames:
        for name, markers in ORIGINS:
            if any(marker in frame for marker in markers):
                return name
    return "other"


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} PERF_SCRIPT_OUTPUT CALLS")
    calls = float(sys.argv[2])
    total, count = collections.Counter(), collections.Counter()
    with open(sys.argv[1]) as lines:
        for size, frames in events(lines):
            where = origin(frames)
            total[where] += size
            count[where] += 1
    for where, size in total.most_common():
        print(f"{size / calls:9.0f} B {count[where] / calls:6.1f} allocations  {where}")
    print(f"{sum(total.values()) / calls:9.0f} B {sum(count.values()) / calls:6.1f} allocations  in all")


if __name__ == "__main__":
    main()
