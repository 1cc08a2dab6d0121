#!/usr/bin/env bash
# Build static libcurl and libgit2 from Debian bookworm's source packages into
# one cached install prefix, for a fully static (-static) xloop link.
#
# Usage: ops/build/static-deps.sh CACHE_DIR
#        ops/build/static-deps.sh --mirror SUITE
#
#   stdout, last line : absolute path of the install prefix
#                       (include/, lib/libcurl.a, lib/libgit2.a, link-flags.txt)
#   stderr            : progress ("==> ..." lines) and tool output
#
# The sources come from the Debian mirror the host's own apt sources name for
# SUITE and SUITE-security (/etc/apt/sources.list, sources.list.d/*.list and
# *.sources); no host is written here. --mirror SUITE prints that mirror (exit
# 1 when the host's sources name none); XLOOP_APT_ETC reads another directory
# than /etc/apt (t0006's fake hosts).
#
# A complete prefix carries a stamp file. When one for the pinned upstream
# versions (and this RECIPE_REV) already exists, it is reused without touching
# the network. Set STATIC_DEPS_REFRESH=1 to ask the archive for the current
# Debian revisions again (a new revision gets its own prefix and is built).
#
# Build tools needed besides what the rest of the build uses (gcc, make, cmake,
# pkg-config, dpkg-dev, lib{sqlite3,jansson,ssl,pcre2,http-parser}-dev,
# zlib1g-dev): autoconf automake libtool (curl's Debian patches touch
# configure.ac, so it is regenerated like Debian does), plus apt, gpgv,
# debian-archive-keyring, xz-utils, patch (all present on a standard Debian 12).
#
# Private apt state lives in CACHE_DIR/apt/; the system's apt configuration and
# lists are never written.

set -euo pipefail
shopt -s inherit_errexit   # keep -e inside $(...) too

# ---- pins -------------------------------------------------------------------
SUITE=bookworm
CURL_SRC=curl
CURL_UPSTREAM=7.88.1
LIBGIT2_SRC=libgit2
LIBGIT2_UPSTREAM=1.5.1
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# Bump when the configure/cmake options below change: older prefixes stop
# counting as cached.
RECIPE_REV=1
STAMP_NAME=.static-deps-complete

# ---- output plumbing ---------------------------------------------------------
# fd 3 = real stdout (only the prefix goes there); everything else -> stderr.
exec 3>&1 1>&2

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf '==> WARNING: %s\n' "$*" >&2; }
die()  { printf '==> ERROR: %s\n' "$*" >&2; exit 1; }

# The URI of the first enabled deb or deb-src entry of the host's apt sources
# that serves suite $1: sources.list and sources.list.d/*.list in the one-line
# format ("deb [OPTIONS] URI SUITE COMPONENT..."), sources.list.d/*.sources
# in deb822 (Types, URIs, Suites, Enabled). Nothing when none does.
apt_mirror() {
    local etc=${XLOOP_APT_ETC:-/etc/apt} f uri
    for f in "$etc/sources.list" "$etc"/sources.list.d/*; do
        [ -f "$f" ] && [ -r "$f" ] || continue
        uri=$(case $f in
        */sources.list | *.list)
            awk -v s="$1" '
                { sub(/#.*/, "") }
                $1 == "deb" || $1 == "deb-src" {
                    i = 2
                    if ($2 ~ /^\[/) {	# [ options ], one word or more
                        while (i < NF && $i !~ /\]$/) i++
                        i++
                    }
                    if ($(i + 1) == s) { print $i; exit }
                }' "$f" ;;
        *.sources)
            awk -v s="$1" '
                function has(list, w,    a, n, k) {
                    n = split(list, a, /[ \t]+/)
                    for (k = 1; k <= n; k++) if (a[k] == w) return 1
                    return 0
                }
                function stanza(    a, n, k) {
                    if (!done && (has(val["types"], "deb") || has(val["types"], "deb-src")) &&
                        !has(tolower(val["enabled"]), "no") && has(val["suites"], s)) {
                        n = split(val["uris"], a, /[ \t]+/)
                        for (k = 1; k <= n && a[k] == ""; k++) ;
                        if (k <= n) { print a[k]; done = 1 }
                    }
                    split("", val); key = ""
                }
                /^[ \t]*#/ { next }
                /^[ \t]*$/ { stanza(); next }
                /^[ \t]/ { if (key != "") val[key] = val[key] " " $0; next }
                {
                    c = index($0, ":")
                    key = tolower(substr($0, 1, c - 1)); val[key] = substr($0, c + 1)
                }
                END { stanza() }' "$f" ;;
        esac)
        if [ -n "$uri" ]; then
            printf '%s\n' "${uri%%/}"
            return 0
        fi
    done
}

if [ "${1:-}" = --mirror ]; then
    [ $# -eq 2 ] || die "usage: $0 --mirror SUITE"
    m=$(apt_mirror "$2")
    [ -n "$m" ] || exit 1
    printf '%s\n' "$m" >&3
    exit 0
fi
[ $# -eq 1 ] || die "usage: $0 CACHE_DIR"
mkdir -p "$1"
CACHE_DIR=$(cd "$1" && pwd -P)
STATIC_DIR=$CACHE_DIR/static
APT_DIR=$CACHE_DIR/apt
SRC_DIR=$CACHE_DIR/src            # downloaded .dsc/.orig/.debian files
mkdir -p "$STATIC_DIR" "$SRC_DIR"

JOBS=$(nproc 2>/dev/null || echo 2)

# Serialize concurrent runs on the same cache.
exec 9>"$STATIC_DIR/.lock"
flock 9
# Holding the lock, so leftovers of interrupted builds are nobody's: drop them.
rm -rf "$STATIC_DIR"/.build.*

# ---- helpers -------------------------------------------------------------------
# Upstream part of a Debian version: drop epoch, Debian revision and a
# repack suffix (+ds, +dfsg).
upstream_of() {
    local v=${1#*:}
    v=${v%-*}
    printf '%s\n' "$v" | sed -E 's/[+~](ds|dfsg)[0-9.]*$//'
}

# Sort Debian versions (one per line on stdin), highest first.
sort_debver_desc() {
    local -a vs=() out=()
    local v i j inserted
    mapfile -t vs
    for v in "${vs[@]}"; do
        [ -n "$v" ] || continue
        inserted=0
        for i in "${!out[@]}"; do
            if dpkg --compare-versions "$v" gt "${out[$i]}"; then
                out=("${out[@]:0:$i}" "$v" "${out[@]:$i}")
                inserted=1
                break
            fi
        done
        [ $inserted -eq 1 ] || out+=("$v")
    done
    for j in "${out[@]}"; do printf '%s\n' "$j"; done
}

stamp_ok() {  # $1 = prefix dir
    [ -f "$1/$STAMP_NAME" ] && grep -qx "recipe=$RECIPE_REV" "$1/$STAMP_NAME" \
        && [ -f "$1/lib/libcurl.a" ] && [ -f "$1/lib/libgit2.a" ] \
        && [ -f "$1/link-flags.txt" ]
}

finish() {  # $1 = prefix dir
    printf '%s\n' "$1" >&3
    exit 0
}

# ---- 1. cached prefix for these pins? ------------------------------------------
if [ "${STATIC_DEPS_REFRESH:-0}" != 1 ]; then
    best='' best_c='' best_g=''
    for d in "$STATIC_DIR"/curl-"$CURL_UPSTREAM"-*_libgit2-"$LIBGIT2_UPSTREAM"*; do
        if [ ! -d "$d" ] || ! stamp_ok "$d"; then continue; fi
        c=$(sed -n 's/^curl=//p' "$d/$STAMP_NAME")
        g=$(sed -n 's/^libgit2=//p' "$d/$STAMP_NAME")
        if [ -z "$best" ] || dpkg --compare-versions "$c" gt "$best_c" \
            || { [ "$c" = "$best_c" ] && dpkg --compare-versions "$g" gt "$best_g"; }; then
            best=$d best_c=$c best_g=$g
        fi
    done
    if [ -n "$best" ]; then
        log "using cached $best"
        finish "$best"
    fi
fi

# ---- 2. private apt configuration ----------------------------------------------
[ -r "$KEYRING" ] || die "missing $KEYRING (install debian-archive-keyring)"
for t in apt-get apt-cache dpkg-source dpkg autoreconf libtoolize cmake make gcc pkg-config patch flock; do
    command -v "$t" >/dev/null || die "missing tool: $t (needs: autoconf automake libtool cmake make gcc pkg-config dpkg-dev patch)"
done

# The mirrors the host's own apt sources name (read only); none is written here.
MAIN_URI=$(apt_mirror "$SUITE")
[ -n "$MAIN_URI" ] || die "the host's apt sources (${XLOOP_APT_ETC:-/etc/apt}/sources.list, sources.list.d/) name no mirror for $SUITE: add its Debian mirror there (a deb or deb-src line for $SUITE)"
SEC_URI=$(apt_mirror "$SUITE-security")

mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
cat >"$APT_DIR/sources.sources.new" <<EOF
Types: deb-src
URIs: $MAIN_URI
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: $KEYRING
EOF
if [ -n "$SEC_URI" ]; then
    printf '\nTypes: deb-src\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: %s\n' \
        "$SEC_URI" "$SUITE" "$KEYRING" >>"$APT_DIR/sources.sources.new"
else
    warn "the host's apt sources name no mirror for $SUITE-security: building from $SUITE and $SUITE-updates only"
fi
mv "$APT_DIR/sources.sources.new" "$APT_DIR/sources.sources"

APT_OPTS=(
    -o "Dir::Etc::SourceList=$APT_DIR/sources.sources"
    -o "Dir::Etc::SourceParts=-"
    -o "Dir::State::Lists=$APT_DIR/lists"
    -o "Dir::Cache=$APT_DIR/cache"
    -o "APT::Sandbox::User=root"
)

log "apt-get update (private lists in $APT_DIR)"
apt-get "${APT_OPTS[@]}" -q update

# ---- 3. resolve exact Debian versions ------------------------------------------
# Prints candidate versions (highest first); fails if the archive offers a
# different upstream version than pinned.
candidates() {  # $1 = source package, $2 = pinned upstream
    local pkg=$1 pin=$2 vs v bad=
    vs=$(apt-cache "${APT_OPTS[@]}" showsrc "$pkg" \
        | awk -v p="$pkg" '/^Package: /{cur=$2} /^Version: /{ if (cur == p) print $2 }' \
        | sort -u | sort_debver_desc)
    [ -n "$vs" ] || die "source package $pkg not found in $SUITE"
    while read -r v; do
        [ "$(upstream_of "$v")" = "$pin" ] || bad="$bad $v"
    done <<<"$vs"
    [ -z "$bad" ] || die "$pkg: archive offers upstream version(s) other than the pinned $pin:$bad (update the pin in $0)"
    printf '%s\n' "$vs"
}

# Download the newest downloadable version; prints it.
fetch_source() {  # $1 = source package, $2 = pinned upstream
    local pkg=$1 pin=$2 v list
    list=$(candidates "$pkg" "$pin") || exit 1
    while read -r v; do
        log "apt-get source --download-only $pkg=$v"
        if (cd "$SRC_DIR" && apt-get "${APT_OPTS[@]}" -q source --download-only "$pkg=$v") >&2; then
            printf '%s\n' "$v"
            return 0
        fi
        warn "$pkg $v is listed by the archive but could not be downloaded; trying the next older revision"
    done <<<"$list"
    die "$pkg: no downloadable source version for upstream $pin"
}

CURL_VER=$(fetch_source "$CURL_SRC" "$CURL_UPSTREAM") || exit 1
GIT2_VER=$(fetch_source "$LIBGIT2_SRC" "$LIBGIT2_UPSTREAM") || exit 1
if [ -z "$CURL_VER" ] || [ -z "$GIT2_VER" ]; then die "could not resolve source versions"; fi
log "resolved: $CURL_SRC $CURL_VER, $LIBGIT2_SRC $GIT2_VER"

PREFIX=$STATIC_DIR/curl-${CURL_VER}_libgit2-${GIT2_VER}
if stamp_ok "$PREFIX"; then
    log "using cached $PREFIX"
    finish "$PREFIX"
fi

# ---- 4. build in a temporary tree ------------------------------------------------
WORK=$(mktemp -d "$STATIC_DIR/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM HUP
STAGE=$WORK/stage          # DESTDIR; files land in $STAGE$PREFIX
export CFLAGS="-O2"
export LC_ALL=C

dsc_of() { printf '%s/%s_%s.dsc' "$SRC_DIR" "$1" "${2#*:}"; }

log "unpacking $CURL_SRC $CURL_VER"
dpkg-source -x "$(dsc_of "$CURL_SRC" "$CURL_VER")" "$WORK/curl" >&2
log "unpacking $LIBGIT2_SRC $GIT2_VER"
dpkg-source -x "$(dsc_of "$LIBGIT2_SRC" "$GIT2_VER")" "$WORK/libgit2" >&2

# curl and libgit2 build at the same time: curl's configure runs one
# check after another, and libgit2's compile fills the other core. Each
# writes its own log; a failure shows it.
# -- curl --
build_curl() {
    # Debian's series ends with the GnuTLS and NSS flavour patches (they rename the
    # library); debian/rules pops them for the OpenSSL build, so do the same.
    cd "$WORK/curl"
    for p in 99_nss.patch 90_gnutls.patch; do
        if [ -f "debian/patches/$p" ] && grep -qx "$p" .pc/applied-patches 2>/dev/null; then
            log "curl: reverting Debian flavour patch $p"
            patch -s -R -p1 <"debian/patches/$p"
        fi
    done
    log "curl: autoreconf"
    autoreconf -fi >&2
    log "curl: configure (HTTP/HTTPS over OpenSSL only, static)"
    ./configure \
        --prefix="$PREFIX" --libdir="$PREFIX/lib" \
        --disable-shared --enable-static \
        --disable-dependency-tracking --disable-maintainer-mode \
        --with-openssl --with-zlib \
        --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt --with-ca-path=/etc/ssl/certs \
        --enable-http --enable-proxy --enable-ipv6 --enable-threaded-resolver \
        --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
        --disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap \
        --disable-smb --disable-smtp --disable-gopher --disable-mqtt \
        --disable-manual --disable-ntlm-wb \
        --without-gssapi --without-libpsl --without-brotli --without-zstd \
        --without-nghttp2 --without-nghttp3 --without-ngtcp2 --without-quiche \
        --without-libidn2 --without-librtmp --without-libssh2 --without-libssh \
        --without-wolfssh --without-libgsasl --without-hyper \
        --without-gnutls --without-nss --without-mbedtls --without-wolfssl \
        --without-rustls --without-bearssl --without-zsh-functions-dir \
        --without-fish-functions-dir \
        >&2
    log "curl: make"
    make -j"$JOBS" -C lib >&2
    make -C lib install DESTDIR="$STAGE" >&2
    make -C include install DESTDIR="$STAGE" >&2
    make install-pkgconfigDATA install-binSCRIPTS DESTDIR="$STAGE" >&2
}

# -- libgit2 --
build_libgit2() {
    log "libgit2: cmake (static, no HTTPS/SSH/GSSAPI, system http-parser, pcre2)"
    cmake -S "$WORK/libgit2" -B "$WORK/libgit2-build" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib \
        -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTS=OFF -DBUILD_CLI=OFF \
        -DBUILD_EXAMPLES=OFF -DBUILD_FUZZERS=OFF \
        -DUSE_HTTPS=OFF -DUSE_SSH=OFF -DUSE_GSSAPI=OFF -DUSE_NTLMCLIENT=OFF \
        -DUSE_HTTP_PARSER=system -DREGEX_BACKEND=pcre2 -DUSE_BUNDLED_ZLIB=OFF \
        -DENABLE_REPRODUCIBLE_BUILDS=ON \
        >&2
    log "libgit2: make"
    cmake --build "$WORK/libgit2-build" -j "$JOBS" >&2
    DESTDIR="$STAGE" cmake --install "$WORK/libgit2-build" >&2
}

build_curl >"$WORK/curl.log" 2>&1 &
curl_pid=$!
build_libgit2 >"$WORK/libgit2.log" 2>&1 &
git_pid=$!
for part in curl libgit2; do
    if [ "$part" = curl ]; then pid=$curl_pid; else pid=$git_pid; fi
    if ! wait "$pid"; then
        tail -n 40 "$WORK/$part.log" >&2
        die "$part failed to build (its log's end is above)"
    fi
    grep '^==>' "$WORK/$part.log" >&2 || true
done

OUT=$STAGE$PREFIX
[ -f "$OUT/lib/libcurl.a" ] || die "libcurl.a was not installed"
[ -f "$OUT/lib/libgit2.a" ] || die "libgit2.a was not installed"
rm -f "$OUT"/lib/*.la

# ---- 5. link flags + self-check --------------------------------------------------
# Order: users before the libraries they need (from libgit2.pc / libcurl.pc
# Libs.private and the system archives): libgit2 -> http_parser, pcre2-8, z,
# rt, pthread; libcurl -> ssl, crypto, z, pthread; sqlite3 -> m, dl, pthread;
# crypto -> dl, pthread. (rt/pthread/dl are empty stubs in glibc >= 2.34 but
# keep the list valid elsewhere.)
LINK_FLAGS="-L$PREFIX/lib -lgit2 -lcurl -lsqlite3 -ljansson -lhttp_parser -lpcre2-8 -lssl -lcrypto -lz -lrt -lpthread -ldl -lm"
printf '%s\n' "$LINK_FLAGS" >"$OUT/link-flags.txt"

log "self-check: -static link of libgit2 + libcurl + sqlite3 + jansson"
cat >"$WORK/check.c" <<'EOF'
#include <git2.h>
#include <curl/curl.h>
#include <sqlite3.h>
#include <jansson.h>
#include <stdio.h>
int main(void) {
    int ok = git_libgit2_init() > 0;
    ok = ok && curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    CURL *c = curl_easy_init();
    sqlite3 *db = NULL;
    ok = ok && c && sqlite3_open(":memory:", &db) == SQLITE_OK;
    json_t *j = json_loads("{}", 0, NULL);
    ok = ok && j;
    printf("%s\n", curl_version());
    json_decref(j); sqlite3_close(db); curl_easy_cleanup(c);
    curl_global_cleanup(); git_libgit2_shutdown();
    return ok ? 0 : 1;
}
EOF
# Link against the staged copy (same library names, staged -L first).
# shellcheck disable=SC2086  # word splitting of the flag list is intended
gcc -O2 -static -I"$OUT/include" "$WORK/check.c" -o "$WORK/check" \
    -L"$OUT/lib" $LINK_FLAGS 2>"$WORK/check.log" \
    || { cat "$WORK/check.log" >&2; die "static link self-check failed"; }
# Expected: glibc's warnings that getaddrinfo & co. need NSS modules at run time.
sed 's/^/    /' "$WORK/check.log" >&2
"$WORK/check" >&2 || die "self-check binary failed to run"

# ---- 6. publish atomically ---------------------------------------------------------
{
    echo "recipe=$RECIPE_REV"
    echo "curl=$CURL_VER"
    echo "libgit2=$GIT2_VER"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/$STAMP_NAME"

# A leftover dir without a valid stamp is never used; replace it.
if [ -e "$PREFIX" ]; then
    warn "removing incomplete $PREFIX"
    mv "$PREFIX" "$WORK/old-prefix"
fi
mv "$OUT" "$PREFIX"
log "installed $PREFIX"
finish "$PREFIX"
