#!/bin/sh
# Installs Debian's Chromium for the browser tests when it is missing (run by `npm test` before
# the suite). Never a browser download from anywhere else: playwright-core drives this binary.
set -eu
if [ -x /usr/bin/chromium ]; then exit 0; fi
exec sh "$(dirname "$0")/apt-install.sh" "the browser tests" chromium
