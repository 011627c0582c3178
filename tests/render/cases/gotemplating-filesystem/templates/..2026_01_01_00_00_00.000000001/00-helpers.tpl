{{- define "owner-labels" -}}
example.org/owner: {{ .observed.composite.resource.metadata.name }}
example.org/team: {{ .observed.composite.resource.spec.team | quote }}
{{- end }}
