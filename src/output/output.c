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
#include <unistd.h>

#include "output/output.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

const struct output_ops *output__for_path(const char *path)
{
	if (!path)
		return NULL;
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
	return NULL;
}

static int write_stdout(const struct output_ops *ops, const struct profile *p,
			const struct output_opts *o)
{
	int err = ops->write(p, o, stdout);

	if (fflush(stdout) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

/* Devices and pipes (/dev/stdout, a FIFO) cannot be replaced by a rename: write to them. */
static int write_special(const struct output_ops *ops, const struct profile *p,
			 const struct output_opts *o, const char *path)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	errno = 0;
	err = ops->write(p, o, f);
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

int output__write_path(const struct output_ops *ops, const struct profile *p,
		       const struct output_opts *o, const char *path)
{
	char *tmp = NULL;
	struct stat st;
	FILE *f;
	int fd, err;

	if (!ops || !p || !path || !*path)
		return -EINVAL;
	if (strcmp(path, "-") == 0)
		return write_stdout(ops, p, o);
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return write_special(ops, p, o, path);

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
	err = ops->write(p, o, f);
	if (!err && fflush(f))
		err = errno ? -errno : -EIO;
	if (!err && ferror(f))
		err = -EIO;
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
