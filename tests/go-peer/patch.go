// P&T's simplest patch, natively: what the Go peer does when its input is
// function-patch-and-transform's (`pt.fn.crossplane.io/*`, kind
// `Resources`), so that `make bench` can compare it with the wasm P&T on
// the same request doing the same work.
//
// It follows function-patch-and-transform's RunFunction for templates with
// a base and `FromCompositeFieldPath` patches between plain dotted paths
// (docs/performance and ../shared/reference/patch-and-transform.md §3):
//
//   - the response starts as `response.To(req, 60s)`;
//   - the desired XR is the request's, with the observed XR's apiVersion
//     and kind, its readiness not carried over;
//   - the environment (context key apiextensions.crossplane.io/environment)
//     gets internal.crossplane.io/v1alpha1 Environment when it has no GVK;
//   - each template's desired resource is its base with the patches
//     applied in order; a patch whose source is missing is skipped;
//   - earlier steps' desired composed resources pass through without
//     their connection details.
//
// Anything else P&T does (patch sets, other patch types, transforms,
// policies, environment patches, readiness checks, connection details,
// templates of observed resources) it refuses with a Fatal result that
// starts with "the Go peer does not implement", rather than answering
// differently from P&T.

package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "xfn.dev/gopeer/fnv1"
)

// environmentKey is the context key of P&T's environment.
const environmentKey = "apiextensions.crossplane.io/environment"

// unsupported starts the Fatal message for input this port doesn't cover.
const unsupported = "the Go peer does not implement "

// plainPath is a field path of dot-separated keys, no brackets or quotes.
var plainPath = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// isPatchAndTransform says whether an input is P&T's.
func isPatchAndTransform(input map[string]interface{}) bool {
	apiVersion, _ := input["apiVersion"].(string)
	kind, _ := input["kind"].(string)
	return strings.HasPrefix(apiVersion, "pt.fn.crossplane.io/") && kind == "Resources"
}

// template is one composed resource of P&T's input.
type template struct {
	name    string
	base    map[string]interface{}
	patches []patch
}

// patch is a FromCompositeFieldPath patch.
type patch struct {
	from, to []string
}

// patchAndTransform answers a request whose input is P&T's.
func patchAndTransform(req *fnv1.RunFunctionRequest, input map[string]interface{}) (*fnv1.RunFunctionResponse, error) {
	rsp := &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(60 * time.Second)},
		Desired: req.GetDesired(),
		Context: req.GetContext(),
	}
	fatal := func(message string) (*fnv1.RunFunctionResponse, error) {
		rsp.Results = append(rsp.Results, &fnv1.Result{
			Severity: fnv1.Severity_SEVERITY_FATAL,
			Message:  message,
			Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
		})
		return rsp, nil
	}

	templates, why := templatesOf(input)
	if why != "" {
		return fatal(unsupported + why)
	}
	observed := req.GetObserved().GetComposite().GetResource().AsMap()
	apiVersion, _ := observed["apiVersion"].(string)
	kind, _ := observed["kind"].(string)
	if apiVersion == "" || kind == "" {
		return fatal(unsupported + "an observed XR without apiVersion and kind")
	}
	for _, t := range templates {
		if _, ok := req.GetObserved().GetResources()[t.name]; ok {
			return fatal(unsupported + "templates of observed composed resources")
		}
	}

	environment := map[string]interface{}{}
	if value, ok := req.GetContext().GetFields()[environmentKey]; ok {
		object := value.GetStructValue()
		if object == nil {
			return fatal(unsupported + "an environment that is not an object")
		}
		environment = object.AsMap()
	}
	envAPIVersion, _ := environment["apiVersion"].(string)
	envKind, _ := environment["kind"].(string)
	if envAPIVersion == "" && envKind == "" {
		environment["apiVersion"] = "internal.crossplane.io/v1alpha1"
		environment["kind"] = "Environment"
	}

	desiredXR := map[string]interface{}{}
	var connection map[string][]byte
	if xr := req.GetDesired().GetComposite(); xr != nil {
		desiredXR = xr.GetResource().AsMap()
		connection = xr.GetConnectionDetails()
	}
	if len(connection) > 0 {
		return fatal(unsupported + "connection details")
	}
	desiredXR["apiVersion"] = apiVersion
	desiredXR["kind"] = kind

	composed := make(map[string]*fnv1.Resource, len(templates))
	for _, t := range templates {
		resource := deepCopy(t.base).(map[string]interface{})
		for _, p := range t.patches {
			value, found := lookup(observed, p.from)
			if !found {
				continue
			}
			if !assign(resource, p.to, deepCopy(value)) {
				return fatal(unsupported + "patches onto a field that is not an object")
			}
		}
		object, err := structpb.NewStruct(resource)
		if err != nil {
			return nil, fmt.Errorf("composed resource %q: %w", t.name, err)
		}
		composed[t.name] = &fnv1.Resource{Resource: object}
	}

	xr, err := structpb.NewStruct(desiredXR)
	if err != nil {
		return nil, fmt.Errorf("desired XR: %w", err)
	}
	env, err := structpb.NewStruct(environment)
	if err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	rsp.Desired.Composite = &fnv1.Resource{Resource: xr}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	// As P&T (through function-sdk-go) does, earlier steps' composed
	// resources keep their readiness but lose their connection details.
	for _, resource := range rsp.Desired.Resources {
		resource.ConnectionDetails = nil
	}
	for name, resource := range composed {
		rsp.Desired.Resources[name] = resource
	}
	if rsp.Context == nil {
		rsp.Context = &structpb.Struct{}
	}
	if rsp.Context.Fields == nil {
		rsp.Context.Fields = map[string]*structpb.Value{}
	}
	rsp.Context.Fields[environmentKey] = structpb.NewStructValue(env)
	return rsp, nil
}

// templatesOf reads P&T's input, or says what in it this port doesn't cover.
func templatesOf(input map[string]interface{}) ([]template, string) {
	for key := range input {
		if key != "apiVersion" && key != "kind" && key != "resources" {
			return nil, fmt.Sprintf("the input field %q", key)
		}
	}
	items, _ := input["resources"].([]interface{})
	if len(items) == 0 {
		return nil, "an input without resources"
	}
	templates := make([]template, 0, len(items))
	for _, item := range items {
		fields, ok := item.(map[string]interface{})
		if !ok {
			return nil, "a resource that is not an object"
		}
		for key := range fields {
			if key != "name" && key != "base" && key != "patches" {
				return nil, fmt.Sprintf("the resource field %q", key)
			}
		}
		name, _ := fields["name"].(string)
		base, _ := fields["base"].(map[string]interface{})
		if kind, _ := base["kind"].(string); name == "" || kind == "" {
			return nil, "a resource without a name or a base with a kind"
		}
		t := template{name: name, base: base}
		patches, _ := fields["patches"].([]interface{})
		for _, item := range patches {
			p, why := patchOf(item)
			if why != "" {
				return nil, why
			}
			t.patches = append(t.patches, p)
		}
		templates = append(templates, t)
	}
	return templates, ""
}

// patchOf reads one patch, or says what in it this port doesn't cover.
func patchOf(item interface{}) (patch, string) {
	fields, ok := item.(map[string]interface{})
	if !ok {
		return patch{}, "a patch that is not an object"
	}
	for key := range fields {
		if key != "type" && key != "fromFieldPath" && key != "toFieldPath" {
			return patch{}, fmt.Sprintf("the patch field %q", key)
		}
	}
	switch kind, _ := fields["type"].(string); kind {
	case "FromCompositeFieldPath":
	case "":
		return patch{}, "patches without a type"
	default:
		return patch{}, fmt.Sprintf("patches of type %q", kind)
	}
	from, _ := fields["fromFieldPath"].(string)
	to, _ := fields["toFieldPath"].(string)
	if !plainPath.MatchString(from) || !plainPath.MatchString(to) {
		return patch{}, "field paths other than plain dotted keys"
	}
	return patch{from: strings.Split(from, "."), to: strings.Split(to, ".")}, ""
}

// lookup finds the value at a path of keys.
func lookup(object map[string]interface{}, path []string) (interface{}, bool) {
	var value interface{} = object
	for _, key := range path {
		fields, ok := value.(map[string]interface{})
		if !ok {
			return nil, false
		}
		if value, ok = fields[key]; !ok {
			return nil, false
		}
	}
	return value, true
}

// assign sets the value at a path of keys, making the objects on the way;
// false if a field on the way is there but not an object.
func assign(object map[string]interface{}, path []string, value interface{}) bool {
	for _, key := range path[:len(path)-1] {
		next, found := object[key]
		if !found || next == nil {
			next = map[string]interface{}{}
			object[key] = next
		}
		fields, ok := next.(map[string]interface{})
		if !ok {
			return false
		}
		object = fields
	}
	object[path[len(path)-1]] = value
	return true
}

// deepCopy copies a value made of JSON's types.
func deepCopy(value interface{}) interface{} {
	switch v := value.(type) {
	case map[string]interface{}:
		copied := make(map[string]interface{}, len(v))
		for k, item := range v {
			copied[k] = deepCopy(item)
		}
		return copied
	case []interface{}:
		copied := make([]interface{}, len(v))
		for i, item := range v {
			copied[i] = deepCopy(item)
		}
		return copied
	default:
		return v
	}
}
