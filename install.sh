#!/bin/sh
# Installs what svc needs on a machine with Node.js and npm: Bun (from the npm registry, the
# `bun` package ships the binary) and the project's packages. `sh install.sh --build` also
# compiles the single executable dist/svc.
set -eu
cd "$(dirname "$0")"

stamp=node_modules/.svc-installed
# A node_modules that is a symlink is an install shared with another checkout (a git worktree):
# reinstalling through it would pull it from under that checkout, so it is left as it is.
if [ -L node_modules ]; then
  :
elif [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "svc: installing packages (bun, elysia, drizzle, ssh2, minio, …)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi

if [ "${1:-}" = "--build" ]; then
  ./node_modules/.bin/bun run build
fi
