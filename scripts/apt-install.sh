#!/bin/sh
# Installs Debian packages the tests need when they are missing: `sh scripts/apt-install.sh
# PURPOSE PACKAGE...`. Waits (bounded) for the dpkg lock that a fresh VM's unattended upgrades
# hold, saying so and naming the holder, instead of failing at once with exit 100.
# SVC_APT_LOCK_WAIT_S: how long to wait for the lock (default 600). DPKG_LOCK_FRONTEND: the lock
# file to look at (default /var/lib/dpkg/lock-frontend; the tests point it at one of their own).
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
lock=${DPKG_LOCK_FRONTEND:-/var/lib/dpkg/lock-frontend}

# The pid holding a POSIX lock on $lock, from /proc/locks (readable by anyone, unlike the lock
# file or another user's open files, so this works without root and without psmisc's fuser).
lock_holder() {
  [ -e "$lock" ] && [ -r /proc/locks ] || return 1
  ino=$(stat -c %i "$lock" 2>/dev/null) || return 1
  awk -v ino="$ino" '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9a-f]+:[0-9a-f]+:[0-9]+$/) { n = split($i, f, ":"); if (f[n] == ino) { print $(i - 1); found = 1; exit } } } END { exit !found }' /proc/locks
}
if pid=$(lock_holder); then
  who=$(cat "/proc/$pid/comm" 2>/dev/null || echo "?")
  echo "svc: waiting up to ${wait_s}s for the dpkg lock, held by process $pid ($who), e.g. unattended upgrades on a fresh machine" >&2
fi
echo "svc: installing Debian's$missing for $purpose" >&2
export DEBIAN_FRONTEND=noninteractive
apt="$sudo apt-get -o DPkg::Lock::Timeout=$wait_s -y --no-install-recommends"
# shellcheck disable=SC2086
if ! $apt install $missing >/dev/null 2>&1; then
  # Stale package lists are the usual reason: refresh them (a failure here shows in the retry).
  $sudo apt-get -o DPkg::Lock::Timeout="$wait_s" update >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  if ! $apt install $missing >/dev/null; then
    echo "svc: could not install$missing for $purpose (apt-get failed; if the dpkg lock was held for over ${wait_s}s, run npm test again once it is free, or raise SVC_APT_LOCK_WAIT_S)" >&2
    exit 1
  fi
fi
