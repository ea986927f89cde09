#!/usr/bin/env bash
# Install every Debian package ebprof needs to build, test and run its demo.
# Idempotent: packages already present are skipped, so `make demo` and `make check` can call it
# every time. Needs root (apt-get); non-root with everything present is fine.
set -euo pipefail

PKGS=(
	# build
	make gcc g++ clang llvm binutils libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev
	libiberty-dev libzstd-dev liblzma-dev pkg-config linux-libc-dev
	# symbolization of glibc frames in tests and the demo
	libc6-dbg
	# tests: runners, test-input tools (xz for minidebuginfo), process tools
	libcmocka-dev bats jq xz-utils procps util-linux strace tmux
	# real programs the e2e tests profile, and the real consumers that check our outputs:
	# Go's pprof, flamegraph.pl (folded stacks), xmllint (SVG)
	sqlite3 golang-1.19-go libdevel-nytprof-perl libxml2-utils
	# bench: GNU time for peak RSS and CPU
	time
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (sudo make ...) so they can be installed with apt-get" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
