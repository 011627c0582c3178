/*
 * Does PAGEMAP_SCAN report never-touched pages of an anonymous mapping as
 * written? It asks with the filter wasmtime's keep-resident reset uses
 * (written, not the zero page, not file-backed) and prints the matching
 * page ranges of a 256-page mapping after each step.
 *
 *   cc -O1 -o pagemap_holes docs/performance/pagemap_holes.c && ./pagemap_holes
 *
 * On the benchmark machine (Linux 6.18) a page read once (mapped to the
 * zero page) is the only one not reported once the mapping has page
 * tables: holes are reported as written, so a reset that trusts the scan
 * rewrites every page of the range it keeps. Each step is scanned twice:
 * as wasmtime 50.0.1 does, and as it does with xfn's fix
 * (third_party/wasmtime-pagemap-present.patch), which also requires the
 * page to be present or swapped; that reports only page 200.
 */
#include <fcntl.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#define PAGE 4096
#define PAGES 256
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)

struct page_region {
	__u64 start, end, categories;
};

struct pm_scan_arg {
	__u64 size, flags, start, end, walk_end, vec, vec_len, max_pages;
	__u64 category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)

static void scan_with(int pagemap, char *base, const char *after, const char *filter,
		      __u64 anyof)
{
	struct page_region regions[64];
	struct pm_scan_arg arg;

	memset(&arg, 0, sizeof arg);
	arg.size = sizeof arg;
	arg.start = (uintptr_t)base;
	arg.end = (uintptr_t)base + PAGES * PAGE;
	arg.vec = (uintptr_t)regions;
	arg.vec_len = 64;
	arg.max_pages = PAGES;
	arg.category_inverted = PAGE_IS_PFNZERO | PAGE_IS_FILE;
	arg.category_mask = PAGE_IS_WRITTEN | PAGE_IS_PFNZERO | PAGE_IS_FILE;
	arg.category_anyof_mask = anyof;

	long n = ioctl(pagemap, PAGEMAP_SCAN, &arg);
	if (n < 0) {
		perror("PAGEMAP_SCAN");
		return;
	}
	printf("%-28s %-14s reported as written:", after, filter);
	for (long i = 0; i < n; i++)
		printf(" pages %lu..%lu", (unsigned long)((regions[i].start - (uintptr_t)base) / PAGE),
		       (unsigned long)((regions[i].end - (uintptr_t)base) / PAGE) - 1);
	printf("\n");
}

static void scan(int pagemap, char *base, const char *after)
{
	scan_with(pagemap, base, after, "(wasmtime)", 0);
	scan_with(pagemap, base, after, "(with the fix)", PAGE_IS_PRESENT | PAGE_IS_SWAPPED);
}

int main(void)
{
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0) {
		perror("/proc/self/pagemap");
		return 1;
	}
	char *base = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	scan(pagemap, base, "untouched");
	volatile char read = base[100 * PAGE];
	(void)read;
	scan(pagemap, base, "after reading page 100");
	base[200 * PAGE] = 1;
	scan(pagemap, base, "after writing page 200");
	madvise(base, PAGES * PAGE, MADV_DONTNEED);
	scan(pagemap, base, "after MADV_DONTNEED of all");
	return 0;
}
