#!/usr/bin/env bats
# ebprof io end to end: O_DIRECT reads by dd of a file under /var/tmp (one block request per
# read, issued by dd itself), checked against the request count, the bytes, and the read time
# the kernel itself accounts in /sys/block/DISK/stat; a buffered write and its fsync
# (tests/fixtures/fsyncfix.c), and the same data left to the writeback flushers; every output
# format, -a, --device, bad input, and nothing left attached afterwards.

load helpers

# alone, every test: the disk's own counts (/sys/block), loop devices, -a and --device
# bats file_tags=alone

# helpers' teardown, and the directory under /var/tmp
eval "$(declare -f teardown | sed '1s/teardown/helpers_teardown/')"
teardown() {
	[ -z "${VT:-}" ] || rm -rf "$VT"
	[ -z "${MNT:-}" ] || umount "$MNT"
	[ -z "${LOOPDEV:-}" ] || losetup -d "$LOOPDEV"
	helpers_teardown
}

PPROF=/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof

# Sum of field $2 over the sites of pid $3 whose leaf frame starts with $4 (e.g. "vda read"),
# or is $4 with a fifth argument "exact".
sites_sum() {
	jq --argjson pid "$3" --arg leaf "$4" --arg f "$2" --arg exact "${5:-}" \
		'[.sites[] | select(.pid == $pid and (.frames[0].function as $l
		  | if $exact == "" then $l | startswith($leaf) else $l == $leaf end)) | .[$f]]
		 | add // 0' "$1"
}

# True (and says so) when the kernel reported no completion for some request of the run in
# $1: this kernel now and then delivers none (no tracepoint reaches BPF while the VM's PID 1
# runs, docs/PERFORMANCE.md "offcpu"); counted when its struct request is used again, or at
# the end when it is found freed (completion_unseen). A request really in flight at the end
# (a flusher's) is in in_flight. Both are said in the report, and then
# the run's counts are not the ones to check against the workload's.
completions_lost() {
	local unseen inflight
	unseen=$(jq '.drops.completion_unseen' "$1")
	inflight=$(jq '[.groups[] | .in_flight // 0] | add // 0' "$1")
	[ "$unseen" -ne 0 ] || [ "$inflight" -ne 0 ] || return 1
	echo "$unseen requests ended without a completion event, $inflight in flight at the end"
}

skip_lost() {
	skip "in each of its runs some request had no completion reported (completion_unseen) or \
was still in flight at the end (a flusher's, or one whose completion went unseen)"
}

# Run `ebprof io -o $x.json -o $x.txt ARGS` ($x: $T/xN) up to 3 times, until a run had every
# request's completion; $s0 and $s1: /sys/block/$1/stat just before and after the last run.
# Skips when every run lost one.
io_tries() {
	local dev=$1 try
	shift
	for try in 1 2 3; do
		x=$T/x$try
		s0=$(cat "/sys/block/$dev/stat")
		run "$EBPROF" io -o "$x.json" -o "$x.txt" "$@"
		s1=$(cat "/sys/block/$dev/stat")
		[ "$status" -eq 0 ]
		[ -s "$x.json" ]
		[ -s "$x.txt" ]
		completions_lost "$x.json" || return 0
	done
	skip_lost
}

dd_pid() {
	jq '[.processes[] | select(.comm == "dd") | .pid][0]' "$1"
}

# What the latency is checked against. ebprof's is each request's time from block_io_start
# (as the bio becomes a request, in the reader's context) to block_rq_complete. The kernel's
# read time in /sys/block/DISK/stat (field 4) is another interval with other clock reads:
# per request, the nanoseconds from rq->start_time_ns (blk_time_get_ns, which inside a plug
# gives the plug's cached time) to blk_account_io_done's `now`, taken after the completion
# tracepoint's programs ran; summed, and shown in ms. The two differ by a few us a request
# either way: CI once had 89 ms there against ebprof's 77.6 ms (13%, 5.7 us a request, at
# load 12); here one run had 63 ms against ebprof's 64.57 ms. A bound on that difference is a
# bound on the load, so /sys/block gives the request count (exact) and not the time. The
# time's oracle is bpftrace on the same two tracepoints in the same run: dd's requests keyed
# by disk and sector, its probes registered before ebprof's, so each end reads its clock in
# the same order. It sees most requests (see below): their mean latency within 2% of
# ebprof's (0.7% in the runs made here).
# alone: bpftrace's machine-wide tracepoints and the disk's own counts (the file's tag)
@test "io: 2,000 O_DIRECT reads by dd: 2,000 requests, 8,192,000 bytes, mean latency within 2% of bpftrace's block_io_start to block_rq_complete" {
	var_tmp_disk
	make_file "$VT/f" 2000
	stat_file=/sys/block/$DISK/stat
	for try in 1 2 3 4 5; do
		start_bpftrace 'tracepoint:block:block_io_start /comm == "dd"/ {
				@t[args->dev, args->sector] = nsecs; }
			tracepoint:block:block_rq_complete /@t[args->dev, args->sector]/ {
				@ns = sum(nsecs - @t[args->dev, args->sector]); @n = count();
				delete(@t[args->dev, args->sector]); }
			BEGIN { printf("ready\n"); } END { clear(@t); }'
		# the disk's accounting read right around dd, inside the traced command
		run "$EBPROF" io -q -o "$T/x.json" -o "$T/x.txt" -- sh -c "
			s0=\$(cat $stat_file)
			dd if='$VT/f' of=/dev/null bs=4096 count=2000 iflag=direct status=none
			s1=\$(cat $stat_file)
			printf '%s\n%s\n' \"\$s0\" \"\$s1\" > '$T/stat'"
		echo "$output"
		[ "$status" -eq 0 ]
		stop_bpftrace >/dev/null
		pid=$(dd_pid "$T/x.json")
		jq -c '.processes[] | {pid, comm, requests, io_bytes}' "$T/x.json"
		# dd's reads are synchronous: none is in flight at the end, really
		if completions_lost "$T/x.json"; then
			busy=1
			continue
		fi
		# its O_DIRECT reads, exactly: "read (sync)" (a page fault or an inode block it
		# had to read, if any, are reads of its too, with other flags)
		[ "$(sites_sum "$T/x.json" requests "$pid" "$DISK read (sync)" exact)" -eq 2000 ]
		[ "$(sites_sum "$T/x.json" io_bytes "$pid" "$DISK read (sync)" exact)" -eq 8192000 ]
		# each with a latency: every read in the histogram, none at 0 ns
		jq -e --arg d "$DISK" '.groups[] | select(.labels.device == $d and .labels.op == "read")
			| (.histograms[0].buckets | map(.count) | add) == .requests
			  and (.histograms[0].buckets | map(select(.min == 0)) | length) == 0' \
			"$T/x.json" >/dev/null
		# the report leads with the disk's table, then the histograms, then the stacks
		grep -qE "^  $DISK +read +[0-9]+ " "$T/x.txt"
		awk '/^By device and op: latency( \(the top [0-9]+ of [0-9]+\))?$/ { a = NR }
			/^Histograms( \(the top [0-9]+ of [0-9]+\))?$/ { b = NR }
			/^Top .* stacks? by latency/ { c = NR } END { exit !(a && a < b && b < c) }' \
			"$T/x.txt"
		reads=$(awk 'NR == 1 { r = $1 } NR == 2 { print $1 - r }' "$T/stat")
		ticks=$(awk 'NR == 1 { t = $4 } NR == 2 { print $4 - t }' "$T/stat")
		mine=$(sites_sum "$T/x.json" requests "$pid" "$DISK read")
		lat=$(sites_sum "$T/x.json" latency "$pid" "$DISK read")
		echo "try $try: /sys/block/$DISK/stat: $reads reads, $ticks ms; dd: $mine reads, $lat ns"
		# something else read from the disk meanwhile: the kernel's time is not dd's alone
		[ "$reads" -eq "$mine" ] || continue
		bn=$(sed -n 's/^@n: //p' "$T/bt.out")
		bns=$(sed -n 's/^@ns: //p' "$T/bt.out")
		echo "bpftrace: dd's $bn requests, $bns ns"
		# its classic tracepoints' programs miss an event that comes while another
		# perf-event BPF program runs on that CPU (the kernel's bpf_prog_active: a
		# completion interrupt during a profiler's sample, anyone's): 1,978 of 2,000 once,
		# 1,294 in a run of this file beside other sessions' profilers. A request missed at
		# either end is not in its numbers at all, so the mean of those it has is
		# compared, when it saw 90% of them: else that run is tried again, as one where
		# something else read the disk (1,294 of 2,000 had a mean 2.5% off).
		[ "$bn" -le "$mine" ]
		if [ $((bn * 10)) -lt $((mine * 9)) ]; then
			missed=1
			continue
		fi
		within $((lat / mine)) $((bns / bn)) 2
		return 0
	done
	[ -z "${busy:-}" ] || skip "in some of 5 runs the kernel reported no completion of some \
requests (completion_unseen: heavy I/O load), in the others something else read from $DISK"
	[ -z "${missed:-}" ] || skip "in some of 5 runs bpftrace missed over 10% of dd's requests \
(other perf-event BPF programs on the CPUs), in the others something else read from $DISK"
	skip "something else read from $DISK during each of 5 runs: /sys/block/$DISK/stat is not dd's alone"
}

@test "io: a full stack table (--max-stacks 1) costs stacks, not totals: each of 4 dd's 300 reads in its row, as bpftrace's block_rq_issue counts them" {
	var_tmp_disk
	make_file "$VT/f" 300
	# dd's program and libraries in the page cache first: under memory pressure a dd's start
	# read them back (readahead, 5 requests of 28 KiB once), before ebprof had attached to it
	# and in bpftrace's count
	dd if="$VT/f" of=/dev/null bs=4096 count=1 iflag=direct status=none
	# the oracle: every dd's reads issued, by process (O_DIRECT reads are issued in the
	# reader's context); keyed by pid, so others' dd on the machine do not mix in; reads only:
	# a task that unplugs issues what others queued too (a 6.8 MB writeback request was once
	# issued in a dd's context on the busy test machine)
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:block:block_rq_issue /comm == "dd" && strncmp(args->rwbs, "R", 1) == 0/ {
			@n[pid] = count(); @b[pid] = sum(args->bytes); }'
	io_tries "$DISK" -q --max-stacks 1 -o "$T/x.html" -- sh -c "
		for i in 1 2 3 4; do
			dd if='$VT/f' of=/dev/null bs=4096 count=300 iflag=direct status=none
		done"
	stop_bpftrace
	jq -c '.processes[] | {pid, comm, requests, io_bytes}' "$x.json"
	jq -c '{drops: .drops | with_entries(select(.value > 0)), totals, requests: .info.requests}' "$x.json"
	# the table was full: stacks were lost (before, the processes' rows with them: 300 of the
	# 1,200 requests, one dd of 4)
	jqe '[.processes[] | select(.comm == "dd") | .pid] as $dd
		| [.sites[] | select(.pid as $p | $dd | any(. == $p)) | .requests] | add // 0
		| . < 1200' "$x.json"
	# every dd in its row with its reads, exactly as bpftrace saw them issued: its 300, and
	# at times one more of 4 KiB (a read of its own beside the file's, which bpftrace counts
	# too: the row of a CI run once had 301, the test then asked for 300)
	[ "$(jq '[.processes[] | select(.comm == "dd")] | length' "$x.json")" -eq 4 ]
	for pid in $(jq '.processes[] | select(.comm == "dd") | .pid' "$x.json"); do
		r() { jq --argjson p "$pid" ".processes[] | select(.pid == \$p) | .$1" "$x.json"; }
		n=$(r requests)
		b=$(r io_bytes)
		echo "dd $pid: ebprof $n requests $b bytes; bpftrace $(bt n "$pid") $(bt b "$pid")"
		[ "$n" -eq "$(bt n "$pid")" ]
		[ "$b" -eq "$(bt b "$pid")" ]
		[ "$n" -ge 300 ]
		[ "$n" -le 302 ]
		r latency_ns | grep -qE '^[1-9][0-9]*$'
		# the same row in the text and the HTML reports
		grep -qE "^ +$pid +dd +$n +1\.2 MiB " "$x.txt"
		grep -q "<td class=\"num\" data-v=\"$pid\">$pid</td><td>dd</td><td class=\"num\" data-v=\"$n\">$n</td><td class=\"num\" data-v=\"$b\">" "$T/x.html"
	done
	# stacks were dropped by count (the table was full); no process's totals
	jqe '.drops.count_table_full > 0 and .drops.process_totals_full == 0' "$x.json"
	# every request counted is in some process's totals, and the text report's Totals say so
	jqe '.totals.requests == (.info.requests | tonumber)' "$x.json"
	grep -qE "^  Totals: +requests $(jq -r .info.requests "$x.json")," "$x.txt"
	grep -q "in the disks' and the processes' numbers but not in any stack's" "$x.txt"
}

@test "io: requests merged into a neighbour are counted merged (within bpftrace's block_rq_merge), not completion_unseen" {
	var_tmp_disk
	make_file "$VT/f" 16384
	# merges depend on timing: up to 5 runs of 32 threads' 1 MiB reads, until one merges;
	# before, each merged request was a completion_unseen drop and "in no number"
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:block:block_rq_merge /comm == "ioreaders"/ { @m = count(); }
		tracepoint:block:block_rq_merge { @all = count(); }'
	merged=0
	for try in 1 2 3 4 5; do
		run "$EBPROF" io -q -o "$T/x$try.json" -- "$FIX/ioreaders" "$VT/f" 32 1048576 20
		[ "$status" -eq 0 ]
		jqe '.info.merged | test("^[0-9]+$")' "$T/x$try.json"
		m=$(jq -r '.info.merged' "$T/x$try.json")
		echo "try $try: merged $m, completion_unseen $(jq '.drops.completion_unseen' "$T/x$try.json")"
		merged=$((merged + m))
		[ "$m" -eq 0 ] || break
	done
	stop_bpftrace
	bt=$(sed -n 's/^@m: \([0-9]*\)$/\1/p' "$T/bt.out")
	all=$(sed -n 's/^@all: \([0-9]*\)$/\1/p' "$T/bt.out")
	echo "ebprof merged $merged, bpftrace block_rq_merge ${bt:-0} in ioreaders, ${all:-0} in all"
	[ "$merged" -gt 0 ] || skip "no request merged in 5 runs"
	# every merge of the fixture's requests, and no more than the machine's: a merge can
	# happen in another task's context (a plug flushed by a kernel thread), and the kernel
	# threads' own requests (a journal's) count beside a command's
	[ "$merged" -ge "${bt:-0}" ]
	[ "$merged" -le "${all:-0}" ]
}

# Sum of the requests of the sites of the processes named $2 whose leaf frame matches the jq
# regex $3, in $1.
comm_leaf_sum() {
	jq --arg c "$2" --arg re "$3" '[.processes[] | select(.comm == $c) | .pid] as $p
		| [.sites[] | select(.pid as $x | $p | any(. == $x))
		   | select(.frames[0].function | test($re)) | .requests] | add // 0' "$1"
}

# The preconditions of a flush sequence on disk $1: a volatile write cache, and no FUA (a FUA
# write then ends in a flush too).
need_flush_seq() {
	grep -q 'write back' "/sys/block/$1/queue/write_cache" 2>/dev/null ||
		skip "$1 has no volatile write cache: the kernel runs no flush sequence on it"
	[ "$(cat "/sys/block/$1/queue/fua" 2>/dev/null)" = 0 ] ||
		skip "$1 takes FUA writes itself: a FUA write ends in no flush of the kernel's"
}

@test "io: a dsync write's flush sequence counts as /sys/block does: its data, its 0-byte preflush write and the flush sent for it, as many as bpftrace saw dd start" {
	var_tmp_disk
	need_flush_seq "$DISK"
	read -r dev < "/sys/block/$DISK/dev"
	devnum=$(( (${dev%:*} << 20) | ${dev#*:} ))
	dd if=/dev/zero of="$VT/f" bs=4096 count=1 status=none
	sync "$VT/f"
	# the oracle: the requests each dd started on the disk (in dd's context, block_io_start),
	# by pid (others' dd on the machine do not mix in): writes, writes with a preflush (each
	# served by one flush: dd is the only process traced, one at a time), writes of data with
	# FUA (one flush after each)
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:block:block_io_start /comm == "dd" && args->dev == '"$devnum"'/ {
			if (strncmp(args->rwbs, "W", 1) == 0 || strncmp(args->rwbs, "FW", 2) == 0) {
				@w[pid] = count(); }
			if (strncmp(args->rwbs, "FW", 2) == 0) { @pf[pid] = count(); }
			if (args->bytes > 0 && (strncmp(args->rwbs, "WF", 2) == 0 ||
			    strncmp(args->rwbs, "FWF", 3) == 0)) { @fua[pid] = count(); } }'
	# every stack in the text report (--top 0): 100 dd, a site each
	io_tries "$DISK" -q --top 0 --no-kthreads --device "$DISK" -- sh -c "
		for i in \$(seq 100); do dd if=/dev/zero of='$VT/f' bs=4096 count=1 \
			oflag=dsync conv=notrunc status=none; done"
	stop_bpftrace
	# bpftrace's counts of map $1 over the dd processes ebprof saw: 100, each one's data write
	dds=$(jq '.processes[] | select(.comm == "dd") | .pid' "$x.json")
	btdd() { local p n=0; for p in $dds; do n=$((n + $(bt "$1" "$p"))); done; echo $n; }
	[ "$(echo "$dds" | wc -w)" -eq 100 ]
	bw=$(btdd w) bpf=$(btdd pf) bfua=$(btdd fua)
	[ "$bpf" -gt 0 ] ||
		skip "no preflush came from dd's context (the filesystem's own threads sent them)"
	set -- $s0 && w0=$5 f0=${16}
	set -- $s1 && w1=$5 f1=${16}
	grep -E "^  $DISK " "$x.txt"
	jq -c '[.sites[] | {leaf: .frames[0].function, requests}] | group_by(.leaf)
		| map({leaf: .[0].leaf, requests: (map(.requests) | add)})' "$x.json"
	w=$(comm_leaf_sum "$x.json" dd "^$DISK write")
	pf=$(comm_leaf_sum "$x.json" dd "^$DISK write \\(.*preflush")
	pf0=$(jq --arg l "$DISK write (sync+preflush)" '[.sites[]
		| select(.frames[0].function == $l and .io_bytes != 0)] | length' "$x.json")
	fl=$(comm_leaf_sum "$x.json" dd "^$DISK flush")
	echo "ebprof: dd's writes $w, with a preflush $pf, flushes $fl"
	echo "bpftrace: dd's writes $bw, with a preflush $bpf, data with FUA $bfua"
	echo "/sys/block/$DISK (everyone's): writes $((w1 - w0)), flushes $((f1 - f0))"
	# each request once, as the disk counts it: the preflush writes among the writes (before,
	# the 0-byte ones were taken for flushes and were no writes: 100 short of 100 + the data)
	[ "$w" -eq "$bw" ]
	[ "$pf" -eq "$bpf" ]
	# an fsync's preflush write moves no data: a write of 0 bytes
	[ "$pf0" -eq 0 ]
	# each flush the kernel sent for them, once
	[ "$fl" -eq $((bpf + bfua)) ]
	[ $((w1 - w0)) -ge "$w" ]
	[ $((f1 - f0)) -ge "$fl" ]
	grep -qE "^  $DISK +flush +$fl +0 B " "$x.txt"
	grep -q "#0 $DISK write (sync+preflush)" "$x.txt"
	grep -q "#0 $DISK flush" "$x.txt"
}

@test "io: a journal's flush sequences (preflush, data, postflush) count as /sys/block does: O_SYNC writes on ext4 over a loop device, writes, flushes and bytes exactly" {
	command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null ||
		skip "losetup or mkfs.ext4 not installed (util-linux, e2fsprogs)"
	truncate -s 64M "$T/disk.img"
	LOOPDEV=$(losetup -f --show "$T/disk.img" 2>/dev/null) || skip "no loop device to set up"
	ld=${LOOPDEV##*/}
	need_flush_seq "$ld"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV"
	MNT=$T/mnt
	mkdir "$MNT"
	mount -o noatime "$LOOPDEV" "$MNT" || { MNT=; skip "cannot mount ext4 on $LOOPDEV"; }
	dd if=/dev/zero of="$MNT/f" bs=4096 count=1 status=none
	sync -f "$MNT/f"
	# nothing else writes to the device: its own counts, read just outside the run, are the
	# run's (the journal thread's commits are counted beside the command's)
	io_tries "$ld" -q --device "$ld" -- sh -c "
		for i in \$(seq 50); do dd if=/dev/zero of='$MNT/f' bs=4096 count=1 \
			oflag=sync conv=notrunc status=none; done"
	set -- $s0 && w0=$5 ws0=$7 f0=${16}
	set -- $s1 && w1=$5 ws1=$7 f1=${16}
	grep -E "^  $ld " "$x.txt"
	jq -c '[.sites[] | {leaf: .frames[0].function, requests}] | group_by(.leaf)
		| map({leaf: .[0].leaf, requests: (map(.requests) | add)})' "$x.json"
	# field $2 of the device's operation $1
	grp() {
		jq --arg d "$ld" --arg op "$1" --arg f "$2" '.groups[]
			| select(.labels.device == $d and .labels.op == $op) | .[$f]' "$x.json"
	}
	w=$(grp write requests) wb=$(grp write bytes) fl=$(grp flush requests)
	echo "ebprof: writes $w ($wb bytes), flushes $fl"
	echo "/sys/block/$ld: writes $((w1 - w0)) ($(((ws1 - ws0) * 512)) bytes)," \
		"flushes $((f1 - f0))"
	# the journal's commits went through the whole sequence (before: each commit's two
	# flushes were missed, 5 flushes counted of 195)
	jq -e --arg l "$ld write (" '[.sites[] | .frames[0].function
		| select(startswith($l) and contains("fua") and contains("preflush"))]
		| length > 0' "$x.json" >/dev/null
	[ "$w" -eq $((w1 - w0)) ]
	[ "$wb" -eq $(((ws1 - ws0) * 512)) ]
	[ "$fl" -eq $((f1 - f0)) ]
}

@test "io: a discard moves no data: its size is discard_bytes, not io_bytes (blkdiscard of a loop device)" {
	command -v losetup >/dev/null && command -v blkdiscard >/dev/null ||
		skip "losetup or blkdiscard not installed (util-linux)"
	truncate -s 64M "$T/disk.img"
	dev=$(losetup -f --show "$T/disk.img" 2>/dev/null) || skip "no loop device to set up"
	if [ "$(cat "/sys/block/$(basename "$dev")/queue/discard_max_bytes" 2>/dev/null || echo 0)" = 0 ]; then
		losetup -d "$dev"
		skip "the loop device takes no discard (its backing file's filesystem punches no holes)"
	fi
	run "$EBPROF" io -q -o "$T/x.json" -o "$T/x.txt" -- \
		sh -c "dd if=/dev/zero of=$dev bs=1M count=8 oflag=direct status=none; blkdiscard $dev"
	losetup -d "$dev"
	[ "$status" -eq 0 ]
	jq -c '.processes[]' "$T/x.json"
	# dd wrote 8 MiB; blkdiscard discarded the whole 64 MiB device, which moved no data (it
	# was in io_bytes: a dd over an old file counted its truncation's discards, twice the data)
	jqe '[.processes[] | select(.comm == "dd")][0] | .io_bytes == 8388608 and .discard_bytes == null' "$T/x.json"
	jqe '[.processes[] | select(.comm == "blkdiscard")][0] | .discard_bytes == 67108864 and .io_bytes < 67108864' "$T/x.json"
	jqe '.totals.io_bytes < 67108864 and .totals.discard_bytes == 67108864' "$T/x.json"
	# the per-operation table keeps the discard's size on its own row
	grep -qE "^  $(basename "$dev") +discard +1 +64.0 MiB " "$T/x.txt"
}

@test "io: a buffered write's fsync issues the writes it waits for (or the report names the flusher)" {
	var_tmp_disk
	for try in 1 2 3 4 5; do
		rm -f "$VT/f"
		run "$EBPROF" io -q -o "$T/x.json" -o "$T/x.txt" -- "$FIX/fsyncfix" "$VT/f" 1024
		[ "$status" -eq 0 ]
		[[ "$output" == *"bytes 1048576"* ]]
		jq -c '.processes[] | {pid, comm, requests, io_bytes, note}' "$T/x.json"
		# fsync returned: every request it waited for completed, whatever the report saw
		completions_lost "$T/x.json" && continue
		pid=$(jq '[.processes[] | select(.comm == "fsyncfix") | .pid][0]' "$T/x.json")
		# the fixture's writes whose stacks pass through its fsync, user and kernel side
		mine=$(jq --argjson pid "$pid" --arg w "$DISK write" '[.sites[] | select(.pid == $pid
			and (.frames[0].function | startswith($w))
			and any(.frames[]; .function == "fsync")
			and any(.frames[]; .function == "do_fsync" or .function == "__x64_sys_fsync"))
			| .io_bytes] | add // 0' "$T/x.json")
		echo "written under fsync: $mine bytes"
		if [ "$mine" -lt 1048576 ]; then
			# the flusher got there first: the report must say which one
			flushed=$(jq '[.processes[] | select(.note == "kernel thread: writeback flusher")
				| .io_bytes] | add // 0' "$T/x.json")
			echo "written by flushers: $flushed bytes"
			[ $((mine + flushed)) -ge 1048576 ]
			grep -q "a writeback flusher, started" "$T/x.txt"
		fi
		grep -q "#0 $DISK write (sync" "$T/x.txt"
		return 0
	done
	skip_lost
}

@test "io: data left to writeback is the flusher's, and the report says so; --no-kthreads leaves it out" {
	var_tmp_disk
	for try in 1 2 3 4 5; do
		rm -f "$VT/f"
		run "$EBPROF" io -q -o "$T/x.json" -o "$T/x.txt" -- sh -c "'$FIX/fsyncfix' '$VT/f' 1024 nosync && sync"
		[ "$status" -eq 0 ]
		jq -c '.processes[] | {pid, comm, requests, io_bytes, note}' "$T/x.json"
		# sync returned: the data's requests completed, whatever the report saw
		completions_lost "$T/x.json" || break
		[ "$try" -lt 5 ] || skip_lost
	done
	jqe '[.processes[] | select(.note == "kernel thread: writeback flusher") | .io_bytes]
	     | add >= 1048576' "$T/x.json"
	grep -qE "^  - kworker/[^ ]+ \(pid [0-9]+\), a writeback flusher, started [0-9]+ requests" "$T/x.txt"
	# its stacks are the flusher's own: kernel frames under the leaf, no user frame
	jqe '[.processes[] | select(.note == "kernel thread: writeback flusher") | .pid] as $k
	     | [.sites[] | select(.pid as $p | $k | index($p)) | .frames[1:][] | .kernel == true]
	     | length > 0 and all' "$T/x.json"
	rm -f "$VT/f"
	run "$EBPROF" io -q --no-kthreads -o "$T/y.json" -- sh -c "'$FIX/fsyncfix' '$VT/f' 1024 nosync && sync"
	[ "$status" -eq 0 ]
	jqe '[.processes[] | select(.note != null)] | length == 0' "$T/y.json"
	jqe '[.processes[].comm] - ["sh", "fsyncfix", "sync"] == []' "$T/y.json"
}

@test "io: every output format is written, and go tool pprof reads the profile" {
	var_tmp_disk
	make_file "$VT/f" 200
	run "$EBPROF" io -q -o "$T/x.txt" -o "$T/x.json" -o "$T/x.pb.gz" -o "$T/x.folded" \
		-o "$T/x.svg" -o "$T/x.html" -o "$T/x.speedscope.json" -o "$T/x.csv" \
		-- dd if="$VT/f" of=/dev/null bs=4096 count=200 iflag=direct status=none
	[ "$status" -eq 0 ]
	for f in x.txt x.json x.pb.gz x.folded x.svg x.html x.speedscope.json x.csv; do
		[ -s "$T/$f" ] || { echo "$f is empty" >&2; false; }
	done
	grep -q "$DISK read (sync)" "$T/x.folded"
	grep -q "$DISK read" "$T/x.svg"
	jq -e . "$T/x.speedscope.json" >/dev/null
	jqe '.sample_types | map(.type) == ["requests", "io_bytes", "latency", "queue"]' "$T/x.json"
	jqe '.default_sample_type == "latency"' "$T/x.json"
	if [ ! -x "$PPROF" ]; then
		skip "go tool pprof not installed ($PPROF): apt-get install golang-1.19-go"
	fi
	run "$PPROF" -symbolize=none -sample_index=requests -top "$T/x.pb.gz"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "$DISK read (sync)"
	# and loaded back: the same stacks
	run "$EBPROF" report "$T/x.pb.gz" -o "$T/y.folded"
	[ "$status" -eq 0 ]
	cmp "$T/x.folded" "$T/y.folded"
}

@test "io: -a counts dd among every process, ebprof excepted; --device keeps to one disk" {
	var_tmp_disk
	make_file "$VT/f" 500
	# stopped once dd is done (a fixed -d 4 waited for nothing, or cut it short)
	"$EBPROF" io -v -a -d 120 -o "$T/x.json" 2>"$T/err" &
	ebp=$!
	BG_PIDS+=("$ebp")
	wait_for "$T/err" "tracepoints:" 20
	sleep 0.5
	dd if="$VT/f" of=/dev/null bs=4096 count=500 iflag=direct status=none &
	ddp=$!
	wait "$ddp"
	kill -INT "$ebp"
	wait "$ebp"
	# every one of dd's reads, or the kernel said of some that their completion went unseen
	got=$(sites_sum "$T/x.json" requests "$ddp" "$DISK read (sync)" exact)
	unseen=$(jq '.drops.completion_unseen' "$T/x.json")
	echo "dd: $got reads; completion_unseen: $unseen"
	[ "$got" -le 500 ]
	[ $((got + unseen)) -ge 500 ]
	jq -e --argjson e "$ebp" '[.processes[] | select(.pid == $e)] | length == 0' "$T/x.json" \
		>/dev/null
	jqe '.drops | has("process_notes_lost")' "$T/x.json"
	# another disk only: none of dd's
	other=$(ls /sys/block | grep -vx "$DISK" | while read -r d; do
		[ ! -e "/sys/block/$d/mq" ] || echo "$d"; done | head -1)
	[ -n "$other" ] || skip "no second disk for --device"
	run "$EBPROF" io -q --device "$other" -o "$T/y.json" -- \
		dd if="$VT/f" of=/dev/null bs=4096 count=100 iflag=direct status=none
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.frames[0].function | startswith("'"$DISK"' "))] | length == 0' "$T/y.json"
	run "$EBPROF" io -q --device "/dev/$DISK" -o "$T/z.json" -- \
		dd if="$VT/f" of=/dev/null bs=4096 count=100 iflag=direct status=none
	[ "$status" -eq 0 ]
	pid=$(dd_pid "$T/z.json")
	got=$(sites_sum "$T/z.json" requests "$pid" "$DISK read (sync)" exact)
	unseen=$(jq '.drops.completion_unseen' "$T/z.json")
	[ "$got" -le 100 ]
	[ $((got + unseen)) -ge 100 ]
	jq -e --arg d "$DISK" '[.groups[].labels.device] | unique == [$d]' "$T/z.json" >/dev/null
}

# -a over a while: the processes that ended kept their keys in the per-stack table to the end,
# so a full table lost the stacks of those met last (100 dd at --max-stacks 128: the requests
# of about 40 of them in no stack); the table is now taken into the profile as it fills
@test "io -a: a per-stack table filling up is taken into the profile: every dd's reads in its stacks (--max-stacks 128)" {
	var_tmp_disk
	make_file "$VT/f" 20
	bg "$EBPROF" io -v -a --max-stacks 128 -d 120 -o "$T/x.json" 2>"$T/err"
	wait_for "$T/err" "tracepoints:" 20
	for i in $(seq 100); do
		dd if="$VT/f" of=/dev/null bs=4096 count=20 iflag=direct status=none
	done
	kill -INT "$BG"
	wait "$BG"
	grep "count table filled" "$T/err"
	jqe '.drops.count_table_full == 0 and .drops.process_totals_full == 0' "$T/x.json"
	# (the dd rows: count, lowest and highest PID, and the rows of other names with how many,
	# printed: the count was not 100 once in a fresh-clone CI run, not reproduced in 5 since)
	jq -c '[.processes[] | select(.comm == "dd") | .pid] | [length, min, max]' "$T/x.json"
	jq -c '[.processes[] | select(.comm != "dd") | .comm] | group_by(.) | map([.[0], length])' \
		"$T/x.json"
	jq -c '[.notes[] | select(test("PID|reused|used again"))]' "$T/x.json"
	[ "$(jq '[.processes[] | select(.comm == "dd")] | length' "$T/x.json")" -eq 100 ]
	# the reads in the dd's stacks are their totals (each a completion seen: 2,000, but for
	# those the kernel reported none of, in neither)
	sites=$(jq '[.processes[] | select(.comm == "dd") | .pid] as $dd
		| [.sites[] | select(.pid as $p | $dd | any(. == $p)) | .requests] | add' "$T/x.json")
	rows=$(jq '[.processes[] | select(.comm == "dd") | .requests] | add' "$T/x.json")
	echo "dd: $sites requests in stacks, $rows in their rows"
	[ "$sites" -eq "$rows" ]
	[ "$rows" -le 2000 ]
	[ $((rows + $(jq .drops.completion_unseen "$T/x.json"))) -ge 2000 ]
}

# The kernel gave a PID to another process during an -a run: io's rows are by tgid (the
# process's totals and its stacks), and took the first program's name with nothing said (dd's
# 30 reads and ddb's 20 under "dd"). Said now, on the row (named ddb, the last program) and in
# the run's notes; the row has both programs' reads, as their dd counts them.
@test "io -a: a PID used again by another program is said, on its row and in a note" {
	var_tmp_disk
	make_file "$VT/f" 30
	ln -s "$(command -v dd)" "$T/ddb"
	pidreuse_under 'tracepoints:' \
		io -a -v -q -d 60 -o "$T/x.json" -o "$T/x.txt" :: \
		"$(command -v dd)" if="$VT/f" of=/dev/null bs=4096 count=30 iflag=direct status=none -- \
		"$T/ddb" if="$VT/f" of=/dev/null bs=4096 count=20 iflag=direct status=none
	assert_pid_reused "$T/x.json" "$T/x.txt" ddb
	got=$(jq --argjson p "$PID" '.processes[] | select(.pid == $p) | .requests' "$T/x.json")
	unseen=$(jq '.drops.completion_unseen' "$T/x.json")
	echo "pid $PID: $got requests; completion_unseen: $unseen"
	[ "$got" -le 50 ]
	[ $((got + unseen)) -ge 50 ]
}

@test "io: bad input is a usage error or a clear failure" {
	run "$EBPROF" io --device no-such-disk -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--device no-such-disk: no such block device (this machine's disks: "* ]]
	# the disks sorted as ls sorts them (loop2 before loop10), not in directory order
	list=$(sed -n 's/.*this machine.s disks: \(.*\))$/\1/p' <<< "$output" | tr -d ' ' | tr ',' '\n')
	[ "$list" = "$(ls /sys/block | sort -V)" ]
	run "$EBPROF" io --device /dev/null -- true
	[ "$status" -eq 2 ]
	part=$(ls -d /sys/class/block/*/partition 2>/dev/null | head -1)
	if [ -n "$part" ]; then
		name=$(basename "$(dirname "$part")")
		run "$EBPROF" io --device "$name" -- true
		[ "$status" -eq 2 ]
		[[ "$output" == *"is a partition of"* ]]
	fi
	# a bio-based disk (zram, device-mapper, md) makes no requests: accepted before, and then
	# its I/O was nowhere, unsaid
	nomq=$(ls /sys/block | while read -r d; do [ -e "/sys/block/$d/mq" ] || echo "$d"; done |
		head -1)
	if [ -n "$nomq" ]; then
		run "$EBPROF" io --device "$nomq" -- true
		[ "$status" -eq 2 ]
		[[ "$output" == *"--device $nomq makes no block requests (a bio-based device"* ]]
	fi
	run "$EBPROF" io --max-stacks 0 -- true
	[ "$status" -eq 2 ]
	run "$EBPROF" io --no-kthreads -a -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--no-kthreads goes with -p or a command"* ]]
	run "$EBPROF" io --value bytes -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"requests, io_bytes, latency, queue"* ]]
	run "$EBPROF" io -p 4194304 -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"no such process"* ]]
	run "$EBPROF" io --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--device DISK"* ]]
}

@test "io: nothing is left attached after Ctrl-C" {
	"$EBPROF" io -q -a -o "$T/x.json" 2>"$T/err" &
	ebp=$!
	BG_PIDS+=("$ebp")
	for _ in $(seq 100); do
		[ -n "$(bpftool prog show name io_complete 2>/dev/null)" ] && break
		sleep 0.1
	done
	[ -n "$(bpftool prog show name io_complete)" ]
	sleep 0.3
	kill -INT "$ebp"
	wait "$ebp"
	[ -s "$T/x.json" ]
	# the kernel frees a program once its last link is gone, after a grace period
	for _ in $(seq 50); do
		left=$(for p in io_start io_issue io_complete io_done io_insert; do
			bpftool prog show name "$p" 2>/dev/null || true; done)
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || { echo "still loaded: $left" >&2; bpftool link show >&2; false; }
}
