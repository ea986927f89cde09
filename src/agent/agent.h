/* ebprof agent: continuous profiling pushed to a backend. What is testable without root or a
 * network lives here (src/agent/, in libebprof.a): the settings (one set of keys for the
 * command line and the config file), the names and labels a push carries, the retry delays,
 * and the pusher (a bounded queue of windows and the thread that sends them with libcurl).
 * The command (src/modes/agent/cmd.c) runs the session and turns each window into pushes. */
#ifndef EBPROF_AGENT_H
#define EBPROF_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/log.h"

enum agent_protocol {
	AGENT_PYROSCOPE,	/* POST /ingest?name=...&from&until&format=pprof, body: pprof.gz */
	AGENT_PARCA,		/* POST /profiles/writeraw, WriteRawRequest as JSON (grpc-gateway) */
};

#define AGENT_MAX_TAGS 32

/* The modes the agent can push, in the order they run (mem last: see core/modeset.h). */
enum agent_mode {
	AGENT_MODE_CPU,
	AGENT_MODE_IO,
	AGENT_MODE_OFFCPU,
	AGENT_MODE_LOCK,
	AGENT_MODE_MEM,
	AGENT_MODE__COUNT,
};

extern const char *const agent_mode_names[AGENT_MODE__COUNT];	/* "cpu", "io", ... */

/* The settings; every key is also a long option of 'ebprof agent' (--KEY VALUE). */
struct agent_conf {
	char server[1024];		/* server: http[s]://host[:port][/prefix] */
	enum agent_protocol protocol;	/* protocol: pyroscope | parca */
	char app[128];			/* app: the service name of every process (else each
					 * process's name) */
	char comms[AGENT_MAX_TAGS][16];	/* comm: push only processes of these names */
	int ncomms;
	char tag_keys[AGENT_MAX_TAGS][64];	/* tags: k=v,k=v */
	char tag_vals[AGENT_MAX_TAGS][128];
	int ntags;
	uint32_t period;		/* period: seconds a window lasts */
	uint32_t hz;			/* frequency: cpu samples per second */
	unsigned modes;			/* modes: 1 << enum agent_mode, cpu by default */
	uint32_t sample_bytes;		/* sample-bytes: mem's sampling period, in bytes */
	char token_file[1024];		/* token-file: "Authorization: Bearer <its content>" */
	char basic_auth_file[1024];	/* basic-auth-file: "user:password" */
	char ca_file[1024];		/* ca-file: CA certificates for https (else the system's) */
	char tenant[128];		/* tenant: X-Scope-OrgID (Pyroscope multi-tenancy) */
	double connect_timeout;		/* connect-timeout: seconds */
	double timeout;			/* timeout: seconds a whole push may take */
	double backoff_max;		/* backoff-max: the longest wait between two retries */
	uint32_t queue;			/* queue: windows kept while the server does not take them */
	uint32_t status_every;		/* status-interval: seconds between status lines (0: none) */
};

void agent_conf__defaults(struct agent_conf *c);
/* Set key (a long option's name, without "--") to val. 0, 1 when key is not a setting, or -1
 * when val is not valid for it (why: a sentence). */
int agent_conf__set(struct agent_conf *c, const char *key, const char *val, char *why,
		    size_t len);
/* Read a config file: "key = value" (or "key value") lines, '#' comments, blank lines.
 * 0, or -1 with why ("FILE:LINE: ..."). */
int agent_conf__load(struct agent_conf *c, const char *path, char *why, size_t len);
/* The whole is usable: a server is given. 0, or -1 with why. */
int agent_conf__check(const struct agent_conf *c, char *why, size_t len);
/* Does process name comm pass the comm setting (every name when it is empty)? */
bool agent_conf__comm_ok(const struct agent_conf *c, const char *comm);
/* Which settings differ that a reload cannot change (period, frequency, modes, sample-bytes):
 * a phrase, or NULL. */
const char *agent_conf__needs_restart(const struct agent_conf *a, const struct agent_conf *b);

/* Replace every character of s not allowed in a Pyroscope application name or label value
 * (letters, digits, '_', '-', '.', '/', ':') with '_', in place; an empty s becomes "_". */
void agent__sanitize(char *s);
/* The service of a process named comm (NULL: not known), sanitized, into buf: "unknown" when
 * no letter or digit is left (an empty name, "?", "[?]" while a process execs), which would
 * push it as an application named "_". */
void agent__service_name(const char *comm, char *buf, size_t len);
/* Pyroscope's name parameter: "SERVICE{host=H,container_id=C,k=v,...}" (container_id only
 * when given), sanitized, into buf. Returns the length, or -1 when it does not fit. */
int agent__pyroscope_name(const struct agent_conf *c, const char *service, const char *host,
			  const char *container, char *buf, size_t len);
/* s percent-encoded for a URL query (RFC 3986 unreserved characters kept) into buf. The length,
 * or -1 when it does not fit. */
int agent__url_escape(const char *s, char *buf, size_t len);
/* The container id in the text of a /proc/PID/cgroup file: the last run of 64 hexadecimal
 * digits in it (docker, containerd, cri-o, podman name their cgroups after it), into id (65
 * bytes). true when found. */
bool agent__container_id(const char *cgroup, char *id);
/* Seconds to wait before retry number `attempt` (1: the first retry): 0.5 s doubled each time,
 * at most max, then "equal jitter": a uniform draw from half of that to all of it (r in
 * [0, 1)), so that a fleet's agents do not all retry at once. */
double agent__backoff(unsigned attempt, double max, double r);
/* base64 of data into a malloc'd string (NULL when out of memory). */
char *agent__base64(const uint8_t *data, size_t len);

/* ---- the pusher (push.c) ---------------------------------------------------------------- */

/* What a push carries: one service's profile of one window. */
struct agent_push {
	const char *mode;	/* the mode profiled: "cpu", "lock", ... (a static string) */
	char *service;		/* sanitized service name */
	char *container;	/* container id, or NULL */
	int64_t from, until;	/* wall-clock seconds */
	uint8_t *body;		/* the gzipped pprof */
	size_t len;
};

/* Its counters (all since the start). */
struct agent_stats {
	uint64_t windows;	/* windows made */
	uint64_t windows_empty;	/* of which without a sample (nothing to push) */
	uint64_t windows_sent;	/* windows every push of which the server took */
	uint64_t windows_refused;	/* windows the server refused a push of for good */
	uint64_t pushes_ok;	/* pushes the server took */
	uint64_t attempts_failed;	/* attempts that failed (each retry counts) */
	uint64_t pushes_rejected;	/* pushes the server refused for good (4xx but 408, 429) */
	uint64_t windows_dropped;	/* windows pushed out of the full queue, oldest first */
	uint64_t windows_unsent;	/* windows still queued when the agent stopped */
	uint64_t bytes_sent;	/* bodies the server took */
	uint64_t queued;	/* windows in the queue now */
	uint64_t queued_bytes;	/* their bodies' bytes */
};

struct pusher;

/* Is url a URL libcurl can push to (its own parser, libcurl's API: a host, no space, no query
 * or fragment)? 0, or -1 with why (a sentence). 0 when libcurl cannot be opened (the pusher
 * says so at its start). */
int agent__check_url(const char *url, char *why, size_t len);
/* Start the sending thread with settings c (copied); host: for the labels. NULL on failure
 * (said). */
struct pusher *pusher__new(const struct agent_conf *c, const char *host,
			   const struct log_ctx *lc);
/* New settings (a reload): used from the next push on. */
void pusher__configure(struct pusher *p, const struct agent_conf *c, const char *host);
/* Queue one window of n pushes (taken over, freed by the pusher); past the queue's size the
 * oldest window is dropped (counted, said). */
void pusher__add_window(struct pusher *p, struct agent_push *pushes, size_t n);
void pusher__stats(struct pusher *p, struct agent_stats *st);
/* Stop: every window still queued gets one more attempt, within `grace` seconds at most;
 * what is left is counted unsent. Then the thread ends and p is freed; *st: the last
 * counters. */
void pusher__finish(struct pusher *p, double grace, struct agent_stats *st);
/* Free a push's strings and body. */
void agent_push__free(struct agent_push *ap);

#endif
