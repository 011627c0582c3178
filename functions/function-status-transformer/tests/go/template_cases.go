// Generates ../template_cases.json: what Go's text/template makes of
// message templates over captured groups (a map[string]string), for the
// differential test of src/template.rs.
// Run with any Go: go run template_cases.go > ../template_cases.json
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"text/template"
)

func main() {
	values := map[string]string{"Error": "boom", "Name": "db", "a": "1", "": "unnamed"}
	templates := []string{
		"plain text", "{{ .Error }}", "{{.Error}}", "x {{ .Name }} y {{ .Error }}",
		"{{ .Missing }}", "{{ . }}", "a {{- .a -}} b", "a {{- .a }} b", "a {{ .a -}} b",
		"a\n  {{- .a }}", "{{/* comment */}}x", "a {{- /* c */ -}} b", "{{ .Error }",
		"{{ .Error ", "x\n{{ .a", "{{ .Error.Len }}", "{{}}", "}} {{ .a }}", "{{ .a }}}}",
		"{{ .Name | printf \"%s!\" }}", "{{ if .a }}yes{{ end }}", "{{ printf \"%s\" .a }}",
		"{{ $x := .a }}{{ $x }}", "{{ \"lit\" }}", "{{ 3 }}", "{{ range . }}{{ . }}{{ end }}",
		"{{ index . \"a\" }}", "{{ .a }} {{ .Error }} {{ .Name }}", "{{- .a }}", "{{ .a -}}",
		"{ .a }", "{{ .a}}{{.Name }}",
	}
	type c struct {
		Template string `json:"template"`
		Out      string `json:"out,omitempty"`
		Err      string `json:"err,omitempty"`
	}
	var cases []c
	for _, s := range templates {
		t, err := template.New("").Parse(s)
		if err != nil {
			cases = append(cases, c{Template: s, Err: "cannot parse template: " + err.Error()})
			continue
		}
		var b bytes.Buffer
		if err := t.Execute(&b, values); err != nil {
			cases = append(cases, c{Template: s, Err: "cannot execute template: " + err.Error()})
			continue
		}
		cases = append(cases, c{Template: s, Out: b.String()})
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"values": values, "cases": cases})
}
