#!/bin/sh
# Installs Debian packages the tests need when they are missing: `sh scripts/apt-install.sh
# PURPOSE PACKAGE...`. Waits (bounded) for the dpkg lock that a fresh VM's unattended upgrades
# hold, saying so, instead of failing at once.
set -eu
purpose=$1
shift
missing=""
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "svc: $purpose need Debian's packages:$missing; install them" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
# Why a timeout on the lock: apt-get fails at once (exit 100) while another process holds it.
wait_s=${SVC_APT_LOCK_WAIT_S:-600}
if command -v fuser >/dev/null 2>&1 && fuser /var/lib/dpkg/lock-frontend >/dev/null 2>&1; then
  echo "svc: waiting up to ${wait_s}s for the dpkg lock (another package install, e.g. unattended upgrades, holds it)" >&2
fi
echo "svc: installing Debian's$missing for $purpose" >&2
export DEBIAN_FRONTEND=noninteractive
apt="$sudo apt-get -o DPkg::Lock::Timeout=$wait_s -y --no-install-recommends"
# shellcheck disable=SC2086
$apt install $missing >/dev/null 2>&1 || {
  $sudo apt-get -o DPkg::Lock::Timeout="$wait_s" update >/dev/null
  # shellcheck disable=SC2086
  $apt install $missing >/dev/null
}
