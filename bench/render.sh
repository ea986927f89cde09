#!/usr/bin/env bash
# Rendering benchmark (issue: 200,000 sites to SVG and HTML in under 5 s and 20 MB): builds
# bench/render.c against OUTDIR/libebprof.a and renders a synthetic profile to every format.
# Usage: bench/render.sh OUTDIR [SITES]      (`make bench-render`)
set -euo pipefail
out=${1:-build}
sites=${2:-200000}
cd "$(dirname "$0")/.."
mkdir -p "$out/bench"
gcc -O2 -g -std=gnu11 -D_GNU_SOURCE -Isrc -I"$out" bench/render.c "$out/libebprof.a" \
	-lbpf -lelf -ldw -lz -llzma -liberty -lpthread -o "$out/bench/render"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "## Rendering a synthetic memory profile ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs)"
echo
"$out/bench/render" "$tmp" "$sites" | tee "$out/bench-render.md"
