/*
 * stream_gemm.c — how fast one token's tile_gemm (backend-cpu/kernels/tile_gemm.c) streams its weights, against the C probe
 * (backend-cpu/kernels/stream_probe.c) in the same process. Decode reads every weight once per token, so the share of the
 * probe a kernel reaches over a buffer far larger than the caches is the ceiling of `bench --op-times`' rows for it.
 *
 *     stream_gemm FORMAT GIB JOB_MB SAMPLES [REPS [ORDER [TOKENS [SPAN_GIB]]]]
 *
 * FORMAT mx4 (the experts' tiles) or q8 (the dense Q8_0 tiles); GIB of weights at gpt-oss's width (2880 columns);
 * JOB_MB 0: each of 2 threads reads its half in one call; else jobs of about JOB_MB (an expert's matrix is ~4.4 MB)
 * split in halves with a spin barrier after each, as the engine's pool runs them. Each sample is the best of 2 passes
 * with a probe pass just before and after; it is marked "drift" when those two differ by more than 10 % (this VM's
 * memory changes speed every few tens of seconds). REPS > 1 reads the buffer that many times per pass: with a buffer
 * that fits in the caches, the kernel's compute rate. ORDER "shuffled" runs the jobs in a random order (the same for
 * every pass), as decode picks its experts, instead of in memory order; ORDER "fresh" draws each pass's GIB of jobs at
 * random anew out of SPAN_GIB of weights, as decode reads the experts of a model of several GiB
 * (on this machine kind, reading the same gigabyte again is faster than reading a fresh one); ORDER "fresh-touch-b", in
 * a paired build, draws as "fresh" and has one load per 4 KiB page of B's jobs run before each of B's passes, outside
 * its time: with two builds alike, B − A is what reading each page once beforehand saves the kernel (on this machine
 * kind, nearly all of the fresh jobs' loss). run.sh builds it (LABEL, the ISA, tile_gemm.c's macros) and takes the turns.
 *
 * Built with -DPAIR_ISA=NAME -DLABEL_B=... beside a second build of tile_gemm.c whose GOSS_ISA is NAME, it holds two
 * variants and each sample runs both, one pass each, A and B in turns (ABBA across samples), between the same two probe passes:
 * on a VM whose memory changes speed every few seconds, a difference of a few points shows here long before it
 * shows between processes.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "goss_cpu.h"

#define CAT3(a, b, c) a##b##c
#define CAT(a, b, c) CAT3(a, b, c)
#define KERNEL(name) CAT(goss_, GOSS_ISA, _##name)
#ifdef PAIR_ISA
#define DECLARE(isa) GOSS_CPU_DECLARE_ISA(isa) /* one more step, so PAIR_ISA expands before the header's ## */
DECLARE(PAIR_ISA)
#define KERNEL_B(name) , CAT(goss_, PAIR_ISA, _##name)
#else
#define KERNEL_B(name)
#endif
#define THREADS 2
#define BLOCKS 90 /* 2880 columns */

static int mx4, reps = 1, variant; /* which build's kernels run: 1 is the PAIR_ISA one */
static void (*const mx4_gemm_of[])(const uint8_t *, const uint8_t *, int64_t, int64_t, int64_t, int64_t, const int8_t *,
                                   const float *, const int32_t *, int64_t, float *, int64_t, const float *) =
    {KERNEL(mx4_gemm) KERNEL_B(mx4_gemm)};
static void (*const q8_gemm_of[])(const int8_t *, const uint16_t *, int64_t, int64_t, int64_t, int64_t, const int8_t *,
                                  const float *, const int32_t *, int64_t, float *, int64_t, const float *) =
    {KERNEL(q8_gemm) KERNEL_B(q8_gemm)};
static int64_t *job_order; /* job j of a pass is job_order[j] */
static int64_t groups, job_groups, pass_jobs; /* groups of the buffer, of a job; jobs a pass reads */
static uint8_t *codes, *scales;
#define MAX_TOKENS 8
static int tokens = 1; /* activation rows per call: 1 is decode, more a batch of sequences or a prefill chunk */
static int8_t q[MAX_TOKENS * 32 * BLOCKS];
static float d[MAX_TOKENS * BLOCKS], *out[THREADS]; /* a thread's rows of its largest call, for every token */
static int32_t s[MAX_TOKENS * BLOCKS];
static atomic_int arrived;

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int64_t code_bytes(void) { return mx4 ? 256 : 512; }  /* per group and block */
static int64_t scale_bytes(void) { return mx4 ? 16 : 32; }

/* the group after the job that starts at group a0 (the last job may be short) */
static int64_t job_end(int64_t a0) { return a0 + job_groups < groups ? a0 + job_groups : groups; }

/* groups lo..hi-1 of the job whose matrix starts at group a0 */
static void gemm(int64_t a0, int64_t lo, int64_t hi, float *o) {
    const uint8_t *c = codes + a0 * BLOCKS * code_bytes(), *sc = scales + a0 * BLOCKS * scale_bytes();
    if (mx4) mx4_gemm_of[variant](c, sc, BLOCKS, (hi - a0) * 16, lo - a0, hi - a0, q, d, s, tokens, o, (hi - lo) * 16, NULL);
    else q8_gemm_of[variant]((const int8_t *)c, (const uint16_t *)sc, BLOCKS, (hi - a0) * 16, lo - a0, hi - a0, q, d, s, tokens, o, (hi - lo) * 16, NULL);
}

static void *reader(void *arg) {
    int id = (int)(intptr_t)arg;
    int64_t jobs = pass_jobs;
    for (int r = 0; r < reps; r++)
        for (int64_t j = 0; j < jobs; j++) {
            int64_t a0 = job_order[j] * job_groups, n = job_end(a0) - a0;
            gemm(a0, a0 + n * id / THREADS, a0 + n * (id + 1) / THREADS, out[id]);
            if (jobs > 1) {
                int target = (int)((r * jobs + j + 1) * THREADS);
                atomic_fetch_add(&arrived, 1);
                while (atomic_load(&arrived) < target) __builtin_ia32_pause();
            }
        }
    return NULL;
}

/* ORDER fresh: the first pass_jobs entries of job_order become distinct jobs drawn at random (a partial shuffle) */
static int fresh, touch_b;
static void draw_jobs(void) {
    int64_t all = groups / job_groups;
    for (int64_t j = 0; fresh && j < pass_jobs; j++) {
        int64_t i = j + rand() % (all - j), t = job_order[i];
        job_order[i] = job_order[j], job_order[j] = t;
    }
}

/* ORDER fresh-touch-b: a load from every 4 KiB page of the pass's jobs, codes and scales (a prefetch does not do it) */
static void touch_pages(void) {
    for (int64_t j = 0; j < pass_jobs; j++) {
        int64_t a0 = job_order[j] * job_groups, a1 = job_end(a0);
        /* from the page the job starts in (the buffers start on a page): every page the job overlaps; a volatile
         * load is never left out, its value unused */
        for (int64_t o = a0 * BLOCKS * code_bytes() & ~4095; o < a1 * BLOCKS * code_bytes(); o += 4096) (void)*(volatile uint8_t *)(codes + o);
        for (int64_t o = a0 * BLOCKS * scale_bytes() & ~4095; o < a1 * BLOCKS * scale_bytes(); o += 4096) (void)*(volatile uint8_t *)(scales + o);
    }
}

static double pass(void) {
    pthread_t t[THREADS];
    draw_jobs();
    if (touch_b && variant == 1) touch_pages();
    atomic_store(&arrived, 0);
    double t0 = seconds();
    for (int i = 1; i < THREADS; i++) pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i);
    reader(0);
    for (int i = 1; i < THREADS; i++) pthread_join(t[i], NULL);
    return seconds() - t0;
}

int main(int argc, char **argv) {
    if (argc < 5 || (strcmp(argv[1], "mx4") && strcmp(argv[1], "q8"))) {
        fprintf(stderr, "usage: stream_gemm mx4|q8 GIB JOB_MB SAMPLES [REPS [memory|shuffled|fresh|fresh-touch-b [TOKENS [SPAN_GIB]]]]\n");
        return 2;
    }
    mx4 = strcmp(argv[1], "mx4") == 0;
    double gib = atof(argv[2]), job_mb = atof(argv[3]);
    int samples = atoi(argv[4]);
    if (argc > 5) reps = atoi(argv[5]);
    int shuffled = argc > 6 && strcmp(argv[6], "shuffled") == 0;
    touch_b = argc > 6 && strcmp(argv[6], "fresh-touch-b") == 0;
    fresh = touch_b || (argc > 6 && strcmp(argv[6], "fresh") == 0);
    if (argc > 6 && !shuffled && !fresh && strcmp(argv[6], "memory")) {
        fprintf(stderr, "stream_gemm: ORDER is memory, shuffled, fresh or fresh-touch-b, not '%s'\n", argv[6]);
        return 2;
    }
#ifndef PAIR_ISA
    if (touch_b) {
        fprintf(stderr, "stream_gemm: fresh-touch-b needs a paired build (B's passes are the touched ones)\n");
        return 2;
    }
#endif
    if (argc > 7) tokens = atoi(argv[7]);
    double span = argc > 8 ? atof(argv[8]) : 0;
    if (fresh && (span < gib || job_mb <= 0)) {
        fprintf(stderr, "stream_gemm: fresh jobs need JOB_MB > 0 and SPAN_GIB >= GIB\n");
        return 2;
    }
    if (tokens < 1 || tokens > MAX_TOKENS) {
        fprintf(stderr, "stream_gemm: TOKENS is 1 to %d\n", MAX_TOKENS);
        return 2;
    }
    int64_t group_bytes = BLOCKS * (code_bytes() + scale_bytes());
    groups = (int64_t)((fresh ? span : gib) * (1 << 30)) / group_bytes;
    job_groups = job_mb > 0 ? (int64_t)(job_mb * 1e6 / group_bytes) : groups;
    pass_jobs = fresh ? (int64_t)(gib * (1 << 30)) / group_bytes / job_groups : (groups + job_groups - 1) / job_groups;
    if (groups < 2 * THREADS || job_groups < THREADS || pass_jobs < 1 || samples < 1 || reps < 1) {
        fprintf(stderr, "stream_gemm: GIB, JOB_MB, SAMPLES or REPS too small\n");
        return 2;
    }
    int64_t jobs = (groups + job_groups - 1) / job_groups;
    job_order = malloc(jobs * sizeof *job_order);
    for (int64_t j = 0; j < jobs; j++) job_order[j] = j;
    srand(42);
    for (int64_t j = jobs - 1; shuffled && j > 0; j--) {
        int64_t i = rand() % (j + 1), t = job_order[i];
        job_order[i] = job_order[j], job_order[j] = t;
    }
    for (int i = 0; i < THREADS; i++) out[i] = malloc((job_groups + THREADS - 1) / THREADS * 16 * tokens * sizeof(float));
    codes = goss_cpu_alloc(groups * BLOCKS * code_bytes());
    scales = goss_cpu_alloc(groups * BLOCKS * scale_bytes());
    goss_stream_probe *probe = goss_cpu_probe_open(THREADS, (int64_t)512 << 20);
    if (!codes || !scales || !probe || !out[0] || !out[THREADS - 1]) {
        fprintf(stderr, "stream_gemm: no memory for the weights or the probe\n");
        return 1;
    }
    uint64_t x = 88172645463325252ull;  /* xorshift codes; finite scales (E8M0 near 1, F16 0.25) */
    for (int64_t i = 0; i < groups * BLOCKS * code_bytes() / 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(codes + 8 * i, &x, 8);
    }
    for (int64_t i = 0; i < groups * BLOCKS * scale_bytes(); i++) scales[i] = mx4 ? 120 + i % 10 : (i & 1 ? 0x34 : 0);
    for (int i = 0; i < MAX_TOKENS * 32 * BLOCKS; i++) q[i] = (int8_t)(i * 37 % 101 - 50);
    for (int b = 0; b < MAX_TOKENS * BLOCKS; b++) d[b] = 0.01f;  /* s (the quads' sums) only shifts the result: zeros do */

    double bytes = (double)reps * (fresh ? pass_jobs * job_groups : groups) * group_bytes;
    char shape[64]; /* the job's shape, one word: job=MB[,shuffled|,fresh<SPAN>[,touchB]][,T<tokens>] */
    snprintf(shape, sizeof shape, "job=%g%s", job_mb, shuffled ? ",shuffled" : "");
    if (fresh) snprintf(shape + strlen(shape), sizeof shape - strlen(shape), ",fresh%g%s", span, touch_b ? ",touchB" : "");
    if (tokens > 1) snprintf(shape + strlen(shape), sizeof shape - strlen(shape), ",T%d", tokens);
    for (int k = 0; k < samples; k++) {
        double before = goss_cpu_probe_pass(probe, 2), gbs[2];
#ifdef PAIR_ISA
        for (int i = 0; i < 2; i++) {
            variant = i ^ (k & 1);  /* A B, then B A: neither always runs first */
            gbs[variant] = bytes / pass() / 1e9;
        }
#else
        double best = 1e30;
        for (int r = 0; r < 2; r++) {
            double t = pass();
            if (t < best) best = t;
        }
        gbs[0] = bytes / best / 1e9;
#endif
        double after = goss_cpu_probe_pass(probe, 2), probe_gbs = (before + after) / 2;
        const char *steady = (before > after ? before / after : after / before) < 1.10 ? "ok" : "drift";
#ifdef PAIR_ISA
        printf("%s/%s %s %s %.1f %.1f GB/s pair-probe %.1f %.1f share %.0f%% %.0f%% diff %+.1f %s\n", LABEL, LABEL_B,
               argv[1], shape, gbs[0], gbs[1], before, after, 100 * gbs[0] / probe_gbs,
               100 * gbs[1] / probe_gbs, 100 * (gbs[1] - gbs[0]) / probe_gbs, steady);
#else
        printf("%s %s %s %.1f GB/s probe %.1f %.1f share %.0f%% %s\n", LABEL, argv[1], shape, gbs[0], before, after,
               100 * gbs[0] / probe_gbs, steady);
#endif
        fflush(stdout);
    }
    goss_cpu_probe_close(probe);
    return 0;
}
