// Command xfn-gotmpl-oracle executes Go templates (or converts YAML to JSON) the way
// function-go-templating does (text/template, sprig without env and
// expandenv, toYaml/fromYaml on yaml.v3, include), for xfn's differential
// test of its Rust port.
//
// It reads one JSON object per line on stdin:
//
//	{"template": "...", "data": {...}, "delims": ["[[", "]]"], "options": ["missingkey=error"]}
//
// and writes one JSON object per line on stdout: {"output": "..."} or
// {"error": "..."}. Numbers in data decode as Kubernetes' JSON decoder
// decodes them (int64 when integral, else float64), as upstream's template
// data does.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
	k8syaml "sigs.k8s.io/yaml"
)

type request struct {
	// YAML, when set, is converted with sigs.k8s.io/yaml's YAMLToJSON (as
	// upstream reads a rendered document) instead of running a template.
	YAML     *string         `json:"yaml"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
	Delims   []string        `json:"delims"`
	Options  []string        `json:"options"`
}

type response struct {
	Output *string `json:"output,omitempty"`
	Error  *string `json:"error,omitempty"`
}

// convert turns json.Number into int64 or float64, as
// k8s.io/apimachinery/pkg/util/json does.
func convert(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = convert(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = convert(e)
		}
		return x
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	}
	return v
}

func newTemplate(delims []string) *template.Template {
	t := template.New("manifests")
	if len(delims) == 2 {
		t = t.Delims(delims[0], delims[1])
	}
	t.Funcs(template.FuncMap{
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return string(b), err
		},
		"fromYaml": func(s string) (any, error) {
			var r any
			err := yaml.Unmarshal([]byte(s), &r)
			return r, err
		},
		"setResourceNameAnnotation": func(name string) string {
			return fmt.Sprintf("gotemplating.fn.crossplane.io/composition-resource-name: %s", name)
		},
	})
	t.Funcs(template.FuncMap{
		"getCompositeResource": func(req map[string]any) map[string]any {
			var out map[string]any
			if !lookupInto(req, &out, "observed", "composite", "resource") {
				return nil
			}
			return out
		},
		"getComposedResource": func(req map[string]any, name string) map[string]any {
			var out map[string]any
			if !lookupInto(req, &out, "observed", "resources", name, "resource") {
				return nil
			}
			return out
		},
		"getComposedConnectionDetails": func(req map[string]any, name string) map[string]any {
			var out map[string]any
			if !lookupInto(req, &out, "observed", "resources", name, "connectionDetails") {
				return nil
			}
			return out
		},
		"getExtraResources": func(req map[string]any, name string) []any {
			var out []any
			if !lookupInto(req, &out, "requiredResources", name, "items") &&
				!lookupInto(req, &out, "extraResources", name, "items") {
				return nil
			}
			return out
		},
		"getCredentialData": func(req map[string]any, name string) map[string][]byte {
			var data map[string]string
			if !lookupInto(req, &data, "credentials", name, "credentialData", "data") {
				return nil
			}
			out := map[string][]byte{}
			for k, v := range data {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return nil
				}
				out[k] = b
			}
			return out
		},
		"getExtraResourcesFromContext": func(req map[string]any, name string) []any {
			var out []any
			if !lookupInto(req, &out, "context", "apiextensions.crossplane.io/extra-resources", name, "items") {
				return nil
			}
			return out
		},
	})
	depth := map[string]int{}
	t.Funcs(template.FuncMap{
		"include": func(name string, data any) (string, error) {
			var buf strings.Builder
			if depth[name] > 1000 {
				return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
			}
			depth[name]++
			err := t.ExecuteTemplate(&buf, name, data)
			depth[name]--
			return buf.String(), err
		},
	})
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	t.Funcs(f)
	return t
}

// lookupInto follows keys through maps and decodes what it finds into out
// through JSON, as crossplane-runtime's fieldpath GetValueInto does (so
// numbers become float64).
func lookupInto(v any, out any, keys ...string) bool {
	cur := v
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, out) == nil
}

func run(r request) (out string, err error) {
	if r.YAML != nil {
		j, err := k8syaml.YAMLToJSON([]byte(*r.YAML))
		return string(j), err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	var data any
	if len(r.Data) > 0 {
		d := json.NewDecoder(bytes.NewReader(r.Data))
		d.UseNumber()
		if err := d.Decode(&data); err != nil {
			return "", fmt.Errorf("oracle: bad data: %w", err)
		}
		data = convert(data)
	}
	t, err := newTemplate(r.Delims).Parse(r.Template)
	if err != nil {
		return "", err
	}
	if len(r.Options) > 0 {
		t.Option(r.Options...)
	}
	var buf strings.Builder
	if err := t.Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var r request
		var rsp response
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			msg := "oracle: bad request: " + err.Error()
			rsp.Error = &msg
		} else if out, err := run(r); err != nil {
			msg := err.Error()
			rsp.Error = &msg
		} else {
			rsp.Output = &out
		}
		if err := enc.Encode(rsp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
