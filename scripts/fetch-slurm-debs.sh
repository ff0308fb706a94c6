#!/bin/bash
# fetch-slurm-debs.sh -- downloads Debian 12's Slurm 22.05 (slurmctld, slurmd,
# slurmrestd, the client commands, the basic and JWT plugins) and munge, with
# the shared libraries they need, into DIR, so that scripts/gpu-slurm.sh can
# unpack them on a GPU machine that has no package registry (the device's
# Ubuntu 24.04). Run it where Debian's registry is reachable.
#
#   usage: fetch-slurm-debs.sh DIR        (DIR should be git-ignored)
#
# DIR gets two sets. DIR/*.deb: Slurm, munge, and the libraries found with
# readelf (NEEDED of every binary and plugin, then of those libraries) that a
# minimal Ubuntu lacks (munge, lua 5.1, json-c, hwloc, numa, yaml, libjwt and
# its libb64/jansson, http-parser). DIR/fallback/*.deb: common libraries a
# minimal system normally has (readline, lz4, pam, gcrypt, zlib, bz2, dbus,
# udev, ssl); gpu-slurm.sh puts them on LD_LIBRARY_PATH only when ldd says a
# library is missing without them.
set -euo pipefail
dir=${1:?usage: fetch-slurm-debs.sh DIR}
mkdir -p "$dir/fallback"
dir=$(cd "$dir" && pwd)
cd "$dir"
apt-get download slurmctld slurmd slurmrestd slurm-client slurm-wlm-basic-plugins \
	slurm-wlm-jwt-plugin munge libmunge2 \
	liblua5.1-0 libjson-c5 libhwloc15 libnuma1 libyaml-0-2 libjwt0 libb64-0d \
	libjansson4 libhttp-parser2.9 2>&1 | grep -v unsandboxed || true
cd fallback
apt-get download libreadline8 libtinfo6 liblz4-1 libpam0g libgcrypt20 libgpg-error0 \
	zlib1g libbz2-1.0 libdbus-1-3 libsystemd0 libudev1 libssl3 libcap2 libzstd1 \
	liblzma5 libaudit1 libcap-ng0 2>&1 | grep -v unsandboxed || true
cd "$dir"
# check: every NEEDED library of the unpacked set is either in it or libc's
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in *.deb fallback/*.deb; do dpkg -x "$f" "$tmp"; done
missing=$(find "$tmp" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
	{ xargs -0 readelf -d 2>/dev/null || true; } | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u |
	while read -r lib; do
		case $lib in libc.so.*|libm.so.*|libresolv.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*|libstdc++.so.*|libgcc_s.so.*) continue ;; esac
		[ -n "$(find "$tmp" -name "$lib" -print -quit)" ] || echo "$lib"
	done) || true
[ -z "$missing" ] || echo "fetch-slurm-debs: not carried (the target must have them): $(echo $missing)"
du -sh "$dir"
ls -1 "$dir" "$dir/fallback"
