#!/bin/sh
# What the test suite needs beyond Node, npm and git, installed by `npm test` before the suite
# (CI starts from a clean machine). Each line: Debian packages for one group of tests.
set -eu
here=$(dirname "$0")
sh "$here/install-browser.sh"
sh "$here/apt-install.sh" "the interoperability tests (git clients other than C git: libgit2, dulwich)" python3-pygit2 python3-dulwich
