/* C++ and Rust name demangling through libiberty's cplus_demangle, which with DMGL_AUTO tries
 * Rust (legacy _ZN..h<hash>E and v0 _R...) before the Itanium C++ ABI.
 */
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "symbolize/sym_internal.h"

static bool looks_mangled(const char *name)
{
	/* Only Itanium C++ (_Z) and Rust v0 (_R) manglings; anything else (C names, D, Ada)
	 * is reported as written rather than risk a misparse. */
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *sym_demangle(const char *name)
{
	if (!name || !looks_mangled(name))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

const char *sym__demangle_interned(struct symbolizer *s, const char *raw)
{
	const char *res;
	char *d;

	if (s->opts.no_demangle || !looks_mangled(raw))
		return raw;
	d = sym_demangle(raw);
	if (!d)
		return raw;
	res = strpool__intern(&s->pool, d);
	free(d);
	return res ? res : raw;
}

const char *sym__display_name(struct symbolizer *s, const char *raw)
{
	const char *at = strchr(raw, '@');
	const char *plain = raw;
	char *d;

	/* "name@VERSION" / "name@@VERSION" in .symtab: the version is not part of the name. */
	if (at && at != raw) {
		plain = strpool__intern_n(&s->pool, raw, (size_t)(at - raw));
		if (!plain)
			return raw;
	}
	if (s->opts.no_demangle || !looks_mangled(plain))
		return plain;
	d = sym_demangle(plain);
	if (!d)
		return plain;
	at = strpool__intern(&s->pool, d);
	free(d);
	return at ? at : plain;
}
