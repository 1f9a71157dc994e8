{{- define "taskgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: the release name, with the chart's appended unless it has it already. */}}
{{- define "taskgate.fullname" -}}
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

{{- define "taskgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "taskgate.selectorLabels" . }}
app.kubernetes.io/version: {{ include "taskgate.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "taskgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "taskgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "taskgate.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{- define "taskgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "taskgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "taskgate.mappingConfigMap" -}}
{{- default (printf "%s-mapping" (include "taskgate.fullname" .)) .Values.mapping.existingConfigMap }}
{{- end }}

{{- define "taskgate.secretName" -}}
{{- default (printf "%s-secrets" (include "taskgate.fullname" .)) .Values.secrets.existingSecret }}
{{- end }}

{{/* serve --replicas: every pod reads the engines at its share of the read budgets, counting on
as many pods as may run. */}}
{{- define "taskgate.replicas" -}}
{{- if .Values.autoscaling.enabled }}
{{- .Values.autoscaling.maxReplicas }}
{{- else }}
{{- .Values.replicaCount }}
{{- end }}
{{- end }}
