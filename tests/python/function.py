"""A composition function written with crossplane-function-sdk-python.

xfn's tests use it as a real gRPC peer: xfn's client shim calls it, and
`xfn render` runs it in a pipeline next to wasm functions (Development
runtime). It serves like the SDK's `runtime.serve` (v1, v1beta1 through the
SDK's BetaFunctionRunner, reflection, mTLS with required client
certificates), but prints the port it listens on, so tests can use port 0.

What it does, driven by its input (all optional):

* always: passes desired state and context through (`response.to`), adds
  the composed resource `from-python` (a ConfigMap whose data holds the
  input's `data`, default {"from": "python"}), records the request's tag
  under context key `python.test/tag`, and returns a normal result
  "hello from python".
* `count: true`: increments the number under context key `xfn.test/calls`
  (as xfn's scripted wasm test function does).
* `echo: true`: puts the whole request (protojson) under context key
  `python.test/request`.
* `sleep: SECONDS`: sleeps first (for deadline tests).
* `fatal: MESSAGE`: returns a fatal result.

Usage: function.py [--address HOST:PORT] [--insecure] [--tls-certs-dir DIR]
                   [--v1beta1-only] [--max-seconds N]
"""

import argparse
import asyncio
import os
import signal
import sys
import threading

import grpc
from google.protobuf import json_format
from grpc_reflection.v1alpha import reflection

from crossplane.function import resource, response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1


def text(value) -> str:
    """A data value as text; protobuf numbers are floats, integral ones print as integers."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class TestFunction(grpcv1.FunctionRunnerServiceServicer):
    """The test function."""

    async def RunFunction(  # noqa: N802 (gRPC's name)
        self, req: fnv1.RunFunctionRequest, _: grpc.aio.ServicerContext
    ) -> fnv1.RunFunctionResponse:
        rsp = response.to(req)
        params = resource.struct_to_dict(req.input) if req.HasField("input") else {}

        if "sleep" in params:
            await asyncio.sleep(float(params["sleep"]))

        data = params.get("data", {"from": "python"})
        resource.update(
            rsp.desired.resources["from-python"],
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "data": {str(k): text(v) for k, v in data.items()},
            },
        )
        rsp.context["python.test/tag"] = req.meta.tag

        if params.get("count"):
            calls = 0
            if "xfn.test/calls" in req.context:
                calls = int(req.context["xfn.test/calls"])
            rsp.context["xfn.test/calls"] = calls + 1

        if params.get("echo"):
            rsp.context["python.test/request"] = json_format.MessageToDict(req)

        if "fatal" in params:
            response.fatal(rsp, str(params["fatal"]))
        else:
            response.normal(rsp, "hello from python")
        return rsp


async def serve(args: argparse.Namespace) -> None:
    server = grpc.aio.server()
    function = TestFunction()
    services = [reflection.SERVICE_NAME, "apiextensions.fn.proto.v1beta1.FunctionRunnerService"]
    if not args.v1beta1_only:
        grpcv1.add_FunctionRunnerServiceServicer_to_server(function, server)
        services.append("apiextensions.fn.proto.v1.FunctionRunnerService")
    grpcv1beta1.add_FunctionRunnerServiceServicer_to_server(
        runtime.BetaFunctionRunner(wrapped=function), server
    )
    reflection.enable_server_reflection(services, server)

    if args.insecure:
        port = server.add_insecure_port(args.address)
    elif args.tls_certs_dir:
        port = server.add_secure_port(args.address, runtime.load_credentials(args.tls_certs_dir))
    else:
        sys.exit("need --insecure or --tls-certs-dir")

    await server.start()
    print(f"LISTENING {port}", flush=True)

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(grace=runtime.SHUTDOWN_GRACE_PERIOD_SECONDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:0")
    parser.add_argument("--insecure", action="store_true")
    parser.add_argument("--tls-certs-dir", default=os.environ.get("TLS_SERVER_CERTS_DIR"))
    parser.add_argument("--v1beta1-only", action="store_true", help="serve only v1beta1")
    parser.add_argument(
        "--max-seconds", type=float, default=300, help="exit after this long, whatever happens"
    )
    args = parser.parse_args()

    # Test servers stop by themselves.
    watchdog = threading.Timer(args.max_seconds, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()

    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
