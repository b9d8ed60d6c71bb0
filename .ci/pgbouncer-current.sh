#!/usr/bin/env bash
# A current PgBouncer (1.21+ keeps protocol-level prepared statements: max_prepared_statements)
# for the pooler tests, beside the distribution's. Debian 12 ships 1.18; Debian 13's source
# package is built here from deb.debian.org into the user's cache, once, and its path printed.
# test/pgbouncer.ts finds it there.
#
# The pinned release is checked against its SHA-256. Once Debian 13 moves on to another
# release, the pinned tarball leaves the archive: then the suite's current one is taken, checked
# through the suite's signed index (gpgv and Debian's archive keyring). Runs that start together
# wait for one another's build, and a binary is only ever moved into place whole.
set -euo pipefail

PINNED_VERSION=1.24.1
PINNED_SHA256=da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0
MIRROR=http://deb.debian.org/debian
SUITE=trixie
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/shipyard"

built() {
  local b
  for b in "$CACHE"/pgbouncer-*/pgbouncer; do
    if [ -x "$b" ] && "$b" --version >/dev/null 2>&1; then
      echo "$b"
      return 0
    fi
  done
  return 1
}

built && exit 0
mkdir -p "$CACHE"
exec 9>"$CACHE/pgbouncer.lock"
flock 9
# Another run may have built it while this one waited.
built && exit 0

need=()
for pkg in libevent-dev libssl-dev pkg-config gcc make curl xz-utils gpgv debian-archive-keyring; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "building PgBouncer needs these packages (apt-get install them as root): ${need[*]}" >&2
    exit 1
  fi
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball() { echo "$MIRROR/pool/main/p/pgbouncer/pgbouncer_$1.orig.tar.gz"; }

version=$PINNED_VERSION
sha256=$PINNED_SHA256
if ! curl -fsSL --retry 3 -o "$work/src.tar.gz" "$(tarball "$version")"; then
  echo "PgBouncer $version has left $SUITE; taking $SUITE's current release through its signed index" >&2
  curl -fsSL --retry 3 -o "$work/InRelease" "$MIRROR/dists/$SUITE/InRelease"
  gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg "$work/InRelease" 2>/dev/null
  index_sha=$(awk '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == "main/source/Sources.xz" { print $1 }' "$work/InRelease")
  curl -fsSL --retry 3 -o "$work/Sources.xz" "$MIRROR/dists/$SUITE/main/source/Sources.xz"
  echo "$index_sha  $work/Sources.xz" | sha256sum -c --quiet -
  read -r version sha256 < <(xz -dc "$work/Sources.xz" | awk '
    /^Package: pgbouncer$/ { p = 1 }
    p && /^Version:/ { v = $2 }
    p && /^Checksums-Sha256:/ { c = 1; next }
    p && c && /\.orig\.tar\.gz$/ { print v, $1; exit }
    /^$/ { p = 0; c = 0 }')
  version=${version#*:}
  version=${version%%-*}
  curl -fsSL --retry 3 -o "$work/src.tar.gz" "$(tarball "$version")"
fi
echo "$sha256  $work/src.tar.gz" | sha256sum -c --quiet -
tar -xzf "$work/src.tar.gz" -C "$work"
(
  cd "$work/pgbouncer-${version}"
  ./configure --without-cares --without-pam --without-systemd >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
  make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -50 "$work/make.log" >&2; exit 1; }
)
dest="$CACHE/pgbouncer-${version}"
mkdir -p "$dest"
install -m 0755 "$work/pgbouncer-${version}/pgbouncer" "$dest/pgbouncer.new"
mv -f "$dest/pgbouncer.new" "$dest/pgbouncer"
"$dest/pgbouncer" --version >&2
echo "$dest/pgbouncer"
