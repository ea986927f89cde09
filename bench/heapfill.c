/* heapfill N SIZE: a heap for the leak-scan benchmark. N blocks of SIZE bytes, every block
 * written whole; the first half linked into a list a global points at (still reachable), the
 * second half a list nothing points at (one definitely lost head, the rest indirectly lost).
 * The scan reads every reachable and every lost block once more. Exits at once: the scan of
 * interest is the one at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile head;

static void *chain(size_t n, size_t size)
{
	void *first = NULL;

	for (size_t i = 0; i < n; i++) {
		void **b = malloc(size);

		if (!b) {
			perror("malloc");
			exit(1);
		}
		memset(b, 0, size);
		b[0] = first;
		first = b;
	}
	return first;
}

int main(int argc, char **argv)
{
	size_t n, size;
	void *volatile lost;

	if (argc != 3 || (n = strtoull(argv[1], NULL, 0)) < 2 ||
	    (size = strtoull(argv[2], NULL, 0)) < sizeof(void *)) {
		fprintf(stderr, "usage: heapfill N SIZE (N >= 2, SIZE >= 8)\n");
		return 2;
	}
	head = chain(n / 2, size);
	lost = chain(n - n / 2, size);
	lost = NULL;
	(void)lost;
	return 0;
}
