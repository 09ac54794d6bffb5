// Self-test of the emulated CUDA device: runs the kernels of emu_selftest.cu through goss_cuemu_launch and checks
// every result against what a GPU gives, and that misuse fails the launch with a message naming the kernel.
// Built and run by backend-cuda/emu/fake-driver/build.sh; exit status 1 on any failure.
#include "cuda_emu_abi.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static int failures = 0;
#define CHECK(cond, ...)                                                                                          \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            std::fprintf(stderr, __VA_ARGS__);                                                                    \
            std::fprintf(stderr, "\n");                                                                           \
            failures++;                                                                                           \
        }                                                                                                         \
    } while (0)

static uint32_t bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

static int launch(const char *k, unsigned gx, unsigned bx, unsigned shared, std::vector<void *> ptrs,
                  unsigned gy = 1, unsigned gz = 1, unsigned by = 1, unsigned bz = 1) {
    std::vector<void *> params;
    for (void *&p : ptrs) params.push_back(&p);
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return goss_cuemu_launch(k, grid, block, shared, params.data());
}

/* __float2half_rn / __half2float against g++'s _Float16 (IEEE binary16, round to nearest even): every half, the
 * midpoints between neighbours (ties to even) and one float step either side of them, the overflow edge, and random
 * float bit patterns of every exponent. NaN only as NaN (a GPU's NaN bits are its own). */
static void checkHalf() {
    std::vector<float> in;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        _Float16 x;
        const uint16_t hb = (uint16_t) h;
        std::memcpy(&x, &hb, 2);
        const float f = (float) x;
        in.push_back(f);
        if ((h & 0x7fffu) < 0x7c00u) { // finite: the midpoint to the next half away from zero, and its neighbours
            _Float16 y;
            const uint16_t nb = (uint16_t) (h + 1);
            std::memcpy(&y, &nb, 2);
            const float mid = (float) (((double) f + (double) (float) y) / 2); // exact: 12 significant bits
            in.push_back(mid);
            in.push_back(std::nextafter(mid, 0.0f));
            in.push_back(std::nextafter(mid, mid * 2));
        }
    }
    for (float f : {65504.0f, 65519.99f, 65520.0f, 1e30f, 2.9802322e-8f, 2.9802326e-8f, 1e-30f, -0.0f})
        in.push_back(f);
    uint32_t r = 12345u;
    for (int i = 0; i < 200000; i++) {
        r = r * 1664525u + 1013904223u;
        float f;
        std::memcpy(&f, &r, 4);
        in.push_back(f);
    }
    const int n = (int) in.size();
    std::vector<unsigned> hb(n);
    std::vector<float> rt(n);
    int nn = n;
    CHECK(launch("emu_test_half", 64, 256, 0, {in.data(), hb.data(), rt.data(), &nn}) == 0, "half: %s", goss_cuemu_last_error());
    int bad = 0;
    for (int i = 0; i < n && bad < 10; i++) {
        const _Float16 want = (_Float16) in[i];
        uint16_t wb;
        std::memcpy(&wb, &want, 2);
        const bool nan = std::isnan(in[i]);
        const bool ok = nan ? std::isnan(rt[i]) && (hb[i] & 0x7c00u) == 0x7c00u && (hb[i] & 0x3ffu) != 0
                            : hb[i] == wb && bits(rt[i]) == bits((float) want);
        if (!ok) {
            bad++;
            CHECK(ok, "half of %.9g (bits %08x): %04x (back %.9g), want %04x", in[i], bits(in[i]), hb[i], rt[i], wb);
        }
    }
}

/* The emulator's semantics (barriers, shuffles, atomics, indices, misuse reported): must hold in every order. */
static void checkSemantics(const char *mode) {
    std::fprintf(stderr, "cuda emulator self-test: semantics under %s\n", mode);
    const unsigned B = 256, G = 5;
    std::vector<float> in(B * G), out(B * G);
    for (unsigned i = 0; i < B * G; i++) in[i] = (float) i;

    CHECK(launch("emu_test_reverse", G, B, 0, {in.data(), out.data()}) == 0, "reverse: %s", goss_cuemu_last_error());
    for (unsigned b = 0; b < G; b++)
        for (unsigned t = 0; t < B; t++) CHECK(out[b * B + t] == in[b * B + B - 1 - t], "reverse at %u/%u", b, t);

    CHECK(launch("emu_test_dynamic_shared", G, B, B * 4, {in.data(), out.data()}) == 0, "dynamic: %s", goss_cuemu_last_error());
    for (unsigned i = 0; i < B * G; i++) CHECK(out[i] == 2.0f * in[i], "dynamic shared at %u: %g", i, out[i]);

    const unsigned S = 64;
    std::vector<float> sh(S * 6);
    CHECK(launch("emu_test_shuffles", 1, S, 0, {sh.data()}) == 0, "shuffles: %s", goss_cuemu_last_error());
    for (unsigned t = 0; t < S; t++) {
        int l = (int) t % 32;
        CHECK(sh[t * 6 + 0] == 496.0f, "xor-tree sum lane %u: %g", t, sh[t * 6 + 0]);
        CHECK(sh[t * 6 + 1] == (float) (l + 3 < 32 ? l + 3 : l), "shfl_down lane %u: %g", t, sh[t * 6 + 1]);
        CHECK(sh[t * 6 + 2] == (float) (l >= 2 ? l - 2 : l), "shfl_up lane %u: %g", t, sh[t * 6 + 2]);
        CHECK(sh[t * 6 + 3] == 50.0f, "shfl(int) lane %u: %g", t, sh[t * 6 + 3]);
        CHECK(sh[t * 6 + 4] == (float) (l ^ 1), "shfl_xor(unsigned) lane %u: %g", t, sh[t * 6 + 4]);
        CHECK(sh[t * 6 + 5] == (float) (l & ~7), "shfl width 8 lane %u: %g", t, sh[t * 6 + 5]);
    }

    int count = 0, maxIndex = -1;
    float sum = 0;
    const unsigned AG = 64, AB = 128; // many blocks: spread over the emulator's OS threads
    CHECK(launch("emu_test_atomics", AG, AB, 0, {&count, &sum, &maxIndex}) == 0, "atomics: %s", goss_cuemu_last_error());
    CHECK(count == (int) (AG * AB), "atomicAdd(int): %d", count);
    CHECK(sum == 0.5f * AG * AB, "atomicAdd(float): %g", sum);
    CHECK(maxIndex == (int) (AG * AB - 1), "atomicMax(int): %d", maxIndex);

    std::vector<int> idx(3 * 2 * 2 * 8 * 2 * 2, -1);
    CHECK(launch("emu_test_indices", 3, 8, 0, {idx.data()}, 2, 2, 2, 2) == 0, "indices: %s", goss_cuemu_last_error());
    for (unsigned bz = 0; bz < 2; bz++) for (unsigned by = 0; by < 2; by++) for (unsigned bx = 0; bx < 3; bx++)
        for (unsigned tz = 0; tz < 2; tz++) for (unsigned ty = 0; ty < 2; ty++) for (unsigned tx = 0; tx < 8; tx++) {
            unsigned bl = (bz * 2 + by) * 3 + bx, tl = (tz * 2 + ty) * 8 + tx;
            int want = (int) (tx | ty << 4 | tz << 8 | bx << 12 | by << 16 | bz << 20);
            CHECK(idx[bl * 32 + tl] == want, "indices at block %u thread %u: %x", bl, tl, idx[bl * 32 + tl]);
        }

    std::string e;
    // __byte_perm: bytes 0-3 of a (0x21, 0x43, 0x65, 0x87), 4-7 of b (0x98, 0xba, 0xdc, 0xfe); a selector nibble
    // with bit 3 set repeats the sign of the byte its low 3 bits pick (0x87 and 0x98 negative, 0x21 positive)
    std::vector<unsigned> sel = {0x3210u, 0x7654u, 0x0123u, 0x4440u, 0x4443u, 0x7650u, 0x8880u, 0x000bu, 0x0008u},
                          want = {0x87654321u, 0xfedcba98u, 0x21436587u, 0x98989821u, 0x98989887u, 0xfedcba21u,
                                  0x00000021u, 0x212121ffu, 0x21212100u},
                          perm(sel.size());
    CHECK(launch("emu_test_byte_perm", 1, (unsigned) sel.size(), 0, {sel.data(), perm.data()}) == 0, "byte_perm: %s",
          goss_cuemu_last_error());
    for (size_t i = 0; i < sel.size(); i++) CHECK(perm[i] == want[i], "__byte_perm selector %04x: %08x, want %08x", sel[i], perm[i], want[i]);
    CHECK(launch("emu_test_divergent_barrier", 2, 64, 0, {out.data()}) != 0, "a divergent __syncthreads passed");
    e = goss_cuemu_last_error();
    CHECK(e.find("deadlock") != std::string::npos && e.find("emu_test_divergent_barrier") != std::string::npos, "%s", e.c_str());

    CHECK(launch("emu_test_divergent_shuffle", 1, 32, 0, {out.data()}) != 0, "a shuffle with exited lanes passed");
    e = goss_cuemu_last_error();
    CHECK(e.find("divergent warp") != std::string::npos && e.find("emu_test_divergent_shuffle") != std::string::npos, "%s", e.c_str());

    CHECK(launch("emu_test_mask_outside", 1, 32, 0, {out.data()}) != 0, "a shuffle reading outside its mask passed");
    e = goss_cuemu_last_error();
    CHECK(e.find("which the mask does not name") != std::string::npos, "%s", e.c_str());

    CHECK(launch("no_such_kernel", 1, 32, 0, {}) != 0, "an unknown kernel launched");

    // wmma m16n16k16 BF16: small integers and halves, exact in BF16 and in every sum
    std::vector<float> wa(16 * 32), wb(16 * 32);
    alignas(32) static float wout[516]; // wmma pointers are 32-byte aligned (device allocations are)
    std::fill(wout, wout + 516, -1.0f);
    for (int i = 0; i < 16 * 32; i++) {
        wa[i] = (float) ((i * 7) % 11) - 5.0f;
        wb[i] = 0.5f * (float) ((i * 5) % 9) - 2.0f;
    }
    CHECK(launch("emu_test_wmma", 1, 32, 0, {wa.data(), wb.data(), wout}) == 0, "wmma: %s", goss_cuemu_last_error());
    for (int r = 0; r < 16; r++)
        for (int n = 0; n < 16; n++) {
            double want = 1.0;
            for (int k = 0; k < 32; k++) want += (double) wa[r * 32 + k] * wb[n * 32 + k];
            CHECK(wout[r * 16 + n] == (float) want, "wmma row major (%d,%d): %g, want %g", r, n, wout[r * 16 + n], want);
            CHECK(wout[256 + n * 16 + r] == (float) want, "wmma column major (%d,%d): %g", r, n, wout[256 + n * 16 + r]);
        }
    CHECK(wout[512] == 1.0f, "bf16 1+2^-8 rounds to even (1): %.9g", wout[512]);
    CHECK(wout[513] == 1.015625f, "bf16 1+3*2^-8 rounds to even (1+2^-6): %.9g", wout[513]);
    CHECK(wout[514] == -3.00405527047391e38f, "bf16 -3e38: %.9g", wout[514]);
    CHECK(wout[515] == 1.0078125f, "bf16 1+2^-8+2^-16 rounds up: %.9g", wout[515]);
    checkHalf();
    CHECK(launch("emu_test_wmma_lane_pointers", 1, 32, 0, {out.data()}) != 0, "a wmma load with lane-dependent pointers passed");
    e = goss_cuemu_last_error();
    CHECK(e.find("wmma::load_matrix_sync") != std::string::npos && e.find("emu_test_wmma_lane_pointers") != std::string::npos, "%s", e.c_str());
}

static void setOrder(const char *order, const char *poison) {
    setenv("GOSS_EMU_ORDER", order, 1);
    setenv("GOSS_EMU_POISON", poison, 1);
}

/* The race checks of fibers.h: a missing barrier is right in forward order and wrong in reverse/shuffle order,
 * an unwritten shared slot reads NaN under poisoning, shuffle is reproducible, bad settings fail the launch. */
static void checkRaceModes() {
    const unsigned N = 128;
    std::vector<float> in(N), out(N);
    auto missingBarrier = [&](const char *order, const char *poison, float base = 100.0f) {
        setOrder(order, poison);
        for (unsigned t = 0; t < N; t++) in[t] = base + (float) t; // a new base: stale slots differ from in[]
        std::fill(out.begin(), out.end(), -1.0f);
        CHECK(launch("emu_test_missing_barrier", 1, N, N * 4, {in.data(), out.data()}) == 0, "%s", goss_cuemu_last_error());
        unsigned right = 0, nan = 0;
        for (unsigned t = 1; t < N; t++) {
            right += out[t] == in[t - 1];
            nan += std::isnan(out[t]);
        }
        return std::make_pair(right, nan);
    };
    auto [fwRight, fwNan] = missingBarrier("forward", "1");
    CHECK(fwRight == N - 1 && fwNan == 0, "forward order hides the missing barrier: %u right, %u NaN", fwRight, fwNan);
    auto [rvRight, rvNan] = missingBarrier("reverse", "1");
    CHECK(rvRight == 0 && rvNan == N - 1, "reverse order exposes it as NaN: %u right, %u NaN", rvRight, rvNan);
    auto [rvRight0, rvNan0] = missingBarrier("reverse", "0", 1000.0f); // stale, not NaN
    CHECK(rvRight0 == 0 && rvNan0 == 0, "reverse order without poisoning: %u right, %u NaN", rvRight0, rvNan0);
    auto [shRight, shNan] = missingBarrier("shuffle:42", "1");
    CHECK(shRight > 0 && shNan > 0 && shRight + shNan == N - 1, "shuffle order: %u right, %u NaN", shRight, shNan);
    std::vector<float> first = out;
    missingBarrier("shuffle:42", "1");
    bool same = true;
    for (unsigned t = 0; t < N; t++) same &= bits(out[t]) == bits(first[t]);
    CHECK(same, "shuffle:42 twice gave different interleavings");
    missingBarrier("shuffle:43", "1");
    bool differs = false;
    for (unsigned t = 0; t < N; t++) differs |= bits(out[t]) != bits(first[t]);
    CHECK(differs, "shuffle:42 and shuffle:43 gave the same interleaving");

    for (const char *order : {"forward", "reverse", "shuffle:5"}) {
        setOrder(order, "1");
        std::fill(out.begin(), out.end(), -1.0f);
        CHECK(launch("emu_test_unwritten_shared", 1, N, (N + 1) * 4, {out.data()}) == 0, "%s", goss_cuemu_last_error());
        bool ok = std::isnan(out[N - 1]);
        for (unsigned t = 0; t + 1 < N; t++) ok &= out[t] == 1.0f;
        CHECK(ok, "%s + poison: unwritten shared slot reads %g (want NaN), slot 0 %g", order, out[N - 1], out[0]);
    }

    setOrder("sideways", "0");
    CHECK(launch("emu_test_unwritten_shared", 1, N, (N + 1) * 4, {out.data()}) != 0, "GOSS_EMU_ORDER=sideways launched");
    std::string e = goss_cuemu_last_error();
    CHECK(e.find("GOSS_EMU_ORDER='sideways'") != std::string::npos, "%s", e.c_str());
    setOrder("forward", "yes");
    CHECK(launch("emu_test_unwritten_shared", 1, N, (N + 1) * 4, {out.data()}) != 0, "GOSS_EMU_POISON=yes launched");
    e = goss_cuemu_last_error();
    CHECK(e.find("GOSS_EMU_POISON='yes'") != std::string::npos, "%s", e.c_str());
}

int main() {
    const char *order = std::getenv("GOSS_EMU_ORDER");
    const char *poison = std::getenv("GOSS_EMU_POISON");
    std::string given = std::string(order ? order : "") + "|" + (poison ? poison : "");
    checkSemantics(("the environment's order '" + given + "'").c_str());
    for (const char *o : {"reverse", "shuffle:7"}) {
        setOrder(o, "1");
        checkSemantics(o);
    }
    checkRaceModes();

    if (failures) {
        std::fprintf(stderr, "cuda emulator self-test: %d failure(s)\n", failures);
        return 1;
    }
    std::printf("cuda emulator self-test: all checks passed\n");
    return 0;
}
