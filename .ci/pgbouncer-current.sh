#!/usr/bin/env bash
# A current PgBouncer (1.21+ keeps protocol-level prepared statements: max_prepared_statements)
# for the pooler tests, beside the distribution's. Debian 12 ships 1.18; Debian 13's source
# package is built here from deb.debian.org (checked against its published SHA-256) into the
# user's cache, once. Prints the binary's path. test/pgbouncer.ts finds it there.
set -euo pipefail

VERSION=1.24.1
SHA256=da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0
URL="http://deb.debian.org/debian/pool/main/p/pgbouncer/pgbouncer_${VERSION}.orig.tar.gz"
DEST="${XDG_CACHE_HOME:-$HOME/.cache}/shipyard/pgbouncer-${VERSION}"

if [ -x "$DEST/pgbouncer" ] && "$DEST/pgbouncer" --version >/dev/null 2>&1; then
  echo "$DEST/pgbouncer"
  exit 0
fi

need=()
for pkg in libevent-dev libssl-dev pkg-config gcc make; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
curl -fsSL --retry 3 -o "$work/src.tar.gz" "$URL"
echo "$SHA256  $work/src.tar.gz" | sha256sum -c --quiet -
tar -xzf "$work/src.tar.gz" -C "$work"
(
  cd "$work/pgbouncer-${VERSION}"
  ./configure --without-cares --without-pam --without-systemd >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
  make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -50 "$work/make.log" >&2; exit 1; }
)
mkdir -p "$DEST"
install -m 0755 "$work/pgbouncer-${VERSION}/pgbouncer" "$DEST/pgbouncer"
"$DEST/pgbouncer" --version >&2
echo "$DEST/pgbouncer"
