#!/bin/sh
# What `npm test` needs beside node_modules, from Debian's packages (npm runs this first, as `pretest`; so does .ci/run):
#   - chromium at /usr/bin/chromium: test/playground.test.ts drives it with playwright-core, which downloads no browser;
#   - PostgreSQL's server binaries (initdb, postgres, package `postgresql`): the shared-ledger tests start their own
#     throwaway servers (test/support/postgres.ts). No cluster is created and no system-wide server is started.
# What is missing is installed with apt-get when this runs as root (or sudo works without a password); otherwise it
# says exactly what to install, and exits 1 before any test runs.
# X402_TEST_CHROMIUM and X402_APT_GET stand in for /usr/bin/chromium and apt-get (for the test of this script).
set -eu

chromium="${X402_TEST_CHROMIUM:-/usr/bin/chromium}"
apt_get="${X402_APT_GET:-apt-get}"

has_postgres() {
  if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then return 0; fi
  for initdb in /usr/lib/postgresql/*/bin/initdb; do [ -x "$initdb" ] && return 0; done
  command -v initdb >/dev/null 2>&1
}

missing=''
[ -x "$chromium" ] || missing="$missing chromium"
has_postgres || missing="$missing postgresql"
[ -z "$missing" ] && exit 0

say_what_to_install() {
  echo "npm test needs the Debian/Ubuntu package(s)$missing, which are not installed and could not be installed here." >&2
  echo "Install them, then run npm test again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
  echo "(chromium at /usr/bin/chromium drives the playground tests; postgresql's initdb and postgres, or PG_BIN pointing at" >&2
  echo " them, serve the shared-ledger tests)" >&2
  exit 1
}

if [ "$(id -u)" -eq 0 ]; then
  sudo=''
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo='sudo'
else
  say_what_to_install
fi
command -v "$apt_get" >/dev/null 2>&1 || say_what_to_install

echo "npm test: installing$missing with apt-get (once)" >&2
case "$missing" in
  *postgresql*)
    # the server binaries only: no cluster, no server started at boot
    $sudo mkdir -p /etc/postgresql-common
    echo 'create_main_cluster = false' | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null ;;
esac
# shellcheck disable=SC2086 # $missing is a list of package names
$sudo env DEBIAN_FRONTEND=noninteractive "$apt_get" update -qq &&
  $sudo env DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 "$apt_get" install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confold $missing >/dev/null ||
  say_what_to_install
[ -x "$chromium" ] && has_postgres || say_what_to_install
