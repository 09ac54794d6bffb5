/*
 * memory.c — memory for repacked weights: 2 MiB aligned and advised for transparent huge pages, so the
 * kernels stream gigabytes with few TLB misses and the hardware prefetchers are not stopped at every 4 KiB
 * page. Anonymous mappings start zeroed by the kernel on first touch: no extra pass over the memory.
 * goss_cpu_prefault maps a file region's pages in one call before it is read (instead of one fault per 4 KiB);
 * goss_cpu_release drops them again once repacked, when memory is short.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include "goss_cpu.h"

#define HUGE (2u << 20)

static uint64_t round_up(uint64_t n) { return (n + HUGE - 1) & ~(uint64_t)(HUGE - 1); }

void *goss_cpu_alloc(int64_t bytes) {
    if (bytes <= 0) return 0;
    uint64_t size = round_up((uint64_t)bytes), span = size + HUGE;
    uint8_t *p = mmap(0, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (a > p) munmap(p, a - p);
    if (p + span > a + size) munmap(a + size, p + span - (a + size));
#ifdef MADV_HUGEPAGE
    madvise(a, size, MADV_HUGEPAGE);
#endif
    return a;
}

void goss_cpu_prefault(const void *p, int64_t bytes) {
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
    if (!p || bytes <= 0) return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
    madvise((void *)a, (uintptr_t)p + (uint64_t)bytes - a, MADV_POPULATE_READ); /* best effort: older kernels say EINVAL */
}

/* Repacking copies a file's weights; when memory is short, keeping the file's pages cached beside the copy pushes
 * the page cache into the memory the copy's huge pages come from (they then fall back to 4 KiB pages) and makes
 * the kernel reclaim during decode. Paging the copied range out returns that memory at once. */
void goss_cpu_release(const void *p, int64_t bytes) {
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21 /* Linux 5.4 */
#endif
    if (!p || bytes <= 0) return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
    madvise((void *)a, (uintptr_t)p + (uint64_t)bytes - a, MADV_PAGEOUT); /* best effort, as prefault */
}

void goss_cpu_free(void *p, int64_t bytes) {
    if (p && bytes > 0) munmap(p, round_up((uint64_t)bytes));
}
