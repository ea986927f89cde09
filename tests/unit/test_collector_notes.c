/* core/collector.c's notes, which every mode's report carries: a count of one is one of a
 * thing ("1 new process was not announced", not "1 new processes were"), many are many. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/collector.h"
#include "profile/profile.h"

static void assert_note(const struct profile *p, const char *text)
{
	for (uint32_t i = 0; i < p->nnotes; i++)
		if (!strcmp(p->notes[i], text))
			return;
	fail_msg("no note \"%s\"", text);
}

static void test_notes_lost(void **state)
{
	struct profile *p = profile__new("cpu");

	assert_non_null(p);
	collector__note_notes_lost(p, 1);
	collector__note_notes_lost(p, 3);
	assert_note(p, "1 new process was not announced in time (the ring buffer was full): if it "
		       "exited before the end it shows bare addresses");
	assert_note(p, "3 new processes were not announced in time (the ring buffer was full): "
		       "those that exited before the end show bare addresses");
	profile__free(p);
}

static void test_thread_names(void **state)
{
	struct profile *p = profile__new("cpu");

	assert_non_null(p);
	collector__note_thread_names(p, 1, "--max-stacks", 16);
	collector__note_thread_names(p, 2, "--max-stacks", 32);
	assert_non_null(strstr(p->notes[0], "1 time a thread's name was not kept (--per-thread): "
					    "the thread-name table (--max-stacks 16) was full"));
	assert_non_null(strstr(p->notes[1], "2 times a thread's name was not kept"));
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notes_lost),
		cmocka_unit_test(test_thread_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
