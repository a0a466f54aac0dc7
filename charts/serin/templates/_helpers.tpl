{{/* The chart's name, or nameOverride. */}}
{{- define "serin.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of object names: fullnameOverride, else the release name when it
holds the chart's name (release serin: serin), else RELEASE-serin.
*/}}
{{- define "serin.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The agent's Deployment, Service and (by default) ServiceAccount: serin-agent
for the release serin, the name `serin version` looks for.
*/}}
{{- define "serin.agentName" -}}
{{- printf "%s-agent" (include "serin.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "serin.serviceAccountName" -}}
{{- default (include "serin.agentName" .) .Values.serviceAccount.name }}
{{- end }}

{{- define "serin.selectorLabels" -}}
app.kubernetes.io/name: {{ include "serin.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end }}

{{- define "serin.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "serin.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: serin
{{- end }}

{{/* The namespaces of the agent's Roles when it does not watch them all. */}}
{{- define "serin.roleNamespaces" -}}
{{- prepend .Values.rbac.namespaces .Release.Namespace | uniq | toJson }}
{{- end }}

{{/* The labels of the CRDs: the chart's, without the agent's component. */}}
{{- define "serin.crdLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "serin.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: serin
{{- end }}

{{/* A rule of the NetworkPolicy: .peers (from or to) .rule.cidrs, on .rule.ports. */}}
{{- define "serin.networkPolicyRule" -}}
# {{ .name }}
- ports:
  {{- range .rule.ports }}
  - port: {{ .port }}
    protocol: {{ .protocol | default "TCP" }}
  {{- end }}
  {{- with .rule.cidrs }}
  {{ $.peers }}:
  {{- range . }}
  - ipBlock:
      cidr: {{ . | quote }}
  {{- end }}
  {{- end }}
{{- end }}
