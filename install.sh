#!/bin/sh
# Installs what svc needs on a machine with Node.js and npm: Bun (from the npm registry, the
# `bun` package ships the binary) and the project's packages. `sh install.sh --build` also
# compiles the single executable dist/svc.
set -eu
cd "$(dirname "$0")"

stamp=node_modules/.svc-installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "svc: installing packages (bun, elysia, drizzle, ssh2, minio, …)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi

if [ "${1:-}" = "--build" ]; then
  ./node_modules/.bin/bun run build
fi
