#!/bin/sh
# What the test suite needs beyond Node, npm and git, installed by `npm test` before the suite
# (CI starts from a clean machine). Each line: Debian packages for one group of tests.
set -eu
here=$(dirname "$0")
sh "$here/install-browser.sh"
# PostgreSQL's server binaries for the PostgreSQL tests (test/helpers/postgres.ts starts its own
# servers in temp dirs). Debian's package would also make and start a default cluster: a test
# machine needs none, so when the package is not there yet, it is told not to.
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && [ ! -e /etc/postgresql-common/createcluster.d/svc-tests.conf ]; then
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/svc-tests.conf
  fi
  sh "$here/apt-install.sh" "the PostgreSQL tests" postgresql
fi
sh "$here/apt-install.sh" "the PostgreSQL collation test (it compiles en_US.UTF-8 with localedef)" locales
sh "$here/apt-install.sh" "the interoperability tests (git clients other than C git: libgit2, dulwich)" python3-pygit2 python3-dulwich
sh "$here/apt-install.sh" "the JGit interoperability tests (JGit 4.11 with JSch, built by the test with javac)" default-jdk-headless libjgit-java libjsch-java
sh "$here/apt-install.sh" "the Git LFS tests (the real git lfs client against the batch API and transfers)" git-lfs
