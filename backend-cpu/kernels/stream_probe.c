/*
 * stream_probe.c — what this machine's memory gives a plain streaming read, the yardstick decode is measured
 * against (`goss-gpu bench`, benchmarks/scripts/decode-vs-llama.sh). No JVM, no pool, no kernel: `threads` POSIX threads
 * each sum their own slice of one buffer far larger than any cache (allocated as the repacked weights are, by
 * goss_cpu_alloc: 2 MiB aligned, huge pages advised), all released together by a barrier, pass after pass; a pass
 * runs from the first thread's start to the last one's end, and the best pass counts, as STREAM reports it. Every
 * thread writes its own slice first, so the passes read committed memory, not the shared zero page. The loads are
 * 256-bit AVX2 loads (four independent sums) where the CPU has AVX2, else 64-bit words (four sums).
 *
 * Built into libgoss_cpu (bench calls it through FFM), and on its own as a command:
 *   gcc -O2 -DGOSS_STREAM_PROBE_MAIN backend-cpu/kernels/stream_probe.c backend-cpu/kernels/memory.c -Ibackend-cpu/kernels -pthread -o stream_probe
 *   ./stream_probe [THREADS [GIB [PASSES [SPAN_GIB]]]]
 * With SPAN_GIB (larger than GIB), each pass reads GIB twice, in turns: the buffer's first GIB again (what the probe
 * reads), then GIB in 4 MiB chunks drawn at random anew out of SPAN_GIB (as decode reads experts out of a large model),
 * and prints both: how much of a fresh read's cost is the machine's, apart from any kernel.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
#include "goss_cpu.h"

#define MAX_PASSES 64

struct goss_stream_probe {
    uint8_t *buf;
    int64_t slice;
    int32_t threads, avx2;
};

typedef struct {
    const uint8_t *buf;
    int64_t slice;
    int32_t passes, avx2, write;
    pthread_barrier_t *barrier;
    int64_t start[MAX_PASSES], end[MAX_PASSES];
    uint64_t sum;
} probe_thread;

static volatile uint64_t sink;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

__attribute__((target("avx2"))) static uint64_t sum_avx2(const uint8_t *p, int64_t n) {
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    for (int64_t i = 0; i < n; i += 128) {
        a = _mm256_add_epi64(a, _mm256_load_si256((const __m256i *)(p + i)));
        b = _mm256_add_epi64(b, _mm256_load_si256((const __m256i *)(p + i + 32)));
        c = _mm256_add_epi64(c, _mm256_load_si256((const __m256i *)(p + i + 64)));
        d = _mm256_add_epi64(d, _mm256_load_si256((const __m256i *)(p + i + 96)));
    }
    __m256i s = _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d));
    uint64_t w[4];
    _mm256_storeu_si256((__m256i *)w, s);
    return w[0] + w[1] + w[2] + w[3];
}

static uint64_t sum_words(const uint8_t *p, int64_t n) {
    const uint64_t *w = (const uint64_t *)p;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (int64_t i = 0; i < n / 8; i += 4) {
        a += w[i];
        b += w[i + 1];
        c += w[i + 2];
        d += w[i + 3];
    }
    return a + b + c + d;
}

static void *probe_run(void *arg) {
    probe_thread *t = arg;
    if (t->write) memset((void *)t->buf, 0x5A, (size_t)t->slice);
    uint64_t s = 0;
    for (int p = 0; p < t->passes; p++) {
        pthread_barrier_wait(t->barrier);
        t->start[p] = now_ns();
        s += t->avx2 ? sum_avx2(t->buf, t->slice) : sum_words(t->buf, t->slice);
        t->end[p] = now_ns();
    }
    t->sum = s;
    return 0;
}

/* Every thread (the caller is thread 0) writes its slice first when `write`, then reads it `passes` times, all
 * released together by a barrier each pass; returns the best pass in GB/s (0 without passes), or −4 when a thread
 * could not start. */
static double run_threads(const goss_stream_probe *pr, int32_t passes, int write) {
    int threads = pr->threads;
    probe_thread *ts = calloc((size_t)threads, sizeof *ts);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    pthread_barrier_t barrier;
    double best = -3;
    if (!ts || !ids || pthread_barrier_init(&barrier, 0, (unsigned)threads) != 0) goto out;
    int started = 0;
    for (int i = 0; i < threads; i++) {
        ts[i] = (probe_thread){.buf = pr->buf + i * pr->slice, .slice = pr->slice, .passes = passes, .avx2 = pr->avx2,
                               .write = write, .barrier = &barrier};
        if (i > 0 && pthread_create(&ids[i], 0, probe_run, &ts[i]) != 0) break;
        started++;
    }
    if (started < threads) {
        /* the started threads wait at the barrier for ever: nothing safe to do but leave them (never seen) */
        best = -4;
        goto out;
    }
    probe_run(&ts[0]);
    uint64_t s = 0;
    for (int i = 0; i < threads; i++) {
        if (i > 0) pthread_join(ids[i], 0);
        s += ts[i].sum;
    }
    sink = s;
    pthread_barrier_destroy(&barrier);
    int64_t fastest = INT64_MAX;
    for (int p = 0; p < passes; p++) {
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (int i = 0; i < threads; i++) {
            if (ts[i].start[p] < first) first = ts[i].start[p];
            if (ts[i].end[p] > last) last = ts[i].end[p];
        }
        if (last - first < fastest) fastest = last - first;
    }
    best = passes == 0 ? 0 : (double)(pr->slice * threads) / (double)(fastest > 0 ? fastest : 1);
out:
    free(ts);
    free(ids);
    return best;
}

goss_stream_probe *goss_cpu_probe_open(int32_t threads, int64_t bytes) {
    if (threads < 1 || threads > 1024) return 0;
    int64_t slice = bytes / threads / 4096 * 4096; /* whole pages, a multiple of the 128-byte step */
    if (slice < 4096) return 0;
    goss_stream_probe *pr = calloc(1, sizeof *pr);
    if (!pr) return 0;
    *pr = (goss_stream_probe){.buf = goss_cpu_alloc(slice * threads), .slice = slice, .threads = threads,
                              .avx2 = __builtin_cpu_supports("avx2")};
    if (!pr->buf) {
        free(pr);
        return 0;
    }
    if (run_threads(pr, 0, 1) < 0) return 0; /* a thread did not start: the buffer stays with the waiting threads */
    return pr;
}

double goss_cpu_probe_pass(goss_stream_probe *pr, int32_t passes) {
    if (!pr || passes < 1 || passes > MAX_PASSES) return -1;
    return run_threads(pr, passes, 0);
}

void goss_cpu_probe_close(goss_stream_probe *pr) {
    if (!pr) return;
    goss_cpu_free(pr->buf, pr->slice * pr->threads);
    free(pr);
}

double goss_cpu_stream_probe(int32_t threads, int64_t bytes, int32_t passes, int32_t *method) {
    if (threads < 1 || threads > 1024 || passes < 1 || passes > MAX_PASSES) return -1;
    goss_stream_probe *pr = goss_cpu_probe_open(threads, bytes);
    if (!pr) return -2;
    if (method) *method = pr->avx2 ? 1 : 0;
    double best = goss_cpu_probe_pass(pr, passes);
    if (best > -4) goss_cpu_probe_close(pr);
    return best;
}

#ifdef GOSS_STREAM_PROBE_MAIN
#include <stdio.h>
#include <unistd.h>

#define CHUNK ((int64_t)4 << 20)
typedef struct {
    const uint8_t *buf;
    const int64_t *chunks; /* the pass's chunks; thread i of n reads chunks i, i + n, ... */
    int64_t count;
    int32_t first, step, avx2;
    uint64_t sum;
} chunk_reader;

static void *read_chunks(void *arg) {
    chunk_reader *r = arg;
    for (int64_t j = r->first; j < r->count; j += r->step) {
        const uint8_t *p = r->buf + r->chunks[j] * CHUNK;
        r->sum += r->avx2 ? sum_avx2(p, CHUNK) : sum_words(p, CHUNK);
    }
    return 0;
}

/* GB/s of one pass over `count` chunks on `threads` threads (the caller is thread 0); −1 when a thread did not start */
static double chunk_pass(const uint8_t *buf, const int64_t *chunks, int64_t count, int threads, int avx2) {
    chunk_reader r[64];
    pthread_t ids[64];
    int64_t t0 = now_ns();
    int started = 1;
    for (int i = 0; i < threads; i++) r[i] = (chunk_reader){buf, chunks, count, i, threads, avx2, 0};
    for (int i = 1; i < threads && pthread_create(&ids[i], 0, read_chunks, &r[i]) == 0; i++) started++;
    read_chunks(&r[0]);
    for (int i = 1; i < started; i++) pthread_join(ids[i], 0);
    for (int i = 0; i < threads; i++) sink += r[i].sum;
    return started < threads ? -1 : (double)(count * CHUNK) / (double)(now_ns() - t0);
}

static int fresh_against_again(int threads, double gib, int passes, double span_gib) {
    int64_t count = (int64_t)(gib * (1 << 30)) / CHUNK, all = (int64_t)(span_gib * (1 << 30)) / CHUNK;
    if (threads > 64 || count < threads || all <= count) {
        fprintf(stderr, "stream_probe: SPAN_GIB must exceed GIB, GIB hold a 4 MiB chunk per thread, THREADS at most 64\n");
        return 2;
    }
    uint8_t *buf = goss_cpu_alloc(all * CHUNK);
    int64_t *order = malloc((size_t)all * sizeof *order);
    if (!buf || !order) {
        fprintf(stderr, "stream_probe: cannot allocate %.1f GiB\n", span_gib);
        return 1;
    }
    memset(buf, 0x5A, (size_t)(all * CHUNK)); /* committed memory, not the shared zero page */
    int avx2 = __builtin_cpu_supports("avx2");
    double again = 0, fresh = 0;
    srand(42);
    for (int p = 0; p < passes; p++) {
        for (int64_t j = 0; j < all; j++) order[j] = j;
        double a = chunk_pass(buf, order, count, threads, avx2);  /* the first GIB, in memory order, as every pass */
        for (int64_t j = 0; j < count; j++) {  /* a partial shuffle: count distinct chunks at random */
            int64_t i = j + rand() % (all - j), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        double f = chunk_pass(buf, order, count, threads, avx2);
        if (a < 0 || f < 0) {
            fprintf(stderr, "stream_probe: cannot start %d threads\n", threads);
            return 1;
        }
        printf("pass %d: the same %.1f GiB again %.1f GB/s, fresh chunks %.1f GB/s\n", p + 1, gib, a, f);
        again += a, fresh += f;
    }
    printf("%.1f GB/s fresh against %.1f GB/s again (%.0f %%; C streaming probe: %d thread%s, %.1f GiB per pass in "
           "4 MiB chunks, fresh ones drawn out of %.1f GiB, means of %d passes)\n", fresh / passes, again / passes,
           100 * fresh / again, threads, threads == 1 ? "" : "s", gib, span_gib, passes);
    goss_cpu_free(buf, all * CHUNK);
    free(order);
    return 0;
}

int main(int argc, char **argv) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = argc > 1 ? atoi(argv[1]) : (int)(cpus > 0 ? cpus : 1);
    double gib = argc > 2 ? atof(argv[2]) : 4;
    int passes = argc > 3 ? atoi(argv[3]) : 8;
    if (threads < 1 || gib <= 0 || passes < 1 || passes > MAX_PASSES) {
        fprintf(stderr, "usage: stream_probe [THREADS [GIB [PASSES (1-%d) [SPAN_GIB]]]]\n", MAX_PASSES);
        return 2;
    }
    if (argc > 4) return fresh_against_again(threads, gib, passes, atof(argv[4]));
    int32_t method = 0;
    double gbps = goss_cpu_stream_probe(threads, (int64_t)(gib * (1 << 30)), passes, &method);
    if (gbps < 0) {
        fprintf(stderr, "stream_probe: cannot allocate %.1f GiB or start %d threads\n", gib, threads);
        return 1;
    }
    printf("%.1f GB/s (C streaming probe: %d thread%s reading a %.1f GiB buffer with %s, best of %d passes)\n", gbps,
           threads, threads == 1 ? "" : "s", gib, method ? "256-bit AVX2 loads" : "64-bit word loads", passes);
    return 0;
}
#endif
