/* Start-up checks: the capabilities BPF tracing needs, BTF, uprobes, uprobe_multi.
 * uprobe_multi links need no tracefs or bpffs, so nothing is mounted here. */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "core/preflight.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * What the kernel checks is the effective capability set, not the uid: root in a container, or
 * under capsh --drop / setpriv --bounding-set, lacks some. Each missing one is named, so the
 * user does not get a verifier log or "No such file or directory" from a later step.
 */
static int check_privileges(const struct log_ctx *lc, unsigned needs)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	bool root = geteuid() == 0;
	char missing[96] = "";

	if (syscall(SYS_capget, &h, d)) {
		if (root)
			return 0;	/* cannot tell: let the kernel say */
		memset(d, 0, sizeof(d));
	}
	if (!has_cap(d, CAP_SYS_ADMIN) && !(has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON))) {
		/* the ones to add: CAP_SYS_ADMIN would do too, but is far wider */
		snprintf(missing, sizeof(missing), "%s%s%s", !has_cap(d, CAP_BPF) ? "CAP_BPF" : "",
			 !has_cap(d, CAP_BPF) && !has_cap(d, CAP_PERFMON) ? " and " : "",
			 !has_cap(d, CAP_PERFMON) ? "CAP_PERFMON" : "");
		if (!root)
			pr_err(lc, "ebprof needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE) to "
				   "load BPF programs and attach probes; run it with sudo");
		else
			pr_err(lc, "running as root, but without %s (or CAP_SYS_ADMIN), which "
				   "loading BPF programs needs: they were dropped (capsh, setpriv, a "
				   "container's settings); run ebprof with them", missing);
		return -1;
	}
	if ((needs & PREFLIGHT_PTRACE) && !has_cap(d, CAP_SYS_PTRACE)) {
		if (!root)
			pr_err(lc, "ebprof needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE) to "
				   "trace processes it did not start; run it with sudo");
		else
			pr_err(lc, "running as root, but without CAP_SYS_PTRACE, which reading the "
				   "memory maps of processes ebprof did not start (-p, -a) needs: it was "
				   "dropped (capsh, setpriv, a container's settings); run ebprof with "
				   "it, or launch the program under ebprof");
		return -1;
	}
	return 0;
}

static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 1;	/* unknown: let the attach itself tell */
	return ma > major || (ma == major && mi >= minor);
}

int preflight__check(const struct log_ctx *lc, unsigned needs)
{
	if (check_privileges(lc, needs))
		return -1;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err(lc, "this kernel exposes no BTF (/sys/kernel/btf/vmlinux: %s); ebprof needs a "
			   "kernel built with CONFIG_DEBUG_INFO_BTF=y", strerror(errno));
		return -1;
	}
	if (!(needs & PREFLIGHT_UPROBES)) {
		pr_debug(lc, "preflight: privileges and BTF available");
		return 0;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		pr_err(lc, "this kernel has no uprobe support (CONFIG_UPROBE_EVENTS); ebprof mem "
			   "cannot trace allocations without it");
		return -1;
	}
	if (!kernel_at_least(6, 6)) {
		pr_err(lc, "this kernel is too old: ebprof attaches with uprobe_multi links, which "
			   "need Linux 6.6 or later");
		return -1;
	}
	pr_debug(lc, "preflight: privileges, BTF, uprobes and uprobe_multi available");
	return 0;
}
