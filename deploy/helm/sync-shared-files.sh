#!/bin/sh
# Copies into the chart the files it shares with the kustomize tree: a chart can read only files
# inside its own directory, and Helm installs CRDs only from its crds/. Run it after changing
# crds/, deploy/optional/monitoring/grafana-dashboard.json or prometheusrule.yaml;
# test/deploy/helm-chart.test.ts fails while a copy differs.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
chart="$root/deploy/helm/nsxv-operator"
rm -f "$chart"/crds/*.yaml
for crd in "$root"/crds/*.yaml; do
  [ "$(basename "$crd")" = kustomization.yaml ] || cp "$crd" "$chart/crds/"
done
cp "$root/deploy/optional/monitoring/grafana-dashboard.json" "$root/deploy/optional/monitoring/prometheusrule.yaml" "$chart/files/"
