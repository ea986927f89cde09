#!/usr/bin/env bash
# Install every Debian package ebprof needs to build, test and run its demo.
# Idempotent: packages already present are skipped, so `make demo` and `make check` can call it
# every time. Needs root (apt-get); non-root with everything present is fine.
set -euo pipefail

PKGS=(
	# build
	make gcc g++ libc6-dev clang llvm binutils libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev
	libiberty-dev libzstd-dev liblzma-dev pkg-config linux-libc-dev
	# ebprof top's screen
	libncurses-dev
	# ebprof agent pushes over HTTP(S)
	libcurl4-openssl-dev
	# probe placement decodes allocator prologues
	libcapstone-dev
	# symbolization of glibc frames in tests and the demo
	libc6-dbg
	# tests: runners, test-input tools (xz for minidebuginfo), process tools
	libcmocka-dev bats jq xz-utils procps util-linux mount strace tmux python3 bc
	# bats --jobs: e2e tests that may run beside another run two at a time (tests/run-e2e.sh)
	parallel
	# io's journal test: ext4 (with its journal) on a loop device
	e2fsprogs
	# the agent's https test makes a self-signed certificate
	openssl
	# real programs the e2e tests profile, and the real consumers that check our outputs:
	# Go's pprof, flamegraph.pl (folded stacks), xmllint (SVG)
	sqlite3 golang-1.19-go libdevel-nytprof-perl libxml2-utils
	# process trees: a server with a master and a worker that changes user, and its load
	nginx curl
	# the leak tests: valgrind's memcheck is the reference, git one of the real programs
	valgrind git
	# other allocators (tests/e2e/mem_alloc.bats preloads them; the placement tests check their
	# entry points) and redis-server, which links jemalloc, loaded by redis-benchmark
	libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 redis-server redis-tools
	# a browser for the HTML report and flame graph tests (driven by npm playwright-core)
	chromium
	# bench: GNU time for peak RSS and CPU
	time
	# bench: the bpftrace comparison (bench/track.bt), and perf record, the other anchor of
	# bench/cpu.sh
	bpftrace linux-perf
)

# node and npm run the JavaScript validators (speedscope's schema, the HTML report in a
# browser): use the machine's own if it has them, else Debian's
if ! command -v npm >/dev/null 2>&1; then
	PKGS+=(nodejs npm)
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages: ${missing[*]}" >&2
		echo "install-deps: run as root (sudo make ...) so apt-get can install them" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm validators the tests use (tests/tools), pinned by its package-lock.json; reinstalled only
# when the lock file changed. No root needed.
tools="$(cd "$(dirname "$0")/.." && pwd)/tests/tools"
if [ -f "$tools/package-lock.json" ] &&
   ! [ "$tools/node_modules/.package-lock.json" -nt "$tools/package-lock.json" ]; then
	echo "install-deps: installing the npm validators in tests/tools"
	# playwright-core drives Debian's chromium; it must never fetch a browser of its own
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$tools" --no-audit --no-fund \
		--loglevel=error
fi
