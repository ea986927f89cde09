/* The agent's settings (the command line's and the config file's keys are the same), the
 * names and labels of a push, retry delays. See agent.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent.h"

const char *const agent_mode_names[AGENT_MODE__COUNT] = {
	[AGENT_MODE_CPU] = "cpu", [AGENT_MODE_IO] = "io", [AGENT_MODE_OFFCPU] = "offcpu",
	[AGENT_MODE_LOCK] = "lock", [AGENT_MODE_MEM] = "mem",
};

void agent_conf__defaults(struct agent_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->protocol = AGENT_PYROSCOPE;
	c->period = 10;
	c->hz = 99;
	c->modes = 1u << AGENT_MODE_CPU;
	c->sample_bytes = 524288;
	c->connect_timeout = 5;
	c->timeout = 15;
	c->backoff_max = 30;
	c->queue = 30;
	c->status_every = 60;
}

static int bad(char *why, size_t len, const char *fmt, const char *key, const char *val)
{
	snprintf(why, len, fmt, key, val);
	return -1;
}

static int set_str(char *dst, size_t cap, const char *key, const char *val, char *why,
		   size_t len)
{
	if (strlen(val) >= cap) {
		snprintf(why, len, "%s is too long (at most %zu characters)", key, cap - 1);
		return -1;
	}
	strcpy(dst, val);
	return 0;
}

static int set_secs(double *dst, const char *key, const char *val, double min, double max,
		    char *why, size_t len)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= min && v <= max)) {
		snprintf(why, len, "%s takes a number of seconds from %g to %g (got '%s')", key,
			 min, max, val);
		return -1;
	}
	*dst = v;
	return 0;
}

static int set_uint(uint32_t *dst, const char *key, const char *val, unsigned long min,
		    unsigned long max, char *why, size_t len)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || *val == '-' || v < min || v > max) {
		snprintf(why, len, "%s takes a whole number from %lu to %lu (got '%s')", key, min,
			 max, val);
		return -1;
	}
	*dst = v;
	return 0;
}

static bool label_name_ok(const char *k)
{
	if (!*k || !(isalpha((unsigned char)*k) || *k == '_'))
		return false;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			return false;
	return true;
}

static int set_tags(struct agent_conf *c, const char *val, char *why, size_t len)
{
	char buf[4096], *save = NULL, *t;

	if (set_str(buf, sizeof(buf), "tags", val, why, len))
		return -1;
	c->ntags = 0;
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');

		if (!eq || eq == t || !eq[1])
			return bad(why, len, "%s takes k=v pairs separated by commas, e.g. "
				   "env=prod,region=eu (got '%s')", "tags", val);
		*eq = 0;
		if (!label_name_ok(t))
			return bad(why, len, "%s: a label name is letters, digits and '_', not "
				   "starting with a digit (got '%s')", "tags", t);
		if (!strcmp(t, "host") || !strcmp(t, "container_id") ||
		    !strcmp(t, "service_name") || !strcmp(t, "__name__"))
			return bad(why, len, "%s: '%s' is a label the agent sets itself", "tags", t);
		if (c->ntags == AGENT_MAX_TAGS) {
			snprintf(why, len, "tags: at most %d labels", AGENT_MAX_TAGS);
			return -1;
		}
		if (strlen(t) >= sizeof(c->tag_keys[0]) ||
		    strlen(eq + 1) >= sizeof(c->tag_vals[0]))
			return bad(why, len, "%s: label '%s' or its value is too long", "tags", t);
		strcpy(c->tag_keys[c->ntags], t);
		strcpy(c->tag_vals[c->ntags], eq + 1);
		agent__sanitize(c->tag_vals[c->ntags]);
		c->ntags++;
	}
	return 0;
}

int agent_conf__set(struct agent_conf *c, const char *key, const char *val, char *why,
		    size_t len)
{
	if (!strcmp(key, "server")) {
		if (strncmp(val, "http://", 7) && strncmp(val, "https://", 8))
			return bad(why, len, "%s takes a URL that starts with http:// or https:// "
				   "(got '%s')", key, val);
		if (agent__check_url(val, why, len))
			return -1;
		if (set_str(c->server, sizeof(c->server), key, val, why, len))
			return -1;
		/* "http://host:4040/" and "http://host:4040" are the same server */
		while (strlen(c->server) > 8 && c->server[strlen(c->server) - 1] == '/')
			c->server[strlen(c->server) - 1] = 0;
		return 0;
	}
	if (!strcmp(key, "protocol")) {
		if (!strcmp(val, "pyroscope"))
			c->protocol = AGENT_PYROSCOPE;
		else if (!strcmp(val, "parca"))
			c->protocol = AGENT_PARCA;
		else
			return bad(why, len, "%s takes pyroscope or parca (got '%s')", key, val);
		return 0;
	}
	if (!strcmp(key, "app")) {
		if (set_str(c->app, sizeof(c->app), key, val, why, len))
			return -1;
		agent__sanitize(c->app);
		return 0;
	}
	if (!strcmp(key, "tags"))
		return set_tags(c, val, why, len);
	if (!strcmp(key, "comm")) {
		char buf[1024], *save = NULL, *t;

		if (set_str(buf, sizeof(buf), key, val, why, len))
			return -1;
		c->ncomms = 0;
		for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (strlen(t) > 15 || c->ncomms == AGENT_MAX_TAGS)
				return bad(why, len, "%s takes process names of at most 15 characters "
					   "(the kernel's comm), separated by commas (got '%s')", key,
					   val);
			strcpy(c->comms[c->ncomms++], t);
		}
		if (!c->ncomms)
			return bad(why, len, "%s takes process names separated by commas (got '%s')",
				   key, val);
		return 0;
	}
	if (!strcmp(key, "period"))
		return set_uint(&c->period, key, val, 1, 3600, why, len);
	if (!strcmp(key, "frequency"))
		return set_uint(&c->hz, key, val, 1, 100000, why, len);
	if (!strcmp(key, "modes")) {
		char buf[256], *save = NULL, *t;
		unsigned m = 0;

		if (set_str(buf, sizeof(buf), key, val, why, len))
			return -1;
		for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			int i = 0;

			while (i < AGENT_MODE__COUNT && strcmp(t, agent_mode_names[i]))
				i++;
			if (i == AGENT_MODE__COUNT)
				return bad(why, len, "%s: unknown mode '%s' (the modes are cpu, "
					   "offcpu, mem, lock and io)", key, t);
			m |= 1u << i;
		}
		if (!m)
			return bad(why, len, "%s takes modes separated by commas: cpu, offcpu, "
				   "mem, lock, io (got '%s')", key, val);
		c->modes = m;
		return 0;
	}
	if (!strcmp(key, "sample-bytes"))
		return set_uint(&c->sample_bytes, key, val, 1, 1u << 30, why, len);
	if (!strcmp(key, "token-file"))
		return set_str(c->token_file, sizeof(c->token_file), key, val, why, len);
	if (!strcmp(key, "basic-auth-file"))
		return set_str(c->basic_auth_file, sizeof(c->basic_auth_file), key, val, why, len);
	if (!strcmp(key, "ca-file"))
		return set_str(c->ca_file, sizeof(c->ca_file), key, val, why, len);
	if (!strcmp(key, "tenant"))
		return set_str(c->tenant, sizeof(c->tenant), key, val, why, len);
	if (!strcmp(key, "connect-timeout"))
		return set_secs(&c->connect_timeout, key, val, 0.1, 300, why, len);
	if (!strcmp(key, "timeout"))
		return set_secs(&c->timeout, key, val, 0.1, 3600, why, len);
	if (!strcmp(key, "backoff-max"))
		return set_secs(&c->backoff_max, key, val, 0.5, 3600, why, len);
	if (!strcmp(key, "queue"))
		return set_uint(&c->queue, key, val, 1, 100000, why, len);
	if (!strcmp(key, "status-interval"))
		return set_uint(&c->status_every, key, val, 0, 86400, why, len);
	return 1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int agent_conf__load(struct agent_conf *c, const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[4096], msg[512];
	int lineno = 0, rc = 0;

	if (!f) {
		snprintf(why, len, "cannot read the config file '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *k, *v;
		size_t kl;

		lineno++;
		if (!*s || *s == '#')
			continue;
		kl = strcspn(s, " \t=");
		k = s;
		v = s + kl;
		if (*v)
			*v++ = 0;
		v = trim(v);
		if (*v == '=')
			v = trim(v + 1);
		if (!*v) {
			snprintf(why, len, "%s:%d: '%s' has no value (\"key = value\")", path, lineno,
				 k);
			rc = -1;
			break;
		}
		if (!strcmp(k, "config")) {
			snprintf(why, len, "%s:%d: a config file cannot include another", path,
				 lineno);
			rc = -1;
			break;
		}
		switch (agent_conf__set(c, k, v, msg, sizeof(msg))) {
		case 0:
			continue;
		case 1:
			snprintf(why, len, "%s:%d: unknown key '%s' (the keys are the long options "
				 "of 'ebprof agent')", path, lineno, k);
			break;
		default:
			snprintf(why, len, "%s:%d: %s", path, lineno, msg);
			break;
		}
		rc = -1;
		break;
	}
	fclose(f);
	return rc;
}

int agent_conf__check(const struct agent_conf *c, char *why, size_t len)
{
	if (!c->server[0]) {
		snprintf(why, len, "no server to push to: give --server URL (or 'server' in the "
			 "config file)");
		return -1;
	}
	if (c->token_file[0] && c->basic_auth_file[0]) {
		snprintf(why, len, "token-file and basic-auth-file do not go together: one "
			 "Authorization header per request");
		return -1;
	}
	return 0;
}

bool agent_conf__comm_ok(const struct agent_conf *c, const char *comm)
{
	if (!c->ncomms)
		return true;
	for (int i = 0; i < c->ncomms; i++)
		if (comm && !strcmp(comm, c->comms[i]))
			return true;
	return false;
}

const char *agent_conf__needs_restart(const struct agent_conf *a, const struct agent_conf *b)
{
	if (a->period != b->period)
		return "period";
	if (a->hz != b->hz)
		return "frequency";
	if (a->modes != b->modes)
		return "modes";
	if (a->sample_bytes != b->sample_bytes)
		return "sample-bytes";
	return NULL;
}

void agent__sanitize(char *s)
{
	if (!*s) {
		strcpy(s, "_");
		return;
	}
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-./:", *s))
			*s = '_';
}

void agent__service_name(const char *comm, char *buf, size_t len)
{
	bool named = false;

	snprintf(buf, len, "%s", comm ? comm : "");
	agent__sanitize(buf);
	for (const char *c = buf; *c && !named; c++)
		named = isalnum((unsigned char)*c);
	if (!named)
		snprintf(buf, len, "unknown");
}

int agent__pyroscope_name(const struct agent_conf *c, const char *service, const char *host,
			  const char *container, char *buf, size_t len)
{
	char h[256];
	size_t n;
	int k;

	snprintf(h, sizeof(h), "%s", host);
	agent__sanitize(h);
	k = snprintf(buf, len, "%s{host=%s", service, h);
	if (k < 0 || (size_t)k >= len)
		return -1;
	n = k;
	if (container && *container) {
		k = snprintf(buf + n, len - n, ",container_id=%s", container);
		if (k < 0 || (size_t)k >= len - n)
			return -1;
		n += k;
	}
	for (int i = 0; i < c->ntags; i++) {
		k = snprintf(buf + n, len - n, ",%s=%s", c->tag_keys[i], c->tag_vals[i]);
		if (k < 0 || (size_t)k >= len - n)
			return -1;
		n += k;
	}
	if (n + 2 > len)
		return -1;
	buf[n++] = '}';
	buf[n] = 0;
	return n;
}

int agent__url_escape(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char ch = *s;

		if (isalnum(ch) || strchr("-._~", ch)) {
			if (n + 2 > len)
				return -1;
			buf[n++] = ch;
		} else {
			if (n + 4 > len)
				return -1;
			buf[n++] = '%';
			buf[n++] = hex[ch >> 4];
			buf[n++] = hex[ch & 15];
		}
	}
	if (n + 1 > len)
		return -1;
	buf[n] = 0;
	return n;
}

bool agent__container_id(const char *cgroup, char *id)
{
	bool found = false;

	for (const char *p = cgroup; *p; ) {
		size_t run = 0;

		while (isxdigit((unsigned char)p[run]) && !isupper((unsigned char)p[run]))
			run++;
		if (run == 64) {
			memcpy(id, p, 64);
			id[64] = 0;
			found = true;
		}
		p += run ? run : 1;
	}
	return found;
}

double agent__backoff(unsigned attempt, double max, double r)
{
	double d = 0.5 * ldexp(1.0, attempt > 30 ? 30 : (int)attempt - 1);

	if (attempt == 0)
		return 0;
	if (d > max)
		d = max;
	return d / 2 + d / 2 * r;
}

char *agent__base64(const uint8_t *data, size_t len)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = data[i] << 16;

		if (i + 1 < len)
			v |= data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < len ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? tab[v & 63] : '=';
	}
	*o = 0;
	return out;
}
