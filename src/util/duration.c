/* Durations as users write them on the command line: "30s", "500ms", "2m", "1.5" (seconds). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int util_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {
		{ "", 1e9 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	double v;
	char *end;
	size_t i;

	/* strtod takes "inf", "nan", hex and leading blanks; a duration is digits and a dot */
	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	for (i = 0; s[i] && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); i++)
		;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || end != s + i)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].name) == 0)
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	v *= units[i].ns;
	/* 2^64 ns is 584 years */
	if (v >= 18446744073709551616.0)
		return -ERANGE;
	/* "0.1ns" is not "0": a duration that was asked for must not turn into "none" */
	if (v > 0 && v < 0.5)
		return -ERANGE;
	*ns = (uint64_t)(v + 0.5);
	return 0;
}
