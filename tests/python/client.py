"""Calls composition functions with crossplane-function-sdk-python's own
generated client stubs (v1 and v1beta1), for xfn's tests.

Reads one JSON call per line on stdin and writes one JSON result per line:

  call:   {"authority": "function-a.crossplane-system:9443",  (optional)
           "version": "v1" | "v1beta1",                       (default v1)
           "request": {...protojson RunFunctionRequest...},
           "timeout": 1.5,                                     (seconds, optional)
           "repeat": 2000}                                     (optional: benchmark)
  result: {"ok": true, "response": {...protojson...}}
          {"ok": false, "code": "NOT_FOUND", "details": "..."}
          with "repeat": {"ok": true, "calls": N, "seconds": S, "median_ms": M, "p99_ms": P}

A line {"reflect": true, "authority": ...} lists the services the server
reports through gRPC reflection.

Usage: client.py --target HOST:PORT [--tls-certs-dir DIR] [--max-seconds N]
With --tls-certs-dir (tls.crt, tls.key, ca.crt) the channel is mTLS and the
server's certificate must name the authority's host.
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

import grpc
from google.protobuf import json_format
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1

PROTOCOLS = {
    "v1": (fnv1.RunFunctionRequest, grpcv1.FunctionRunnerServiceStub),
    "v1beta1": (fnv1beta1.RunFunctionRequest, grpcv1beta1.FunctionRunnerServiceStub),
}


class Channels:
    """One channel per authority."""

    def __init__(self, target: str, tls_dir: str | None):
        self.target = target
        self.credentials = None
        if tls_dir:
            read = lambda name: open(os.path.join(tls_dir, name), "rb").read()  # noqa: E731
            self.credentials = grpc.ssl_channel_credentials(
                root_certificates=read("ca.crt"),
                private_key=read("tls.key"),
                certificate_chain=read("tls.crt"),
            )
        self.channels: dict[str | None, grpc.Channel] = {}

    def get(self, authority: str | None) -> grpc.Channel:
        if authority not in self.channels:
            options = []
            if authority:
                options.append(("grpc.default_authority", authority))
            if self.credentials is not None:
                if authority:
                    host = authority.rsplit(":", 1)[0]
                    options.append(("grpc.ssl_target_name_override", host))
                channel = grpc.secure_channel(self.target, self.credentials, options=options)
            else:
                channel = grpc.insecure_channel(self.target, options=options)
            self.channels[authority] = channel
        return self.channels[authority]


def reflect(channel: grpc.Channel) -> dict:
    db = ProtoReflectionDescriptorDatabase(channel)
    return {"ok": True, "services": sorted(db.get_services())}


def run(channels: Channels, call: dict) -> dict:
    channel = channels.get(call.get("authority"))
    if call.get("reflect"):
        return reflect(channel)
    request_type, stub_type = PROTOCOLS[call.get("version", "v1")]
    request = json_format.ParseDict(call.get("request", {}), request_type())
    stub = stub_type(channel)
    timeout = call.get("timeout")
    repeat = int(call.get("repeat", 0))
    if repeat:
        latencies = []
        started = time.perf_counter()
        for _ in range(repeat):
            t = time.perf_counter()
            stub.RunFunction(request, timeout=timeout)
            latencies.append(time.perf_counter() - t)
        seconds = time.perf_counter() - started
        latencies.sort()
        return {
            "ok": True,
            "calls": repeat,
            "seconds": seconds,
            "median_ms": statistics.median(latencies) * 1000,
            "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        }
    response = stub.RunFunction(request, timeout=timeout)
    return {"ok": True, "response": json_format.MessageToDict(response)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--tls-certs-dir")
    parser.add_argument("--max-seconds", type=float, default=300)
    args = parser.parse_args()

    watchdog = threading.Timer(args.max_seconds, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()

    channels = Channels(args.target, args.tls_certs_dir)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = run(channels, json.loads(line))
        except grpc.RpcError as e:
            result = {"ok": False, "code": e.code().name, "details": e.details()}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
