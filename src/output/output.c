/* Choosing a renderer by file name, and writing a report to a file atomically: the report is
 * written to a temporary file next to the destination and renamed over it only when complete,
 * so a failed or interrupted write never leaves a truncated report behind. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "output/output.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

static bool is_std_stream(const char *path);

/* The formats by name, for "FORMAT:PATH" (a stream, or a file of another extension) */
static const struct {
	const char *name;
	const struct output_ops *ops;
} formats[] = {
	{ "txt", &output_text }, { "text", &output_text }, { "json", &output_json },
	{ "pb.gz", &output_pprof }, { "pb", &output_pprof }, { "pprof", &output_pprof },
	{ "folded", &output_folded }, { "svg", &output_svg }, { "csv", &output_csv },
	{ "html", &output_html }, { "speedscope.json", &output_speedscope },
	{ "speedscope", &output_speedscope },
};

/* The format spec names before a ':', and in *file what follows; NULL: none named. */
static const struct output_ops *format_prefix(const char *spec, const char **file)
{
	const char *colon = strchr(spec, ':');

	if (!colon)
		return NULL;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strlen(formats[i].name) == (size_t)(colon - spec) &&
		    !strncasecmp(spec, formats[i].name, colon - spec)) {
			*file = colon + 1;
			return formats[i].ops;
		}
	}
	return NULL;
}

const char *output__file(const char *spec)
{
	const char *file;

	return spec && format_prefix(spec, &file) ? file : spec;
}

const struct output_ops *output__for_path(const char *path)
{
	const struct output_ops *ops;
	const char *file;

	if (!path)
		return NULL;
	ops = format_prefix(path, &file);
	if (ops)
		return *file ? ops : NULL;
	if (ends_with(path, ".txt"))
		return &output_text;
	/* before ".json": a speedscope file is JSON too, but not our report */
	if (ends_with(path, ".speedscope.json"))
		return &output_speedscope;
	if (ends_with(path, ".json"))
		return &output_json;
	/* pprof reads gzipped and plain protobuf alike; we always write the usual gzip */
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pb"))
		return &output_pprof;
	/* folded stacks as flamegraph.pl and speedscope read them; a flame graph of our own */
	if (ends_with(path, ".folded"))
		return &output_folded;
	if (ends_with(path, ".svg"))
		return &output_svg;
	if (ends_with(path, ".csv"))
		return &output_csv;
	/* one self-contained page: every table, the chart and the flame graphs */
	if (ends_with(path, ".html"))
		return &output_html;
	/* standard output by name: the text report, as without -o */
	if (!strcmp(path, "-") || is_std_stream(path))
		return &output_text;
	/* nothing is kept: no format to tell (a run for its notes, its exit status, or
	 * mem --leaks' side effects), written as text like the streams above */
	if (!strcmp(path, "/dev/null"))
		return &output_text;
	return NULL;
}

bool output__shows_parts(const struct output_ops *ops)
{
	return ops == &output_text || ops == &output_json || ops == &output_html;
}

bool output__is_stream(const char *spec)
{
	const char *path = output__file(spec);
	struct stat st;

	/* or a FIFO, a device (/dev/null): never a name to put a part's name in (profile -o
	 * folded:/dev/null wrote /dev/null.cpu, a regular file, into /dev) */
	return !strcmp(path, "-") || is_std_stream(path) ||
	       (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

int output__part_path(const char *spec, const char *part, char *buf, size_t len)
{
	const char *path = output__file(spec);
	int pre = (int)(path - spec);
	/* longest first: ".speedscope.json" before ".json", ".pb.gz" before ".pb" */
	static const char *const ext[] = {
		".speedscope.json", ".pb.gz", ".pb", ".folded", ".svg", ".csv", ".txt", ".json",
		".html",
	};
	size_t n = strlen(path);

	/* a stream cannot be named per part: it takes the one part (output__is_stream) */
	if (output__is_stream(spec))
		return (size_t)snprintf(buf, len, "%s", spec) >= len ? -ENAMETOOLONG : 0;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t e = strlen(ext[i]);

		if (!ends_with(path, ext[i]))
			continue;
		if ((size_t)snprintf(buf, len, "%.*s%.*s.%s%s", pre, spec, (int)(n - e), path,
				     part, path + n - e) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	/* FORMAT:FILE without a known extension: the part's name after it */
	if (pre)
		return (size_t)snprintf(buf, len, "%s.%s", spec, part) >= len ? -ENAMETOOLONG : 0;
	return -EINVAL;
}

/* A renderer's -EIO says its stream failed (ferror): the write's own errno, when it left one,
 * says why (a full disk was "Input/output error"). errno is 0 before the renderer runs. */
static int stream_err(int err)
{
	return err == -EIO && errno > 0 && errno != EIO ? -errno : err;
}

static int write_stdout(const struct output_ops *ops, const struct profile *p,
			const struct output_opts *o)
{
	int err;

	errno = 0;
	err = stream_err(ops->write(p, o, stdout));

	if (fflush(stdout) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

/* Standard output and error by name: symbolic links to whatever they are (a pipe, a
 * terminal), which the user chose. */
static bool is_std_stream(const char *path)
{
	return !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr");
}

/*
 * What may be written without a rename: a FIFO named directly, /dev/null, and standard
 * output or error by name. Anything else that is no regular file (a device, a socket, a
 * symbolic link to one of them) is refused: `-o out.svg` where out.svg links to /dev/sda must
 * not write a flame graph over a disk.
 */
static int special_ok(const char *path, const struct stat *lst, const struct stat *st)
{
	if (is_std_stream(path))
		return 0;
	if (S_ISLNK(lst->st_mode))
		return -ELOOP;
	if (S_ISFIFO(st->st_mode))
		return 0;
	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3)
		return 0;	/* /dev/null */
	return -EPERM;
}

/* Devices and pipes (/dev/stdout, a FIFO) cannot be replaced by a rename: write to them. */
static int write_special(const struct output_ops *ops, const struct profile *p,
			 const struct output_opts *o, const char *path)
{
	/* the check before is not atomic: never follow a link swapped in since */
	int fd = open(path, O_WRONLY | O_CLOEXEC | (is_std_stream(path) ? 0 : O_NOFOLLOW));
	FILE *f;
	int err;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	err = stream_err(ops->write(p, o, f));
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

/* Create "<dir>/.<base>.<pid>.<n>.tmp" exclusively; mode 0666 so the umask applies as it
 * would to the destination. Returns the fd and the name in *tmp (malloc'd), or -errno. */
static int open_temp(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	const char *base = path + dirlen;
	unsigned int n;
	int fd;

	for (n = 0; n < 100; n++) {
		if (asprintf(tmp, "%.*s.%s.%d.%u.tmp", dirlen, path, base, (int)getpid(), n) < 0)
			return -ENOMEM;
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The file a chain of symbolic links from path ends at, which need not exist yet (a link to a
 * file not made yet names the file to make, as the shell's '>' does): malloc'd, or NULL with
 * errno (ELOOP past 40 links). A report goes to that file, renamed over it there: renaming
 * over the link would replace the link and leave the file it points at as it was. */
static char *link_target(const char *path)
{
	char buf[4096], *cur = strdup(path), *next;
	const char *slash;
	struct stat lst;
	ssize_t n;

	for (int i = 0; cur && i <= 40; i++) {
		if (lstat(cur, &lst) || !S_ISLNK(lst.st_mode))
			return cur;
		n = readlink(cur, buf, sizeof(buf) - 1);
		if (n < 0)
			break;
		buf[n] = '\0';
		slash = strrchr(cur, '/');
		/* a relative target is relative to the link's directory */
		if (buf[0] == '/' || !slash)
			next = strdup(buf);
		else if (asprintf(&next, "%.*s%s", (int)(slash - cur + 1), cur, buf) < 0)
			next = NULL;
		free(cur);
		cur = next;
	}
	if (cur) {
		free(cur);
		errno = ELOOP;
	}
	return NULL;
}

int output__write_path(const struct output_ops *ops, const struct profile *p,
		       const struct output_opts *o, const char *path)
{
	char *tmp = NULL;
	struct stat st, lst;
	FILE *f;
	int fd, err;

	if (!ops || !p || !path || !*path)
		return -EINVAL;
	path = output__file(path);
	if (!*path)
		return -EINVAL;
	if (strcmp(path, "-") == 0)
		return write_stdout(ops, p, o);
	if (lstat(path, &lst))
		lst.st_mode = 0;
	else if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		err = special_ok(path, &lst, &st);
		return err ? err : write_special(ops, p, o, path);
	}
	if (S_ISLNK(lst.st_mode) && !is_std_stream(path)) {
		char *target = link_target(path);

		if (!target)
			return -errno;
		/* the link's file, which is regular or not there yet (checked above) */
		err = lstat(target, &lst) || S_ISREG(lst.st_mode) ? output__write_path(ops, p, o, target)
								  : -ELOOP;
		free(target);
		return err;
	}

	fd = open_temp(path, &tmp);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	errno = 0;
	err = stream_err(ops->write(p, o, f));
	if (!err && fflush(f))
		err = errno ? -errno : -EIO;
	if (!err && ferror(f))
		err = stream_err(-EIO);
	/* the data must be on disk before the rename makes it the report */
	if (!err && fsync(fileno(f)) && errno != EINVAL)
		err = -errno;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (err)
		goto fail;
	if (rename(tmp, path)) {
		err = -errno;
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	return err;
}

int output__check_path(const char *path, char *why, size_t len)
{
	struct stat st, lst;
	char *dir;
	const char *slash;
	int err = 0;

	path = output__file(path);
	if (!strcmp(path, "-"))
		return 0;
	if (!lstat(path, &lst) && S_ISLNK(lst.st_mode) && !is_std_stream(path) &&
	    (stat(path, &st) || S_ISREG(st.st_mode))) {
		/* a link to a regular file, or to one not made yet: the report is made where
		 * the link points (output__write_path) */
		char *target = link_target(path);

		if (!target) {
			err = -errno;
			snprintf(why, len, "its symbolic link cannot be followed (%s)",
				 strerror(-err));
			return err;
		}
		err = output__check_path(target, why, len);
		if (err) {
			char inner[256];

			snprintf(inner, sizeof(inner), "%s", why);
			snprintf(why, len, "it links to '%s': %s", target, inner);
		}
		free(target);
		return err;
	}
	if (!lstat(path, &lst) && !stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, len, "it is a directory; name a file in it");
			return -EISDIR;
		}
		if (!S_ISREG(st.st_mode)) {
			err = special_ok(path, &lst, &st);
			if (err == -ELOOP)
				snprintf(why, len, "it is a symbolic link to something that is not a "
					 "regular file (a device, a pipe or a socket); ebprof writes "
					 "reports only to regular files");
			else if (err)
				snprintf(why, len, "it is not a regular file (a device or a socket); "
					 "ebprof writes reports only to regular files, FIFOs and "
					 "standard output ('-')");
			else if (access(path, W_OK)) {
				err = -errno;
				snprintf(why, len, "it is not writable (%s)", strerror(-err));
			}
			return err;
		}
	}
	/* a report is written next to its destination and renamed over it: the directory must
	 * take a new file */
	slash = strrchr(path, '/');
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	if (stat(dir, &st)) {
		err = -errno;
		snprintf(why, len, "directory '%s' %s", dir, err == -ENOENT ? "does not exist" :
			 strerror(-err));
	} else if (!S_ISDIR(st.st_mode)) {
		err = -ENOTDIR;
		snprintf(why, len, "'%s' is not a directory", dir);
	} else if (access(dir, W_OK | X_OK)) {
		err = -errno;
		snprintf(why, len, "directory '%s' is not writable (%s)", dir, strerror(-err));
	}
	free(dir);
	return err;
}
