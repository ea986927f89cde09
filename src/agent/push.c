/*
 * The pusher: a bounded queue of windows and one thread that sends them, in order, with
 * libcurl, so that the run loop never waits on the network.
 *
 * A window is the pushes of one period (one per service). The thread sends the oldest
 * window's pushes one after the other; a push that fails for a reason that may pass (no
 * connection, a timeout, HTTP 5xx, 408, 429) is retried after agent__backoff's delay, and
 * the windows behind it wait: they go out in order once the server takes it. A push the
 * server refuses for good (another 4xx: 413, too large, or 400, 401, 403...) is not retried:
 * counted as rejected, and said. When the queue holds `queue` windows, a new one pushes the
 * oldest out (counted as dropped, said), or the one after it while a push of the oldest is on
 * its way: memory stays bounded by queue + 1 windows.
 */
#define CURL_DISABLE_TYPECHECK	/* its checks are macros over the names redefined below */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "agent/agent.h"
#include "cli/cli.h"
#include "util/util.h"

/* libcurl is opened when a pusher starts (dlopen), not linked into ebprof: the libraries it
 * needs (OpenSSL, GnuTLS, Kerberos, LDAP...: 30 of them) cost the dynamic loader ~4 ms at
 * every start of every other mode. */
static struct {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	void (*easy_reset)(CURL *curl);
	void (*easy_cleanup)(CURL *curl);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	CURLcode (*easy_perform)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	CURLU *(*url)(void);
	void (*url_cleanup)(CURLU *u);
	CURLUcode (*url_set)(CURLU *u, CURLUPart what, const char *part, unsigned int flags);
	CURLUcode (*url_get)(const CURLU *u, CURLUPart what, char **part, unsigned int flags);
	const char *(*url_strerror)(CURLUcode code);
	void (*free)(void *p);
} curl_fn;

/* curl_fn filled from libcurl.so.4: NULL, or why not (dlerror's) */
static const char *curl_open(void)
{
	static const char *const names[] = {
		"curl_global_init", "curl_global_cleanup", "curl_easy_init", "curl_easy_reset",
		"curl_easy_cleanup", "curl_easy_setopt", "curl_easy_getinfo", "curl_easy_perform",
		"curl_easy_strerror", "curl_slist_append", "curl_slist_free_all", "curl_url",
		"curl_url_cleanup", "curl_url_set", "curl_url_get", "curl_url_strerror",
		"curl_free",
	};
	void *fns[sizeof(names) / sizeof(names[0])];
	void *h;

	_Static_assert(sizeof(fns) == sizeof(curl_fn), "one name per function");
	if (curl_fn.global_init)
		return NULL;
	h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return dlerror();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fns[i] = dlsym(h, names[i]);
		if (!fns[i])
			return dlerror();
	}
	/* kept open for the run: its threads and handlers may outlive a pusher */
	memcpy(&curl_fn, fns, sizeof(curl_fn));
	return NULL;
}

#undef curl_easy_setopt		/* curl.h's: the same call, checked for three arguments */
#undef curl_easy_getinfo
#define curl_global_init	curl_fn.global_init
#define curl_global_cleanup	curl_fn.global_cleanup
#define curl_easy_init		curl_fn.easy_init
#define curl_easy_reset		curl_fn.easy_reset
#define curl_easy_cleanup	curl_fn.easy_cleanup
#define curl_easy_setopt	curl_fn.easy_setopt
#define curl_easy_getinfo	curl_fn.easy_getinfo
#define curl_easy_perform	curl_fn.easy_perform
#define curl_easy_strerror	curl_fn.easy_strerror
#define curl_slist_append	curl_fn.slist_append
#define curl_slist_free_all	curl_fn.slist_free_all
#define curl_url		curl_fn.url
#define curl_url_cleanup	curl_fn.url_cleanup
#define curl_url_set		curl_fn.url_set
#define curl_url_get		curl_fn.url_get
#define curl_url_strerror	curl_fn.url_strerror
#define curl_free		curl_fn.free

int agent__check_url(const char *url, char *why, size_t len)
{
	static const struct {
		CURLUPart part;
		const char *what;
	} extra[] = {
		{ CURLUPART_QUERY, "a query ('?...')" },
		{ CURLUPART_FRAGMENT, "a fragment ('#...')" },
	};
	CURLU *u;
	CURLUcode rc;
	int err = 0;

	/* no libcurl: nothing can be pushed, which the pusher says when it starts */
	if (curl_open())
		return 0;
	u = curl_url();
	if (!u) {
		snprintf(why, len, "server: out of memory");
		return -1;
	}
	/* the parser libcurl applies to every push's URL, with its defaults: a scheme and a
	 * host, no space */
	rc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (rc) {
		snprintf(why, len, "server: '%s' is not a valid URL (libcurl: %s)%s", url,
			 curl_url_strerror(rc), rc == CURLUE_BAD_PATH || strchr(url, ' ') ?
			 "; write a space in a path as %20" : "");
		err = -1;
	}
	/* each push's path is added after the server's: what follows the path would end up
	 * in the middle */
	for (size_t i = 0; !err && i < sizeof(extra) / sizeof(extra[0]); i++) {
		char *part = NULL;

		if (curl_url_get(u, extra[i].part, &part, 0) == CURLUE_OK) {
			snprintf(why, len, "server: '%s' has %s; give the server's base URL, e.g. "
				 "http://host:4040 or https://host/prefix", url, extra[i].what);
			err = -1;
		}
		curl_free(part);
	}
	curl_url_cleanup(u);
	return err;
}

struct window {
	struct agent_push *pushes;
	size_t n, next;		/* pushes; the next one to send */
	unsigned attempts;	/* failed attempts of pushes[next] */
	double next_try;	/* CLOCK_MONOTONIC seconds: not before */
	bool dropped;		/* pushed out of the queue while being sent */
	bool refused;		/* the server refused one of its pushes for good */
	struct window *older, *newer;
};

struct pusher {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	const struct log_ctx *lc;
	struct agent_conf conf;
	char host[256];
	struct window *oldest, *newest;
	struct window *sending;	/* being sent by the thread (not freed under it) */
	struct agent_stats st;
	bool finishing;
	double deadline;	/* finishing: give up at this time */
	bool failing;		/* the last attempt failed (say when it comes back) */
	unsigned seed;
	CURL *curl;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void agent_push__free(struct agent_push *ap)
{
	free(ap->service);
	free(ap->container);
	free(ap->body);
}

static void window_free(struct window *w)
{
	for (size_t i = 0; i < w->n; i++)
		agent_push__free(&w->pushes[i]);
	free(w->pushes);
	free(w);
}

static size_t window_bytes(const struct window *w)
{
	size_t b = 0;

	for (size_t i = w->next; i < w->n; i++)
		b += w->pushes[i].len;
	return b;
}

/* Take w out of the queue (locked); freed unless the thread is sending it. */
static void unlink_window(struct pusher *p, struct window *w)
{
	if (w->older)
		w->older->newer = w->newer;
	else
		p->oldest = w->newer;
	if (w->newer)
		w->newer->older = w->older;
	else
		p->newest = w->older;
	p->st.queued--;
	p->st.queued_bytes -= window_bytes(w);
	if (w == p->sending)
		w->dropped = true;
	else
		window_free(w);
}

void pusher__add_window(struct pusher *p, struct agent_push *pushes, size_t n)
{
	struct window *w = n ? calloc(1, sizeof(*w)) : NULL;

	if (!n) {
		free(pushes);
		pthread_mutex_lock(&p->mu);
		p->st.windows++;
		p->st.windows_empty++;
		pthread_mutex_unlock(&p->mu);
		return;
	}
	if (!w) {
		for (size_t i = 0; i < n; i++)
			agent_push__free(&pushes[i]);
		free(pushes);
		pr_warn(p->lc, "out of memory: a window is lost");
		return;
	}
	w->pushes = pushes;
	w->n = n;
	pthread_mutex_lock(&p->mu);
	while (p->st.queued >= p->conf.queue && p->oldest) {
		/* not the window a push of which is on its way: taken meanwhile, it would be
		 * counted dropped and be at the server too (the queue then holds one more) */
		struct window *o = p->oldest == p->sending ? p->oldest->newer : p->oldest;
		int64_t from, until;
		bool sent;

		if (!o)
			break;
		from = o->n ? o->pushes[0].from : 0;
		until = o->n ? o->pushes[0].until : 0;
		sent = o != p->oldest;
		p->st.windows_dropped++;
		unlink_window(p, o);
		pr_warn(p->lc, "the queue is full (%u window%s): dropped the oldest%s, %lld-%lld, "
			"unsent (%llu window%s dropped so far)", p->conf.queue,
			p->conf.queue == 1 ? "" : "s", sent ? " not being sent" : "", (long long)from,
			(long long)until, (unsigned long long)p->st.windows_dropped,
			p->st.windows_dropped == 1 ? "" : "s");
	}
	w->older = p->newest;
	if (p->newest)
		p->newest->newer = w;
	else
		p->oldest = w;
	p->newest = w;
	p->st.windows++;
	p->st.queued++;
	p->st.queued_bytes += window_bytes(w);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void pusher__stats(struct pusher *p, struct agent_stats *st)
{
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	pthread_mutex_unlock(&p->mu);
}

void pusher__configure(struct pusher *p, const struct agent_conf *c, const char *host)
{
	pthread_mutex_lock(&p->mu);
	p->conf = *c;
	snprintf(p->host, sizeof(p->host), "%s", host);
	/* a new server or new credentials: try again now */
	if (p->oldest) {
		p->oldest->next_try = 0;
		p->oldest->attempts = 0;
	}
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* ---- one push --------------------------------------------------------------------------- */

static size_t discard(char *ptr, size_t size, size_t n, void *ctx)
{
	char *buf = ctx;
	size_t have = strlen(buf), take = size * n;

	/* the start of the answer, for the message of a refusal */
	if (have < 200) {
		size_t k = take < 200 - have ? take : 200 - have;

		memcpy(buf + have, ptr, k);
		buf[have + k] = 0;
	}
	return size * n;
}

/* A secret file's content, first line, without its newline; NULL (why said) when unreadable. */
static char *read_secret(const struct pusher *p, const char *path, const char *what)
{
	struct stat sb;
	char *s = util_read_file(path, NULL);

	if (!s) {
		pr_warn(p->lc, "cannot read the %s file '%s': %s; pushing without it", what, path,
			strerror(errno));
		return NULL;
	}
	if (!stat(path, &sb) && (sb.st_mode & 0004))
		pr_debug(p->lc, "the %s file '%s' is readable by every user", what, path);
	s[strcspn(s, "\r\n")] = 0;
	return s;
}

enum outcome { PUSH_OK, PUSH_RETRY, PUSH_REJECTED };

/* Send ap with settings c. what: why it failed, for the message. */
static enum outcome post(struct pusher *p, const struct agent_conf *c, const char *host,
			 const struct agent_push *ap, char *what, size_t wlen)
{
	char url[8192], name[2048], esc[6144], auth[4200], answer[256] = "", errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	char *json = NULL, *secret = NULL;
	long code = 0;
	CURLcode rc;

	if (!p->curl)
		p->curl = curl_easy_init();
	if (!p->curl) {
		snprintf(what, wlen, "libcurl could not start");
		return PUSH_RETRY;
	}
	curl_easy_reset(p->curl);
	if (c->protocol == AGENT_PYROSCOPE) {
		if (agent__pyroscope_name(c, ap->service, host, ap->container, name,
					  sizeof(name)) < 0 ||
		    agent__url_escape(name, esc, sizeof(esc)) < 0) {
			snprintf(what, wlen, "its labels are too long");
			return PUSH_REJECTED;
		}
		snprintf(url, sizeof(url), "%s/ingest?name=%s&from=%lld&until=%lld&format=pprof&"
			 "sampleRate=%u&spyName=ebprof", c->server, esc, (long long)ap->from,
			 (long long)ap->until, c->hz);
		hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, ap->body);
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)ap->len);
	} else {
		char *b64 = agent__base64(ap->body, ap->len), h[256];
		size_t cap;
		int n = 0;

		if (!b64) {
			snprintf(what, wlen, "out of memory");
			return PUSH_RETRY;
		}
		snprintf(h, sizeof(h), "%s", host);
		agent__sanitize(h);
		cap = strlen(b64) + 4096;
		json = malloc(cap);
		if (json) {
			n = snprintf(json, cap, "{\"series\":[{\"labels\":{\"labels\":["
				     "{\"name\":\"__name__\",\"value\":\"ebprof_%s\"},"
				     "{\"name\":\"service\",\"value\":\"%s\"},"
				     "{\"name\":\"host\",\"value\":\"%s\"}",
				     ap->mode ? ap->mode : "cpu", ap->service, h);
			if (ap->container)
				n += snprintf(json + n, cap - n, ",{\"name\":\"container_id\","
					      "\"value\":\"%s\"}", ap->container);
			for (int i = 0; i < c->ntags; i++)
				n += snprintf(json + n, cap - n, ",{\"name\":\"%s\",\"value\":\"%s\"}",
					      c->tag_keys[i], c->tag_vals[i]);
			n += snprintf(json + n, cap - n, "]},\"samples\":[{\"rawProfile\":\"%s\"}]}],"
				      "\"normalized\":false}", b64);
		}
		free(b64);
		if (!json) {
			snprintf(what, wlen, "out of memory");
			return PUSH_RETRY;
		}
		snprintf(url, sizeof(url), "%s/profiles/writeraw", c->server);
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, json);
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	}
	if (c->tenant[0]) {
		snprintf(auth, sizeof(auth), "X-Scope-OrgID: %s", c->tenant);
		hdrs = curl_slist_append(hdrs, auth);
	}
	if (c->token_file[0] && (secret = read_secret(p, c->token_file, "token"))) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", secret);
		hdrs = curl_slist_append(hdrs, auth);
	}
	if (c->basic_auth_file[0] && (secret = read_secret(p, c->basic_auth_file, "basic-auth"))) {
		curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(p->curl, CURLOPT_USERPWD, secret);
	}
	/* "Expect: 100-continue" would cost a round trip (or a second's wait) per push */
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "ebprof-agent/" EBPROF_VERSION);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout * 1000));
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)(c->timeout * 1000));
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, (void *)answer);
	curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->ca_file[0])
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, c->ca_file);
	rc = curl_easy_perform(p->curl);
	if (secret) {
		memset(secret, 0, strlen(secret));
		memset(auth, 0, sizeof(auth));
		free(secret);
	}
	curl_slist_free_all(hdrs);
	free(json);
	if (rc != CURLE_OK) {
		snprintf(what, wlen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		return PUSH_RETRY;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return PUSH_OK;
	for (char *q = answer; *q; q++)
		if (*q == '\n' || *q == '\r')
			*q = ' ';
	if (code == 413)
		snprintf(what, wlen, "HTTP 413: the server refused a %zu-byte profile as too large "
			 "(raise its ingest size limit, or shorten --period)", ap->len);
	else
		snprintf(what, wlen, "HTTP %ld%s%s", code, answer[0] ? ": " : "", answer);
	if (code >= 500 || code == 408 || code == 429)
		return PUSH_RETRY;
	return PUSH_REJECTED;
}

/* ---- the thread ------------------------------------------------------------------------- */

static void *run(void *arg)
{
	struct pusher *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct window *w = p->oldest;
		struct agent_conf conf;
		struct agent_push *ap;
		char host[256], what[512];
		enum outcome out;
		double t = now_s();

		if (p->finishing && (!w || t >= p->deadline))
			break;
		if (!w || (!p->finishing && t < w->next_try)) {
			struct timespec ts;
			double until = !w ? t + 3600 : w->next_try;

			clock_gettime(CLOCK_REALTIME, &ts);
			until = ts.tv_sec + ts.tv_nsec / 1e9 + (until - t);
			ts.tv_sec = (time_t)until;
			ts.tv_nsec = (long)((until - ts.tv_sec) * 1e9);
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			continue;
		}
		ap = &w->pushes[w->next];
		conf = p->conf;
		snprintf(host, sizeof(host), "%s", p->host);
		p->sending = w;
		pthread_mutex_unlock(&p->mu);

		out = post(p, &conf, host, ap, what, sizeof(what));

		pthread_mutex_lock(&p->mu);
		p->sending = NULL;
		if (out == PUSH_OK) {
			p->st.pushes_ok++;
			p->st.bytes_sent += ap->len;
			if (p->failing)
				pr_warn(p->lc, "%s takes pushes again; %llu windows queued to catch "
					"up", conf.server, (unsigned long long)p->st.queued);
			p->failing = false;
		} else if (out == PUSH_REJECTED) {
			p->st.pushes_rejected++;
			w->refused = true;
			pr_warn(p->lc, "%s refused the %s profile of '%s', %lld-%lld: %s; not "
				"retried", conf.server, ap->mode ? ap->mode : "cpu", ap->service,
				(long long)ap->from, (long long)ap->until, what);
		} else {
			double d;

			p->st.attempts_failed++;
			w->attempts++;
			d = agent__backoff(w->attempts, conf.backoff_max, rand_r(&p->seed) /
					   ((double)RAND_MAX + 1));
			w->next_try = now_s() + d;
			if (p->finishing) {
				/* one more attempt each at exit: this one failed */
				d = 0;
				w->next_try = 0;
			}
			if (!p->failing || p->lc->verbose)
				pr_warn(p->lc, "pushing to %s failed: %s; retrying in %.1f s (%llu "
					"windows queued, at most %u)", conf.server, what, d,
					(unsigned long long)p->st.queued, conf.queue);
			p->failing = true;
			if (w->dropped) {
				window_free(w);
			} else if (p->finishing) {
				p->st.windows_unsent++;
				unlink_window(p, w);
			}
			continue;
		}
		/* taken or refused for good: the next push */
		if (w->dropped) {
			window_free(w);
			continue;
		}
		p->st.queued_bytes -= ap->len;
		w->next++;
		w->attempts = 0;
		w->next_try = 0;
		if (w->next == w->n) {
			if (w->refused)
				p->st.windows_refused++;
			else
				p->st.windows_sent++;
			unlink_window(p, w);
		}
	}
	while (p->oldest) {
		p->st.windows_unsent++;
		unlink_window(p, p->oldest);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct pusher *pusher__new(const struct agent_conf *c, const char *host,
			   const struct log_ctx *lc)
{
	struct pusher *p = calloc(1, sizeof(*p));
	const char *why;
	sigset_t all, old;
	int err;

	if (!p)
		return NULL;
	why = curl_open();
	if (why) {
		pr_err(lc, "cannot load libcurl (apt-get install libcurl4): %s", why);
		free(p);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		pr_err(lc, "libcurl could not start");
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->lc = lc;
	p->conf = *c;
	p->seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	snprintf(p->host, sizeof(p->host), "%s", host);
	/* signals are the run loop's (a signalfd): the thread must never take one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err(lc, "cannot start the sending thread: %s", strerror(err));
		free(p);
		return NULL;
	}
	return p;
}

void pusher__finish(struct pusher *p, double grace, struct agent_stats *st)
{
	pthread_mutex_lock(&p->mu);
	p->finishing = true;
	p->deadline = now_s() + grace;
	if (p->oldest)
		p->oldest->next_try = 0;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	*st = p->st;
	if (p->curl)
		curl_easy_cleanup(p->curl);
	curl_global_cleanup();
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
