#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kubectl and etcd from Go modules into .cache/controlplane/<version>/, once,
# and beside them kstatus (test/kstatus/main.go on sigs.k8s.io/cli-utils), govnsx (test/govnsx/main.go
# on github.com/IBM-tfproviders/govnsx, the terraform nsxv provider's client), gonsx (test/gonsx/main.go
# on github.com/sky-uk/gonsx) and helm (the chart's tests: lint, template, install, upgrade, uninstall).
# A program of ours is current when its binary exists and its stamp (<name>.source) names the
# sha256 of its main.go and the module version it was built with: editing main.go or the version
# rebuilds that program alone; a binary that is present and current is never rebuilt.
# Why a wrapper module: k8s.io/kubernetes requires its staging modules at v0.0.0 with local
# replace directives, so `go install k8s.io/kubernetes/...@v` cannot work; a module of our own
# that requires it and replaces each staging module with its published v0.N.P can.
# Prints the binaries' directory on stdout (progress goes to stderr). With --print-dir, only prints
# where they are or would be, without building; with --missing, prints the names of the binaries
# that are missing or (programs of ours) not current, one a line, without building
# (test/controlplane/binaries.ts asks both ways).
set -euo pipefail
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CLI_UTILS_VERSION="${CLI_UTILS_VERSION:-v0.37.2}"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
# exact: the module proxy serves this version but refuses to list govnsx's versions
GOVNSX_VERSION="${GOVNSX_VERSION:-v1.0.2}"
# gonsx has no semver tags ("0.3.17"): its master of 2018-01-22 as a pseudo-version is what the
# module proxy serves (it refuses the version list and the older branches' commits)
GONSX_VERSION="${GONSX_VERSION:-v0.0.0-20180122153724-c3caef9aee9b}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${CONTROLPLANE_BIN_DIR:-$root/.cache/controlplane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION}"
# our programs: name and the module (at its version) each is built on
programs=("kstatus sigs.k8s.io/cli-utils@$CLI_UTILS_VERSION" "govnsx github.com/IBM-tfproviders/govnsx@$GOVNSX_VERSION" "gonsx github.com/sky-uk/gonsx@$GONSX_VERSION")
# what a current build of program $1 on module $2 is stamped with
stamp_of() {
  echo "$(sha256sum "$root/test/$1/main.go" | cut -d' ' -f1) $2"
}
program_current() {
  [ -x "$out/$1" ] && [ -f "$out/$1.source" ] && [ "$(cat "$out/$1.source")" = "$(stamp_of "$1" "$2")" ]
}
missing() {
  local name
  for name in kube-apiserver kube-controller-manager kubectl etcd helm; do [ -x "$out/$name" ] || echo "$name"; done
  local program
  for program in "${programs[@]}"; do
    # shellcheck disable=SC2086 # "name module" splits into the two arguments
    program_current $program || echo "${program%% *}"
  done
}
case "${1:-}" in
  --print-dir) echo "$out"; exit 0 ;;
  --missing) missing; exit 0 ;;
esac
if [ -z "$(missing)" ]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null || { echo "build.sh: Go is not installed; cannot build the control plane" >&2; exit 3; }
mkdir -p "$out"
# one build at a time into a directory (two test runs, or a run and CI, may start one each): the
# second waits for the first, then builds only what is still missing
exec 9>"$out/.build.lock"
flock 9
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
staging="v0.${K8S_VERSION#v1.}"
version_flags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

start=$(date +%s)
if [ ! -x "$out/kube-apiserver" ] || [ ! -x "$out/kube-controller-manager" ] || [ ! -x "$out/kubectl" ]; then
  mkdir -p "$work/kubernetes" && cd "$work/kubernetes"
  go mod init nsxv-operator.test/kubernetes >/dev/null 2>&1
  gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    echo "require k8s.io/kubernetes $K8S_VERSION"
    # every staging module k8s.io/kubernetes replaces with ./staging/src/... gets its published version
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$staging"'#p' "$gomod"
  } >> go.mod
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  go mod tidy >&2
  # kubectl too: the tests apply deploy/ with `kubectl apply -k`, as a user would; and
  # kube-controller-manager, whose namespace and garbage-collector controllers the namespace
  # deletion tests need
  for cmd in kube-apiserver kube-controller-manager kubectl; do
    [ -x "$out/$cmd" ] || go build -trimpath -o "$out/$cmd" -ldflags "$version_flags" "k8s.io/kubernetes/cmd/$cmd" >&2
  done
fi
if [ ! -x "$out/etcd" ]; then
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init nsxv-operator.test/etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
  go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3 >&2
fi
# a program of ours on one Go module: test/<name>/main.go, built into $out/<name>, then stamped
build_program() {
  local name="$1" module="$2"
  mkdir -p "$work/$name" && cd "$work/$name"
  cp "$root/test/$name/main.go" .
  go mod init "nsxv-operator.test/$name" >/dev/null 2>&1
  go get "$module" >&2
  go mod tidy >&2
  go build -trimpath -ldflags "-s -w" -o "$out/$name" . >&2
  stamp_of "$name" "$module" > "$out/$name.source"
}
for program in "${programs[@]}"; do
  # shellcheck disable=SC2086
  program_current $program || build_program $program
done
if [ ! -x "$out/helm" ]; then
  mkdir -p "$work/helm" && cd "$work/helm"
  go mod init nsxv-operator.test/helm >/dev/null 2>&1
  go get "helm.sh/helm/v3@$HELM_VERSION" >&2
  # as helm's Makefile stamps a release: its version, and the Kubernetes version that `helm
  # template` and `helm lint` assume without a cluster, from the client-go it is built with
  # (v0.37.x is Kubernetes 1.37); unstamped it would assume 1.20 and refuse the chart's kubeVersion
  client_go="$(go list -m -f '{{.Version}}' k8s.io/client-go)"
  k8s_minor="${client_go#v0.}"; k8s_minor="${k8s_minor%%.*}"
  helm_flags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    helm_flags="$helm_flags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
  done
  go build -trimpath -ldflags "$helm_flags" -o "$out/helm" helm.sh/helm/v3/cmd/helm >&2
fi
echo "build.sh: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
