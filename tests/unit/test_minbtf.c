/* core/minbtf.c: the minimal BTF made for an object's CO-RE relocations, from a small "kernel"
 * BTF and a local BTF with hand-made .BTF.ext relocation records (the format of
 * Documentation/bpf/btf.rst). Whether libbpf relocates the same against it as against the real
 * vmlinux is tests/bpf/test_minbtf_bpf.c's business (root). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include "core/minbtf.h"

struct relo {
	uint32_t insn_off, type_id, access_str_off, kind;
};

/* .BTF.ext with one section of relocations */
static size_t make_ext(uint8_t *buf, const struct relo *r, uint32_t n)
{
	uint32_t hdr[8] = { 0 }, rec = sizeof(*r), sec[2] = { 1, n };
	size_t at = 32;

	/* magic 0xeB9F, version 1, flags 0; hdr_len 32; func/line info empty; core_relo at 0 */
	hdr[0] = 0xeB9F | 1u << 16;
	hdr[1] = 32;
	hdr[6] = 0;
	hdr[7] = 4 + 8 + n * sizeof(*r);
	memcpy(buf, hdr, 32);
	memcpy(buf + at, &rec, 4);
	memcpy(buf + at + 4, sec, 8);
	memcpy(buf + at + 12, r, n * sizeof(*r));
	return at + hdr[7];
}

/* The "kernel": struct s { int a; union { int b; long c; }; unsigned d:3; struct t *p; }
 * (size 32), struct t { int x; int y; }, struct s___old (a flavor: a candidate too),
 * struct u { int z; } (not relocated), enum e { E1 = 1, E2 = 7 }. */
static struct btf *kernel(void)
{
	struct btf *b = btf__new_empty();
	int i_int, i_long, i_uint, i_s, i_anon, i_t, i_pt;

	i_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);		/* 1 */
	i_long = btf__add_int(b, "long", 8, BTF_INT_SIGNED);		/* 2 */
	i_uint = btf__add_int(b, "unsigned int", 4, 0);			/* 3 */
	i_t = btf__add_struct(b, "t", 8);				/* 4 */
	btf__add_field(b, "x", i_int, 0, 0);
	btf__add_field(b, "y", i_int, 32, 0);
	i_pt = btf__add_ptr(b, i_t);					/* 5 */
	i_anon = btf__add_union(b, NULL, 8);				/* 6 */
	btf__add_field(b, "b", i_int, 0, 0);
	btf__add_field(b, "c", i_long, 0, 0);
	i_s = btf__add_struct(b, "s", 32);				/* 7 */
	btf__add_field(b, "a", i_int, 0, 0);
	btf__add_field(b, NULL, i_anon, 64, 0);
	btf__add_field(b, "d", i_uint, 128, 3);
	btf__add_field(b, "p", i_pt, 192, 0);
	btf__add_struct(b, "s___old", 16);				/* 8 */
	btf__add_field(b, "a", i_int, 0, 0);
	btf__add_field(b, "b", i_int, 64, 0);
	btf__add_field(b, "q", i_int, 96, 0);
	btf__add_struct(b, "u", 4);					/* 9 */
	btf__add_field(b, "z", i_int, 0, 0);
	btf__add_enum(b, "e", 4);					/* 10 */
	btf__add_enum_value(b, "E1", 1);
	btf__add_enum_value(b, "E2", 7);
	(void)i_s;
	return b;
}

/* The object's view: struct s { int b; struct t *p; } with struct t { int y; }, enum e, and the
 * access strings; *acc_* the strings' offsets. */
static struct btf *local(int *s_id, int *e_id, int *acc_b, int *acc_py, int *acc_0)
{
	struct btf *b = btf__new_empty();
	int i_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int i_t = btf__add_struct(b, "t", 4);
	int i_pt;

	btf__add_field(b, "y", i_int, 0, 0);
	i_pt = btf__add_ptr(b, i_t);
	*s_id = btf__add_struct(b, "s", 16);
	btf__add_field(b, "b", i_int, 0, 0);
	btf__add_field(b, "p", i_pt, 64, 0);
	*e_id = btf__add_enum(b, "e", 4);
	btf__add_enum_value(b, "E2", 7);
	*acc_b = btf__add_str(b, "0:0");	/* s.b */
	*acc_py = btf__add_str(b, "0:1");	/* s.p (then p->y is its own relocation) */
	*acc_0 = btf__add_str(b, "0");
	return b;
}

static const struct btf_type *find(const struct btf *b, const char *name, int kind, int *id)
{
	for (uint32_t i = 1; i < btf__type_cnt(b); i++) {
		const struct btf_type *t = btf__type_by_id(b, i);

		if (btf_kind(t) == kind && !strcmp(btf__name_by_offset(b, t->name_off), name)) {
			if (id)
				*id = (int)i;
			return t;
		}
	}
	return NULL;
}

/* the member's bit offset, or -1 if the struct does not have it (directly) */
static long member(const struct btf *b, const struct btf_type *t, const char *name)
{
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(b, btf_members(t)[i].name_off), name))
			return btf_member_bit_offset(t, i);
	return -1;
}

static void test_fields_kept_exactly(void **state)
{
	struct btf *k = kernel(), *out = NULL;
	int s_id, e_id, acc_b, acc_py, acc_0, t_loc;
	struct btf *l = local(&s_id, &e_id, &acc_b, &acc_py, &acc_0);
	const struct btf_type *s, *anon, *old, *t;
	uint8_t ext[256];
	struct relo r[3];
	size_t n;

	(void)state;
	find(l, "t", BTF_KIND_STRUCT, &t_loc);
	r[0] = (struct relo){ 0, s_id, acc_b, 0 };	/* FIELD_BYTE_OFFSET s.b */
	r[1] = (struct relo){ 8, s_id, acc_py, 0 };	/* s.p */
	r[2] = (struct relo){ 16, e_id, acc_0, 11 };	/* ENUMVAL_VALUE e::E2 */
	n = make_ext(ext, r, 3);
	assert_int_equal(minbtf__build(k, l, ext, n, &out), 0);
	assert_non_null(out);

	s = find(out, "s", BTF_KIND_STRUCT, NULL);
	assert_non_null(s);
	assert_int_equal(s->size, 32);		/* the kernel's size, not the object's */
	assert_int_equal(btf_vlen(s), 2);	/* the anonymous union and p; a, d dropped */
	assert_int_equal(member(out, s, "a"), -1);
	assert_int_equal(member(out, s, "d"), -1);
	assert_int_equal(member(out, s, "p"), 192);
	anon = btf__type_by_id(out, btf_members(s)[0].type);
	assert_true(btf_is_union(anon));
	assert_int_equal(btf_members(s)[0].offset, 64);
	assert_int_equal(btf_vlen(anon), 1);	/* b, found through it; c dropped */
	assert_int_equal(member(out, anon, "b"), 0);
	/* the flavor is a candidate too: its b kept, at its own offset */
	old = find(out, "s___old", BTF_KIND_STRUCT, NULL);
	assert_non_null(old);
	assert_int_equal(old->size, 16);
	assert_int_equal(member(out, old, "b"), 64);
	assert_int_equal(member(out, old, "q"), -1);
	/* t is reached through p: there, with its size, no member any relocation reads */
	t = find(out, "t", BTF_KIND_STRUCT, NULL);
	assert_non_null(t);
	assert_int_equal(t->size, 8);
	assert_int_equal(btf_vlen(t), 0);
	/* the enum whole; u not at all */
	assert_int_equal(btf_vlen(find(out, "e", BTF_KIND_ENUM, NULL)), 2);
	assert_null(find(out, "u", BTF_KIND_STRUCT, NULL));
	btf__free(out);
	btf__free(k);
	btf__free(l);
}

static void test_bitfield_kept(void **state)
{
	struct btf *k = kernel(), *out = NULL, *l = btf__new_empty();
	int i_uint = btf__add_int(l, "unsigned int", 4, 0);
	int s_id = btf__add_struct(l, "s", 4);
	int acc;
	const struct btf_type *s;
	uint8_t ext[256];
	struct relo r;

	(void)state;
	btf__add_field(l, "d", i_uint, 0, 3);
	acc = btf__add_str(l, "0:0");
	r = (struct relo){ 0, s_id, acc, 4 };	/* FIELD_LSHIFT_U64 s.d */
	assert_int_equal(minbtf__build(k, l, ext, make_ext(ext, &r, 1), &out), 0);
	s = find(out, "s", BTF_KIND_STRUCT, NULL);
	/* d, and the anonymous union (anonymous members are searched, so kept: a few bytes) */
	assert_int_equal(btf_vlen(s), 2);
	assert_string_equal(btf__name_by_offset(out, btf_members(s)[1].name_off), "d");
	assert_int_equal(btf_member_bit_offset(s, 1), 128);
	assert_int_equal(btf_member_bitfield_size(s, 1), 3);
	btf__free(out);
	btf__free(k);
	btf__free(l);
}

/* What the copy cannot answer exactly: the real file is used. */
static void test_doubts(void **state)
{
	struct btf *k = kernel(), *out = NULL;
	int s_id, e_id, acc_b, acc_py, acc_0;
	struct btf *l = local(&s_id, &e_id, &acc_b, &acc_py, &acc_0);
	int missing = btf__add_struct(l, "not_in_kernel", 4);
	uint8_t ext[256];
	struct relo r;

	(void)state;
	btf__add_field(l, "x", 1, 0, 0);
	r = (struct relo){ 0, s_id, acc_0, 7 };		/* TYPE_ID_TARGET: the kernel's id */
	assert_int_equal(minbtf__build(k, l, ext, make_ext(ext, &r, 1), &out), -EOPNOTSUPP);
	r = (struct relo){ 0, s_id, acc_0, 12 };	/* TYPE_MATCHES */
	assert_int_equal(minbtf__build(k, l, ext, make_ext(ext, &r, 1), &out), -EOPNOTSUPP);
	r = (struct relo){ 0, missing, acc_b, 0 };	/* libbpf would look in modules */
	assert_int_equal(minbtf__build(k, l, ext, make_ext(ext, &r, 1), &out), -EOPNOTSUPP);
	assert_null(out);
	/* not a .BTF.ext */
	memset(ext, 0, sizeof(ext));
	assert_int_equal(minbtf__build(k, l, ext, 64, &out), -EINVAL);
	btf__free(k);
	btf__free(l);
}

static void test_cache_name(void **state)
{
	char a[64], b[64];

	(void)state;
	minbtf__name("build-id:ab", 100, "obj", 3, a, sizeof(a));
	minbtf__name("build-id:ab", 100, "obj", 3, b, sizeof(b));
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 16 + 4);
	minbtf__name("build-id:ac", 100, "obj", 3, b, sizeof(b));	/* another kernel */
	assert_string_not_equal(a, b);
	minbtf__name("build-id:ab", 101, "obj", 3, b, sizeof(b));	/* another BTF */
	assert_string_not_equal(a, b);
	minbtf__name("build-id:ab", 100, "obk", 3, b, sizeof(b));	/* another object */
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_kept_exactly),
		cmocka_unit_test(test_bitfield_kept),
		cmocka_unit_test(test_doubts),
		cmocka_unit_test(test_cache_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
