#!/bin/sh
# Installs Debian's Chromium for the browser tests when it is missing (run by `npm test` before
# the suite). Never a browser download from anywhere else: playwright-core drives this binary.
set -eu
if [ -x /usr/bin/chromium ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "svc: the browser tests need /usr/bin/chromium (Debian's chromium package); install it" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
echo "svc: installing Debian's chromium for the browser tests" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || {
  $sudo apt-get update >/dev/null
  $sudo apt-get install -y --no-install-recommends chromium >/dev/null
}
