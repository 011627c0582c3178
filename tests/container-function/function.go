// RunFunction: what the compose and probe modes answer.

package main

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "xfn.dev/containerfn/fnv1"
)

// Names the response uses.
const (
	composedName = "from-container"
	contextKey   = "container.test/seen"
	resultText   = "container function ran"
)

// function answers RunFunction; with probe set, the ConfigMap's data also
// holds what the process sees of its sandbox (probe.go).
type function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	log   logger
	probe bool
}

// RunFunction passes desired state and context through (as function-sdk-go's
// response.To does, with its 60 s TTL), adds the ConfigMap from-container,
// records the input's `message` under context key container.test/seen and
// returns one Normal result. Without probe, the response depends on the
// request only.
func (f function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	f.log.debugf("RunFunction tag %q", req.GetMeta().GetTag())
	rsp := &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(time.Minute)},
		Desired: req.GetDesired(),
		Context: req.GetContext(),
	}

	xrName := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].
		GetStructValue().GetFields()["name"].GetStringValue()
	data := map[string]interface{}{
		"greeting": "hello from a container",
		"xr-name":  xrName,
	}
	if f.probe {
		for key, value := range probeSandbox() {
			data[key] = value
		}
	}
	configMap, err := structpb.NewStruct(map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"data":       data,
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
	rsp.Desired.Resources[composedName] = &fnv1.Resource{Resource: configMap}

	if message, ok := req.GetInput().GetFields()["message"]; ok {
		if rsp.Context == nil {
			rsp.Context = &structpb.Struct{}
		}
		if rsp.Context.Fields == nil {
			rsp.Context.Fields = map[string]*structpb.Value{}
		}
		rsp.Context.Fields[contextKey] = message
	}

	rsp.Results = append(rsp.Results, &fnv1.Result{
		Severity: fnv1.Severity_SEVERITY_NORMAL,
		Message:  resultText,
		Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
	})
	return rsp, nil
}
