#!/usr/bin/env bats
# Bad input: a sentence the user can act on, the right exit status, nothing left behind.

load helpers
bats_require_minimum_version 1.5.0

@test "no such PID: exit 1 with a clear sentence" {
	run "$EBPROF" mem -p 999999 -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot attach to PID 999999: no such process"* ]]
	assert_no_probes
}

@test "command not found: exit 127" {
	run -127 "$EBPROF" mem -- no-such-command-ebprof
	[[ "$output" == *"cannot run 'no-such-command-ebprof': command not found"* ]]
}

@test "not executable / not a program: exit 126, in every mode" {
	printf 'just text\n' > "$T/notes.txt"
	run "$EBPROF" mem -- "$T/notes.txt"
	[ "$status" -eq 126 ]
	[[ "$output" == *"cannot run"*"Permission denied"* ]]
	# no executable format (ENOEXEC): a file with no #! line, a broken ELF file
	chmod +x "$T/notes.txt"
	run "$EBPROF" mem -- "$T/notes.txt"
	[ "$status" -eq 126 ]
	[[ "$output" == *"cannot run"*"Exec format error"* ]]
	printf '\x7fELFgarbage' > "$T/bad.elf"
	chmod +x "$T/bad.elf"
	for mode in mem cpu; do
		run "$EBPROF" "$mode" -- "$T/bad.elf"
		[ "$status" -eq 126 ]
		[[ "$output" == *"cannot run"*"Exec format error"* ]]
	done
	run "$EBPROF" stacks -e sched:sched_switch -- "$T/bad.elf"
	[ "$status" -eq 126 ]
	# a directory
	run "$EBPROF" mem -- "$T"
	[ "$status" -eq 126 ]
	[[ "$output" == *"cannot run"*"Is a directory"* ]]
	# found, but its interpreter is not
	printf '#!/nonexistent/sh\n' > "$T/badint.sh"
	chmod +x "$T/badint.sh"
	run "$EBPROF" mem -- "$T/badint.sh"
	[ "$status" -eq 126 ]
	[[ "$output" == *"interpreter"*"does not exist"* ]]
	run -127 "$EBPROF" mem -- "$T/no-such-file"
}

@test "not root: exit 1 and says what is needed" {
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$EBPROF" mem -- /bin/true
	[ "$status" -eq 1 ]
	[[ "$output" == *"needs root"* ]]
}

# concurrent: its -a run fails before tracing (no capability)
# bats test_tags=concurrent
@test "root without the capabilities: the missing one is named, in every mode" {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	for mode in mem cpu; do
		run setpriv --inh-caps=-all --bounding-set=-bpf,-perfmon,-sys_admin \
			"$EBPROF" $mode -- /bin/true
		[ "$status" -eq 1 ]
		[[ "$output" == *"running as root, but without CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)"* ]]
		[[ "$output" != *"verifier"* ]]
	done
	run setpriv --inh-caps=-all --bounding-set=-perfmon,-sys_admin "$EBPROF" mem -- /bin/true
	[ "$status" -eq 1 ]
	[[ "$output" == *"without CAP_PERFMON (or CAP_SYS_ADMIN)"* ]]
	sleep 30 &
	BG_PIDS+=("$!")
	run setpriv --inh-caps=-all --bounding-set=-sys_ptrace "$EBPROF" mem -p "$!" -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"without CAP_SYS_PTRACE"*"-p, -a"* ]]
	[[ "$output" != *"No such file"* ]]
	# a launched command needs no CAP_SYS_PTRACE: it is ebprof's own child
	run setpriv --inh-caps=-all --bounding-set=-sys_ptrace "$EBPROF" mem -q -o "$T/out.json" -- /bin/true
	[ "$status" -eq 0 ]
	assert_no_probes
}

@test "-p of a kernel thread: said so, for the modes that trace user processes only" {
	run "$EBPROF" mem -p 2 -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot attach to PID 2 (kthreadd): it is a kernel thread"* ]]
	assert_no_probes
}

@test "usage errors: exit 2" {
	run "$EBPROF" mem
	[ "$status" -eq 2 ]
	[[ "$output" == *"nothing to trace"* ]]
	run "$EBPROF" mem -p 1 -- /bin/true
	[ "$status" -eq 2 ]
	run "$EBPROF" mem -p abc
	[ "$status" -eq 2 ]
	run "$EBPROF" mem -o out.xyz -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *".txt"* ]]
	run "$EBPROF" mem --sort size -- /bin/true
	[ "$status" -eq 2 ]
	run "$EBPROF" nosuchmode
	[ "$status" -eq 2 ]
}

@test "durations: one syntax for -d, --min-age and --temp-threshold; nan, 1e-300 and 0.1ns are usage errors" {
	for opt in -d --min-age --temp-threshold; do
		for bad in nan inf 1e-300 0.1ns 5d -1s; do
			run "$EBPROF" mem "$opt" "$bad" -- /bin/true
			[ "$status" -eq 2 ] || { echo "$opt $bad: status $status"; false; }
			[[ "$output" == *"invalid"*"'$bad'"* ]]
		done
	done
	for mode in cpu "stacks -e sched:sched_switch"; do
		run "$EBPROF" $mode -d 1e-300 -- /bin/true
		[ "$status" -eq 2 ]
	done
	run "$EBPROF" mem -q -d 1h --min-age 2m --temp-threshold 1ms -- /bin/true
	[ "$status" -eq 0 ]
}

@test "help: ebprof --help and ebprof mem --help show examples" {
	run "$EBPROF" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"ebprof mem -p 4242 -d 30"* ]]
	run "$EBPROF" mem --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Examples:"* ]]
	[[ "$output" == *"--max-live"* ]]
}

@test "outputs are checked before tracing: exit 2 naming the path, nothing run, in every mode" {
	run "$EBPROF" mem -o /nonexistent-dir/out.json -o "$T/out.txt" -- touch "$T/ran"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot write the report to '/nonexistent-dir/out.json': directory '/nonexistent-dir' does not exist"* ]]
	[ ! -e "$T/ran" ]
	[ ! -e "$T/out.txt" ]
	mkdir "$T/dir.json"
	run "$EBPROF" cpu -o "$T/dir.json" -- touch "$T/ran"
	[ "$status" -eq 2 ]
	[[ "$output" == *"'$T/dir.json': it is a directory"* ]]
	echo x > "$T/file.txt"
	run "$EBPROF" stacks -e sched:sched_switch -o "$T/file.txt/x.json" -- touch "$T/ran"
	[ "$status" -eq 2 ]
	[[ "$output" == *"is not a directory"* ]]
	[ ! -e "$T/ran" ]
	assert_no_probes
}

@test "a symbolic link to a device is never written through" {
	# /dev/zero exists on every machine (loop devices may not); a block device when there is one
	devs=(/dev/zero)
	[ ! -b /dev/loop0 ] || devs+=(/dev/loop0)
	for dev in "${devs[@]}"; do
		rm -f "$T/flame.svg" "$T/ran"
		ln -s "$dev" "$T/flame.svg"
		run "$EBPROF" mem -o "$T/flame.svg" -- touch "$T/ran"
		[ "$status" -eq 2 ]
		[[ "$output" == *"'$T/flame.svg': it is a symbolic link to something that is not a regular file"* ]]
		[ ! -e "$T/ran" ]
		[ -L "$T/flame.svg" ]
	done
}

@test "an output that fails at the end: exit 1, the others written, the profile saved as a pprof" {
	mkdir "$T/gone" "$T/tmp"
	TMPDIR="$T/tmp" run "$EBPROF" mem -q -o "$T/gone/out.json" -o "$T/out.txt" -- rmdir "$T/gone"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot write '$T/gone/out.json'"* ]]
	[[ "$output" == *"the profile is saved in $T/tmp/ebprof-mem-"*".pb.gz"* ]]
	[ -s "$T/out.txt" ]
	saved=$(ls "$T"/tmp/ebprof-mem-*.pb.gz)
	"$EBPROF" report "$saved" -o "$T/back.json"
	jqe '.processes[0].comm == "rmdir"' "$T/back.json"
}

@test "launch: SIGTERM to ebprof reaches the command, the report is written" {
	"$EBPROF" mem -o "$T/out.json" -- sleep 30 &
	eb=$!
	BG_PIDS+=("$eb")
	sleep 0.5
	kill -TERM "$eb"
	st=0
	wait "$eb" || st=$?
	[ "$st" -eq 143 ]
	jqe '.processes[0].comm == "sleep"' "$T/out.json"
	child=$(jq '.processes[0].pid' "$T/out.json")
	wait_gone "$child" 5
	assert_no_probes
}

@test "launch: a command killed mid-run still gets its report" {
	"$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture" --linger 30 > "$T/fx.log" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/fx.log" 'done'
	pkill -9 -P "$eb" memfixture
	st=0
	wait "$eb" || st=$?
	[ "$st" -eq 137 ]
	jqe '.processes[0].alloc_count > 100000' "$T/out.json"
	jqe '[.sites[].frames[].function] | index("leak_big")' "$T/out.json"
	assert_no_probes
}

@test "launch: -d stops tracing and ebprof still ends with the command" {
	run "$EBPROF" mem -d 0.3 -o "$T/out.json" -- sh -c 'sleep 1; exit 3'
	[ "$status" -eq 3 ]
	[ -s "$T/out.json" ]
	assert_no_probes
}
