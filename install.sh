#!/bin/sh
# Installs what svc needs on a machine with Node.js and npm: Bun (from the npm registry, the
# `bun` package ships the binary) and the project's packages.
#   sh install.sh                          packages only (npm start and npm test run this)
#   sh install.sh --build [--bin-dir DIR]  also compiles the single executable dist/svc and
#                                          installs it as DIR/svc (default ~/.local/bin), so the
#                                          `svc …` commands the server prints work as written
set -eu
cd "$(dirname "$0")"

build=0
bin_dir="${HOME:-}/.local/bin"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=1 ;;
    --bin-dir) [ $# -ge 2 ] || { echo "svc: --bin-dir needs a directory" >&2; exit 2; }; bin_dir=$2; shift ;;
    --bin-dir=*) bin_dir=${1#--bin-dir=} ;;
    *) echo "svc: unknown option $1 (use --build [--bin-dir DIR])" >&2; exit 2 ;;
  esac
  shift
done

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

[ "$build" = 1 ] || exit 0
./node_modules/.bin/bun run build >&2
mkdir -p "$bin_dir"
# Copied beside the target and renamed over it: a running svc keeps its old file, never a torn one.
cp dist/svc "$bin_dir/.svc.new.$$"
chmod 755 "$bin_dir/.svc.new.$$"
mv -f "$bin_dir/.svc.new.$$" "$bin_dir/svc"
echo "svc: installed $bin_dir/svc" >&2
case ":${PATH:-}:" in
  *":$bin_dir:"*) ;;
  *) echo "svc: $bin_dir is not on your PATH; add it (e.g. echo 'export PATH=\"$bin_dir:\$PATH\"' >> ~/.profile) or run $bin_dir/svc" >&2 ;;
esac
