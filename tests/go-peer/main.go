// The Go peer of xfn's benchmarks: a composition function served by
// grpc-go, as most Crossplane functions are (function-sdk-go runs on
// grpc-go). Given function-patch-and-transform's input, it does P&T's
// simplest patch natively (patch.go), the work of the wasm P&T that
// `make bench` serves beside it. Otherwise it does natively what
// tests/python/function.py does.
//
// What it does then, driven by its input (all optional):
//
//   - always: passes desired state and context through (as the SDKs'
//     response.To does, with a 60 s TTL), adds the composed resource
//     `from-go` (a ConfigMap whose data holds the input's `data`, default
//     {"from": "go"}), records the request's tag under context key
//     `go.test/tag`, and returns a normal result "hello from go".
//   - `count: true`: increments the number under context key `xfn.test/calls`.
//   - `fatal: MESSAGE`: returns a fatal result instead.
//
// It serves v1 over plaintext HTTP/2 and prints "LISTENING <port>" once it
// listens, so callers can use port 0. It exits by itself after
// --max-seconds. Build it with build.sh (Debian's Go packages only).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "xfn.dev/gopeer/fnv1"
)

// codec marshals with google.golang.org/protobuf: grpc-go 1.33's default
// codec is API v1 and panics on API v2 generated messages.
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("not a protobuf message: %T", v)
	}
	return proto.Marshal(m)
}

func (codec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("not a protobuf message: %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (codec) String() string { return "proto" }

type function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

// text is a data value as text; integral numbers print as integers.
func text(v interface{}) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		if v {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	default:
		return fmt.Sprint(v)
	}
}

func (function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(time.Minute)},
		Desired: req.GetDesired(),
		Context: req.GetContext(),
	}
	params := map[string]interface{}{}
	if req.Input != nil {
		params = req.Input.AsMap()
	}
	if isPatchAndTransform(params) {
		return patchAndTransform(req, params)
	}

	data, ok := params["data"].(map[string]interface{})
	if !ok {
		data = map[string]interface{}{"from": "go"}
	}
	texts := make(map[string]interface{}, len(data))
	for k, v := range data {
		texts[k] = text(v)
	}
	configMap, err := structpb.NewStruct(map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"data":       texts,
	})
	if err != nil {
		return nil, err
	}
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	composed, ok := rsp.Desired.Resources["from-go"]
	if !ok {
		composed = &fnv1.Resource{}
		rsp.Desired.Resources["from-go"] = composed
	}
	if composed.Resource == nil {
		composed.Resource = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	for k, v := range configMap.Fields {
		composed.Resource.Fields[k] = v
	}

	if rsp.Context == nil {
		rsp.Context = &structpb.Struct{}
	}
	if rsp.Context.Fields == nil {
		rsp.Context.Fields = map[string]*structpb.Value{}
	}
	rsp.Context.Fields["go.test/tag"] = structpb.NewStringValue(req.GetMeta().GetTag())

	if count, _ := params["count"].(bool); count {
		calls := rsp.Context.Fields["xfn.test/calls"].GetNumberValue()
		rsp.Context.Fields["xfn.test/calls"] = structpb.NewNumberValue(calls + 1)
	}

	result := &fnv1.Result{Severity: fnv1.Severity_SEVERITY_NORMAL, Message: "hello from go"}
	if fatal, ok := params["fatal"]; ok {
		result = &fnv1.Result{Severity: fnv1.Severity_SEVERITY_FATAL, Message: text(fatal)}
	}
	rsp.Results = append(rsp.Results, result)
	return rsp, nil
}

func main() {
	address := flag.String("address", "127.0.0.1:0", "host:port to listen on")
	maxSeconds := flag.Float64("max-seconds", 300, "exit after this long, whatever happens")
	maxRecv := flag.Int("max-recv-message-size", 4<<20, "largest request accepted, in bytes")
	flag.Parse()

	// Test servers stop by themselves.
	time.AfterFunc(time.Duration(*maxSeconds*float64(time.Second)), func() { os.Exit(3) })

	listener, err := net.Listen("tcp", *address)
	if err != nil {
		fmt.Fprintf(os.Stderr, "listen on %s: %v\n", *address, err)
		os.Exit(1)
	}
	server := grpc.NewServer(grpc.CustomCodec(codec{}), grpc.MaxRecvMsgSize(*maxRecv))
	fnv1.RegisterFunctionRunnerServiceServer(server, function{})

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		server.GracefulStop()
	}()

	fmt.Printf("LISTENING %d\n", listener.Addr().(*net.TCPAddr).Port)
	if err := server.Serve(listener); err != nil {
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		os.Exit(1)
	}
}
