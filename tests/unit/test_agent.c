/* src/agent/conf.c and profile/pick.c: the agent's settings and config file, the names and
 * labels of a push, URL escaping, container ids, retry delays, base64; one service's part of
 * a window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "agent/agent.h"
#include "profile/profile.h"

static void test_defaults_and_set(void **state)
{
	struct agent_conf c;
	char why[512];

	(void)state;
	agent_conf__defaults(&c);
	assert_int_equal(c.period, 10);
	assert_int_equal(c.hz, 99);
	assert_int_equal(c.queue, 30);
	assert_int_equal(agent_conf__check(&c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no server"));
	assert_int_equal(agent_conf__set(&c, "server", "http://h:4040//", why, sizeof(why)), 0);
	assert_string_equal(c.server, "http://h:4040");
	assert_int_equal(agent_conf__check(&c, why, sizeof(why)), 0);
	assert_int_equal(agent_conf__set(&c, "server", "h:4040", why, sizeof(why)), -1);
	/* libcurl's parser: what it would refuse at every push is refused now */
	assert_int_equal(agent_conf__set(&c, "server", "http://127.0.0.1:18931/base path", why,
					 sizeof(why)), -1);
	assert_non_null(strstr(why, "server: 'http://127.0.0.1:18931/base path' is not a valid "
			       "URL (libcurl: "));
	assert_non_null(strstr(why, "write a space in a path as %20"));
	assert_int_equal(agent_conf__set(&c, "server", "http://", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "server", "http://h:99999", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "server", "http://h/x?a=b", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "has a query"));
	assert_int_equal(agent_conf__set(&c, "server", "http://h/#top", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "has a fragment"));
	assert_string_equal(c.server, "http://h:4040");	/* unchanged */
	assert_int_equal(agent_conf__set(&c, "server", "https://[::1]:4040/a%20b/", why,
					 sizeof(why)), 0);
	assert_string_equal(c.server, "https://[::1]:4040/a%20b");
	assert_int_equal(agent_conf__set(&c, "server", "http://h:4040//", why, sizeof(why)), 0);
	assert_int_equal(agent_conf__set(&c, "period", "0", why, sizeof(why)), -1);
	assert_string_equal(why, "period takes a whole number from 1 to 3600 (got '0')");
	assert_int_equal(agent_conf__set(&c, "period", "-1", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "timeout", "1.5", why, sizeof(why)), 0);
	assert_true(c.timeout == 1.5);
	assert_int_equal(agent_conf__set(&c, "timeout", "1s", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "protocol", "parca", why, sizeof(why)), 0);
	assert_int_equal(c.protocol, AGENT_PARCA);
	assert_int_equal(agent_conf__set(&c, "protocol", "otlp", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "no-such-key", "1", why, sizeof(why)), 1);
	/* modes: cpu by default; a list of the five; anything else is said */
	assert_int_equal(c.modes, 1u << AGENT_MODE_CPU);
	assert_int_equal(c.sample_bytes, 524288);
	assert_int_equal(agent_conf__set(&c, "modes", "cpu,io,lock,mem,offcpu", why, sizeof(why)),
			 0);
	assert_int_equal(c.modes, (1u << AGENT_MODE__COUNT) - 1);
	assert_int_equal(agent_conf__set(&c, "modes", "lock", why, sizeof(why)), 0);
	assert_int_equal(c.modes, 1u << AGENT_MODE_LOCK);
	assert_string_equal(agent_mode_names[AGENT_MODE_LOCK], "lock");
	assert_int_equal(agent_conf__set(&c, "modes", "cpu,disk", why, sizeof(why)), -1);
	assert_string_equal(why, "modes: unknown mode 'disk' (the modes are cpu, offcpu, mem, lock "
			    "and io)");
	assert_int_equal(c.modes, 1u << AGENT_MODE_LOCK);	/* unchanged */
	assert_int_equal(agent_conf__set(&c, "modes", ",", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "modes separated by commas"));
	assert_int_equal(agent_conf__set(&c, "sample-bytes", "4096", why, sizeof(why)), 0);
	assert_int_equal(c.sample_bytes, 4096);
	assert_int_equal(agent_conf__set(&c, "sample-bytes", "0", why, sizeof(why)), -1);
	{
		struct agent_conf d = c;

		assert_null(agent_conf__needs_restart(&c, &d));
		d.modes = 1u << AGENT_MODE_IO;
		assert_string_equal(agent_conf__needs_restart(&c, &d), "modes");
		d = c;
		d.sample_bytes = 1;
		assert_string_equal(agent_conf__needs_restart(&c, &d), "sample-bytes");
	}
	/* one Authorization header */
	assert_int_equal(agent_conf__set(&c, "token-file", "/t", why, sizeof(why)), 0);
	assert_int_equal(agent_conf__set(&c, "basic-auth-file", "/b", why, sizeof(why)), 0);
	assert_int_equal(agent_conf__check(&c, why, sizeof(why)), -1);
}

static void test_tags(void **state)
{
	struct agent_conf c;
	char why[512];

	(void)state;
	agent_conf__defaults(&c);
	assert_int_equal(agent_conf__set(&c, "tags", "env=prod,region=eu west", why,
					 sizeof(why)), 0);
	assert_int_equal(c.ntags, 2);
	assert_string_equal(c.tag_keys[1], "region");
	assert_string_equal(c.tag_vals[1], "eu_west");	/* sanitized */
	assert_int_equal(agent_conf__set(&c, "tags", "env", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "tags", "env=", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "tags", "1env=x", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "tags", "host=x", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "sets itself"));
}

static void test_comm(void **state)
{
	struct agent_conf c;
	char why[512];

	(void)state;
	agent_conf__defaults(&c);
	assert_true(agent_conf__comm_ok(&c, "anything"));
	assert_int_equal(agent_conf__set(&c, "comm", "nginx,postgres", why, sizeof(why)), 0);
	assert_true(agent_conf__comm_ok(&c, "nginx"));
	assert_true(agent_conf__comm_ok(&c, "postgres"));
	assert_false(agent_conf__comm_ok(&c, "ngin"));
	assert_false(agent_conf__comm_ok(&c, NULL));
	assert_int_equal(agent_conf__set(&c, "comm", "a,sixteen_chars_xx", why, sizeof(why)), -1);
	assert_int_equal(agent_conf__set(&c, "comm", ",", why, sizeof(why)), -1);
}

static void test_config_file(void **state)
{
	char path[] = "/tmp/ebprof-test-agent-XXXXXX", why[512];
	struct agent_conf c;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\n\nserver = http://a:1\n  period 5\ntags=env=x,k=v\n", f);
	fclose(f);
	agent_conf__defaults(&c);
	assert_int_equal(agent_conf__load(&c, path, why, sizeof(why)), 0);
	assert_string_equal(c.server, "http://a:1");
	assert_int_equal(c.period, 5);
	assert_int_equal(c.ntags, 2);
	assert_string_equal(c.tag_vals[0], "x");

	f = fopen(path, "w");
	fputs("server = http://a:1\nqueue = lots\n", f);
	fclose(f);
	assert_int_equal(agent_conf__load(&c, path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, ":2: queue takes a whole number"));
	f = fopen(path, "w");
	fputs("server\n", f);
	fclose(f);
	assert_int_equal(agent_conf__load(&c, path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, ":1: 'server' has no value"));
	unlink(path);
	assert_int_equal(agent_conf__load(&c, path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot read the config file"));
}

static void test_names(void **state)
{
	struct agent_conf c;
	char buf[256], why[128], s[32];

	(void)state;
	agent_conf__defaults(&c);
	assert_int_equal(agent__pyroscope_name(&c, "nginx", "web-1", NULL, buf, sizeof(buf)),
			 (int)strlen("nginx{host=web-1}"));
	assert_string_equal(buf, "nginx{host=web-1}");
	agent_conf__set(&c, "tags", "env=prod,team=a", why, sizeof(why));
	agent__pyroscope_name(&c, "nginx", "web 1", "abc", buf, sizeof(buf));
	assert_string_equal(buf, "nginx{host=web_1,container_id=abc,env=prod,team=a}");
	assert_int_equal(agent__pyroscope_name(&c, "nginx", "h", NULL, buf, 10), -1);
	strcpy(s, "a{b}=c,d e");
	agent__sanitize(s);
	assert_string_equal(s, "a_b__c_d_e");
	s[0] = 0;
	agent__sanitize(s);
	assert_string_equal(s, "_");
	/* a service is named by a letter or a digit at least; else "unknown", not "_" */
	agent__service_name("nginx: worker", buf, sizeof(buf));
	assert_string_equal(buf, "nginx:_worker");
	agent__service_name("[?]", buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	agent__service_name("?", buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	agent__service_name("", buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	agent__service_name(NULL, buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	agent__service_name("[kworker/0:1]", buf, sizeof(buf));
	assert_string_equal(buf, "_kworker/0:1_");
	assert_int_equal(agent__url_escape("a{b=c,d}", buf, sizeof(buf)), 16);
	assert_string_equal(buf, "a%7Bb%3Dc%2Cd%7D");
	assert_int_equal(agent__url_escape("abcdef", buf, 4), -1);
}

static void test_container_id(void **state)
{
	char id[65];
	const char *docker = "0::/system.slice/docker-"
		"3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211.scope\n";
	const char *k8s = "0::/kubepods/burstable/pod1234-5678/"
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";

	(void)state;
	assert_true(agent__container_id(docker, id));
	assert_string_equal(id, "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211");
	assert_true(agent__container_id(k8s, id));
	assert_string_equal(id, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_false(agent__container_id("0::/user.slice/user-0.slice/session-3.scope\n", id));
	/* 65 hex digits are not an id */
	assert_false(agent__container_id("0::/x-0123456789abcdef0123456789abcdef0123456789abcdef"
					 "0123456789abcdef0\n", id));
}

static void test_backoff(void **state)
{
	(void)state;
	assert_true(agent__backoff(1, 30, 0) == 0.25);
	assert_true(agent__backoff(1, 30, 0.999) < 0.5);
	assert_true(agent__backoff(2, 30, 0) == 0.5);
	assert_true(agent__backoff(4, 30, 0) == 2);
	/* capped, jitter from half of the cap to all of it */
	assert_true(agent__backoff(20, 30, 0) == 15);
	assert_true(agent__backoff(1000, 30, 0.5) == 22.5);
	assert_true(agent__backoff(0, 30, 0.5) == 0);
}

static void test_base64(void **state)
{
	char *s;

	(void)state;
	s = agent__base64((const uint8_t *)"Man", 3);
	assert_string_equal(s, "TWFu");
	free(s);
	s = agent__base64((const uint8_t *)"Ma", 2);
	assert_string_equal(s, "TWE=");
	free(s);
	s = agent__base64((const uint8_t *)"M", 1);
	assert_string_equal(s, "TQ==");
	free(s);
	s = agent__base64((const uint8_t *)"", 0);
	assert_string_equal(s, "");
	free(s);
}

/* One service's part of a window: its processes' samples, their locations and functions, and
 * the window's shape. */
static void test_pick(void **state)
{
	struct profile *p = profile__new("cpu"), *q;
	struct prof_line line = { 0 };
	uint32_t l[3], pids[] = { 20 };
	int64_t v[2];

	(void)state;
	profile__add_type(p, "samples", "count");
	profile__add_type(p, "cpu", "nanoseconds");
	profile__set_period(p, "cpu", "nanoseconds", 10101010);
	for (int i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", i);
		line.function = profile__function(p, name, name, NULL);
		l[i] = profile__location(p, PROF_NONE, 0x1000 + i, 0x1000 + i, &line, 1);
	}
	v[0] = 3; v[1] = 30;
	profile__add_sample(p, (uint32_t[]){ l[0], l[1] }, 2, v, 10);
	v[0] = 5; v[1] = 50;
	profile__add_sample(p, (uint32_t[]){ l[2], l[1] }, 2, v, 20);
	profile__add_process(p, 10, "a", NULL);
	profile__add_process(p, 20, "b", "b --x");

	q = profile__pick(p, pids, 1);
	assert_non_null(q);
	assert_int_equal(q->ntypes, 2);
	assert_int_equal(q->period, 10101010);
	assert_string_equal(q->period_type.type, "cpu");
	assert_int_equal(q->nsamples, 1);
	assert_int_equal(q->samples[0].values[0], 5);
	assert_int_equal(q->samples[0].pid, 20);
	assert_int_equal(q->nlocations, 2);	/* f2, f1: not f0 */
	assert_string_equal(q->functions[q->locations[q->samples[0].locs[0]].lines[0].function].name,
			    "f2");
	assert_int_equal(q->nprocesses, 1);
	assert_string_equal(q->processes[0].comm, "b");
	profile__free(q);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_set),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_container_id),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
