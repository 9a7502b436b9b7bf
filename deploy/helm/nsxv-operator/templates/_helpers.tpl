{{/*
The release's name for every object: the release name when it already contains the chart's
name (a release called nsxv-operator gives the names of deploy/), else <release>-nsxv-operator.
Cut to leave room for the longest suffix (-leader-election) within 63 characters.
*/}}
{{- define "nsxv-operator.fullname" -}}
{{- $name := .Release.Name -}}
{{- if not (contains .Chart.Name .Release.Name) -}}
{{- $name = printf "%s-%s" .Release.Name .Chart.Name -}}
{{- end -}}
{{- $name | trunc 47 | trimSuffix "-" -}}
{{- end -}}

{{- define "nsxv-operator.metricsServiceName" -}}
{{- include "nsxv-operator.fullname" . }}-metrics
{{- end -}}

{{- define "nsxv-operator.leaseName" -}}
{{- .Values.leaderElection.id | default (include "nsxv-operator.fullname" .) -}}
{{- end -}}

{{/* The labels every object carries; component is added per object. */}}
{{- define "nsxv-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: nsxv-operator
{{- end -}}

{{/* What selects the operator's pods: stable across upgrades (a Deployment's selector is immutable). */}}
{{- define "nsxv-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "nsxv-operator.image" -}}
{{- $image := .Values.image -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository ($image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
What the operator may do on its three kinds, Secrets and Events: exactly the calls it makes, as
deploy/cluster-rbac.yaml grants them (test/deploy/helm-chart.test.ts compares). A ClusterRole
with scope cluster, a Role of the release's namespace with scope namespace.
*/}}
{{- define "nsxv-operator.operatorRules" -}}
# Watch the three kinds; the operator never writes their spec.
- apiGroups: ["nsxv.io"]
  resources: ["nsxmanagers", "edgetenants", "ippoolallocations"]
  verbs: ["get", "list", "watch"]
# The finalizers nsxv.io/restore-tenant (EdgeTenants with deletionPolicy Restore) and nsxv.io/in-use
# (NSXManagers while objects name them), added and removed by a merge patch of metadata.finalizers only.
- apiGroups: ["nsxv.io"]
  resources: ["nsxmanagers", "edgetenants"]
  verbs: ["patch"]
# Status is written with merge patches on the /status subresource only.
- apiGroups: ["nsxv.io"]
  resources: ["nsxmanagers/status", "edgetenants/status", "ippoolallocations/status"]
  verbs: ["get", "patch"]
# Manager credentials and CA bundles: only `get`, by name, of the Secrets NSXManagers name, and
# `patch` for their finalizer nsxv.io/in-use while a restore may need them (metadata.finalizers only).
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "patch"]
# core/v1 Events; patch is how repeated events are counted.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- if eq .Values.scope "cluster" }}
# Namespaces' labels, which an NSXManager's spec.allowedNamespaces.selector is matched against:
# a list and a watch only. With scope namespace nothing is shared, and a Role cannot grant them.
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["list", "watch"]
{{- end }}
{{- end -}}

{{/*
Refuses combinations of values that the schema cannot express, with the reason. Included by the
Deployment, so that every render checks them.
*/}}
{{- define "nsxv-operator.validate" -}}
{{- if and (kindIs "float64" .Values.concurrencyPerManager) (kindIs "float64" .Values.concurrency) (gt (int .Values.concurrencyPerManager) (int .Values.concurrency)) -}}
{{- fail (printf "concurrencyPerManager: %d is more than concurrency (%d): a manager's share of the reconciles cannot be more than all of them" (int .Values.concurrencyPerManager) (int .Values.concurrency)) -}}
{{- end -}}
{{- if and (not .Values.leaderElection.enabled) (gt (int .Values.replicas) 1) -}}
{{- fail (printf "replicas: %d needs leaderElection.enabled: true; without a Lease every replica would reconcile and write (set replicas: 1 to run without leader election)" (int .Values.replicas)) -}}
{{- end -}}
{{- $chartLabels := include "nsxv-operator.labels" . | fromYaml -}}
{{- range $key, $value := .Values.podLabels -}}
{{- if or (hasKey $chartLabels $key) (eq $key "app.kubernetes.io/component") -}}
{{- fail (printf "podLabels: %s is set by the chart (the Deployment's selector and the Service depend on it); remove it from podLabels" $key) -}}
{{- end -}}
{{- end -}}
{{- if hasKey .Values.podAnnotations "kubectl.kubernetes.io/default-container" -}}
{{- fail "podAnnotations: kubectl.kubernetes.io/default-container is set by the chart (the container is named operator); remove it from podAnnotations" -}}
{{- end -}}
{{- $owned := dict
  "--namespace" "scope: namespace"
  "--leader-elect" "leaderElection.enabled"
  "--leader-election-id" "leaderElection.id (the leader-election Role names the Lease)"
  "--leader-election-namespace" "nothing: the Lease lives in the release's namespace, where the leader-election Role grants it"
  "--log-level" "logLevel"
  "--sync-interval" "syncInterval"
  "--concurrency" "concurrency"
  "--concurrency-per-manager" "concurrencyPerManager"
  "--selector" "selector"
  "--metrics-bind-address" "nothing: the metrics Service and probes use ports 8080 and 8081"
  "--health-probe-bind-address" "nothing: the metrics Service and probes use ports 8080 and 8081"
  "--kubeconfig" "nothing: the operator uses its ServiceAccount"
  "--manifests" "nothing: the Deployment reconciles the cluster"
-}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $flag := regexReplaceAll "=.*$" $arg "" -}}
{{- if hasKey $owned $flag -}}
{{- fail (printf "extraArgs[%d]: %s is set by %s; remove it from extraArgs" $index $flag (get $owned $flag)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
