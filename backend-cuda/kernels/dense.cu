// Dense matrices of the cuda backend (io.gossgpu.cuda.DenseLauncher): linear layers for decode (matvec) and
// prefill (tiled GEMM). Weights stay in their checkpoint precision (BF16, F16, F32 or Q8_0), row-major with
// contiguous rows: element (r, c) at w[r * cols + c]; Q8_0 as signed bytes w[r * cols + c] plus one F16 scale
// per 32 values, s[r * cols/32 + c/32] (the ggml blocks' bytes, split so that the codes can be read 16 at a
// time). Every value is decoded exactly to float before use; activations, products and sums are float32 (fmaf),
// no --use_fast_math, so results match io.gossgpu.cpu.ReferenceBackend to float rounding.
//
// Reference formulas:
//   decode:  BF16 bits b -> float bits b << 16;  F16 -> IEEE binary16 value (subnormals, inf, NaN exact);
//            Q8_0 -> s * q (exact in float: 8 x 11 significant bits)
//   linear:  y[t, r] = sum_c W[r, c] * x[t, c] + b[r]               (b optional: hasBias = 0)
//            written to up to three tensors (a fused [q; k; v] matrix): rows [0, n0) to out0 (T x n0),
//            [n0, n0 + n1) to out1 (T x n1), the rest to out2; a plain linear has n0 = rows.
//
// Each kernel exists once per element type: dense_matvec_bf16, dense_gemm_bf16_32x64, ..., and for BF16 weights
// dense_gemm_mma_bf16 (the GEMM on tensor cores). Launch shapes per kernel.

#include "common.cuh"

// Where y[t, r] of a linear goes (see the header).
__device__ __forceinline__ float* dense_out(float* out0, int n0, float* out1, int n1, float* out2, int rows, int t, int r)
{
    if (r < n0) {
        return out0 + (size_t) t * n0 + r;
    }
    r -= n0;
    if (r < n1) {
        return out1 + (size_t) t * n1 + r;
    }
    return out2 + (size_t) t * (rows - n0 - n1) + (r - n1);
}

// ---- matvec (decode, small T): `split` warps per output row r ----------------------------------------
// grid (ceil(rows / (B/32/split)), Y), block B, split a power of two dividing B/32 (more than 1 for matrices
// with few rows, so that their rows are read by more warps at once). The warps of a row read its weights
// once per MAXT tokens and keep MAXT sums per lane: with T <= MAXT every weight byte is read once. Lanes
// take 16-byte pieces of the row (VEC values) when cols is a multiple of VEC and w, x are 16-byte aligned
// (then every row is); otherwise single values. x rows are read through the cache (every warp reads them).
// Block row y takes the chunks of MAXT tokens y, y + Y, ... (Y = ceil(T / MAXT) up to 65535: a matrix of few rows,
// the router, over a prefill batch fills the card instead of looping over the tokens in a few blocks).
// Each warp's sums go through a shuffle tree; with split > 1 the split partial sums are added in shared
// memory by the row's first warp, in warp order.
#define DENSE_MATVEC_MAXT 8

template <typename E>
__device__ void matvec(const typename E::T* __restrict__ w, const unsigned short* __restrict__ s, const float* __restrict__ bias, int hasBias,
                       const float* __restrict__ x, int T, int cols, int rows, float* out0, int n0, float* out1,
                       int n1, float* out2, int split)
{
    __shared__ float part[32][DENSE_MATVEC_MAXT];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int r = blockIdx.x * ((blockDim.x >> 5) / split) + warp / split;
    const int piece = warp % split; // this warp's share of the row: pieces piece, piece + split, ...
    const bool live = r < rows;     // no early return: every warp reaches the barriers
    const bool vec = cols % E::VEC == 0 && ((size_t) w & 15) == 0 && ((size_t) x & 15) == 0;
    const float b = hasBias && live ? bias[r] : 0.0f;
    for (int t0 = blockIdx.y * DENSE_MATVEC_MAXT; t0 < T; t0 += gridDim.y * DENSE_MATVEC_MAXT) {
        const int nt = min(DENSE_MATVEC_MAXT, T - t0);
        const float* xb = x + (size_t) t0 * cols;
        float acc[DENSE_MATVEC_MAXT];
        GOSS_PRAGMA(unroll)
        for (int t = 0; t < DENSE_MATVEC_MAXT; t++) {
            acc[t] = 0.0f;
        }
        if (live && vec) {
            const uint4* w4 = reinterpret_cast<const uint4*>(w + (size_t) r * cols);
            const int n4 = cols / E::VEC;
            GOSS_PRAGMA(unroll 2)
            for (int i = piece * 32 + lane; i < n4; i += 32 * split) {
                float f[E::VEC];
                const int c0 = i * E::VEC;
                E::unpack(w4[i], s, cols, r, c0, f);
                GOSS_PRAGMA(unroll)
                for (int t = 0; t < DENSE_MATVEC_MAXT; t++) {
                    if (t < nt) {
                        const float4* xt = reinterpret_cast<const float4*>(xb + (size_t) t * cols + c0);
                        GOSS_PRAGMA(unroll)
                        for (int j = 0; j < E::VEC / 4; j++) {
                            const float4 xv = xt[j];
                            acc[t] = fmaf(f[4 * j], xv.x, acc[t]);
                            acc[t] = fmaf(f[4 * j + 1], xv.y, acc[t]);
                            acc[t] = fmaf(f[4 * j + 2], xv.z, acc[t]);
                            acc[t] = fmaf(f[4 * j + 3], xv.w, acc[t]);
                        }
                    }
                }
            }
        } else if (live) {
            for (int c = piece * 32 + lane; c < cols; c += 32 * split) {
                const float wv = E::at(w, s, cols, r, c);
                GOSS_PRAGMA(unroll)
                for (int t = 0; t < DENSE_MATVEC_MAXT; t++) {
                    if (t < nt) {
                        acc[t] = fmaf(wv, xb[(size_t) t * cols + c], acc[t]);
                    }
                }
            }
        }
        GOSS_PRAGMA(unroll)
        for (int t = 0; t < DENSE_MATVEC_MAXT; t++) {
            if (t < nt) { // nt is the same in every lane: the whole warp shuffles, or none of it
                acc[t] = warp_sum(acc[t]);
            }
        }
        if (split == 1) {
            if (live && lane < nt) {
                float sum = 0.0f;
                GOSS_PRAGMA(unroll)
                for (int t = 0; t < DENSE_MATVEC_MAXT; t++) {
                    sum = t == lane ? acc[t] : sum;
                }
                *dense_out(out0, n0, out1, n1, out2, rows, t0 + lane, r) = sum + b;
            }
        } else {
            if (lane == 0) {
                GOSS_PRAGMA(unroll)
                for (int t = 0; t < DENSE_MATVEC_MAXT; t++) {
                    part[warp][t] = acc[t];
                }
            }
            __syncthreads();
            if (live && piece == 0 && lane < nt) {
                float sum = 0.0f;
                for (int p = 0; p < split; p++) {
                    sum += part[warp + p][lane];
                }
                *dense_out(out0, n0, out1, n1, out2, rows, t0 + lane, r) = sum + b;
            }
            __syncthreads(); // part is refilled by the next chunk of tokens
        }
    }
}

// ---- Q8_0 matvec for one token (decode): dense_matvec_q8_0 with T = 1 and cols <= DENSE_Q8_T1_MAXK -------
//   y[r] = sum_c (s[r, c/32] * q[r, c]) * x[c] + b[r]        (each product s * q exact, as Q8::at decodes it)
// Launch (DenseLauncher.q8DecodeShape): grid (min(ceil(rows / (W / S)), G), 1), G the blocks the multiprocessors keep
// resident, block 32 W, S = p.split warps per row (a power of two dividing W), dynamic shared memory
// 4 cols + 16 ceil(W / 4) bytes (x, then the warps' partial sums).
// Built to keep many weight bytes in flight: no per-token sums (matvec above keeps 8), x staged once per block in
// shared memory (the block then takes row groups g = blockIdx.x, g + gridDim.x, .. of W / S rows: warp w takes row
// g (W / S) + w / S, its piece w % S), and a row's codes read as 16-byte chunks (16 values, half a 32-value block),
// lane l of piece p taking chunks p 32 + l + 32 S k; DENSE_Q8_NL chunks per step, their codes and scales loaded
// before any of their arithmetic. The first step's loads are issued before x is staged. A code byte decodes without
// I2F: byte ^ 0x80 put under the exponent of 2^23 (one prmt) gives 2^23 + 128 + q, minus 2^23 + 128 is q exactly.
// Lane l reads its chunk's four float4 of x rotated by (l >> 1) & 3, so the 8 lanes of a shared-memory phase touch
// 8 different 16-byte bank groups. Each lane sums in a fixed order, the warp by its shuffle tree, the S pieces of
// a row by the row's first warp in piece order: the same result every run.
#define DENSE_Q8_NL 4         // chunks (16 bytes of codes each) per lane per step
#define DENSE_Q8_T1_MAXK 8192 // widest x staged (32 KiB; gpt-oss: 2880, 4096); wider take matvec<Q8> (DenseLauncher mirrors it)
#define DENSE_Q8_REGS 80       // registers per thread of dense_matvec_q8_0, both paths (see the entry point)

// acc += the 16 products of chunk c of the row (codes q, scale d) with x, x's float4 read in rotated order.
__device__ __forceinline__ float q8_chunk_dot(uint4 q, float d, const float4* __restrict__ x4, int c, int rot, float acc)
{
    unsigned int u0 = q.x, u1 = q.y, u2 = q.z, u3 = q.w; // word j: values 4j .. 4j + 3
    if (rot & 1) { // words rotated by rot: u_j = word (j + rot) & 3
        const unsigned int t = u0;
        u0 = u1; u1 = u2; u2 = u3; u3 = t;
    }
    if (rot & 2) {
        unsigned int t = u0;
        u0 = u2; u2 = t;
        t = u1; u1 = u3; u3 = t;
    }
    const unsigned int u[4] = {u0 ^ 0x80808080u, u1 ^ 0x80808080u, u2 ^ 0x80808080u, u3 ^ 0x80808080u};
    GOSS_PRAGMA(unroll)
    for (int j = 0; j < 4; j++) {
        const float4 xv = x4[4 * c + ((j + rot) & 3)];
        const float xs[4] = {xv.x, xv.y, xv.z, xv.w};
        GOSS_PRAGMA(unroll)
        for (int k = 0; k < 4; k++) {
            const float qf = __uint_as_float(__byte_perm(u[j], 0x4b000000u, 0x7440u + k)) - 8388736.0f; // q, exact
            acc = fmaf(d * qf, xs[k], acc);
        }
    }
    return acc;
}

// The lane's chunks c[j] = c0 + 32 S j (j < DENSE_Q8_NL, those below n16) of row r: codes and scales (F16 bits).
// Unaligned codes (never from CudaWeights' upload) are gathered byte by byte into the same words.
__device__ __forceinline__ void q8_load(const signed char* __restrict__ w, const unsigned short* __restrict__ s, size_t r, int n16,
                                        int c0, int stride, bool aligned, uint4 q[DENSE_Q8_NL], unsigned short e[DENSE_Q8_NL])
{
    const signed char* row = w + r * (size_t) n16 * 16;
    GOSS_PRAGMA(unroll)
    for (int j = 0; j < DENSE_Q8_NL; j++) {
        const int c = c0 + stride * j;
        q[j] = uint4{0u, 0u, 0u, 0u};
        e[j] = 0;
        if (c < n16) {
            if (aligned) {
                q[j] = reinterpret_cast<const uint4*>(row)[c];
            } else {
                unsigned int v[4] = {0u, 0u, 0u, 0u};
                for (int b = 0; b < 16; b++) {
                    v[b >> 2] |= (unsigned int) (unsigned char) row[16 * c + b] << (8 * (b & 3));
                }
                q[j] = uint4{v[0], v[1], v[2], v[3]};
            }
            e[j] = s[r * (size_t) (n16 / 2) + c / 2];
        }
    }
}

__device__ void matvec_q8_t1(const signed char* __restrict__ w, const unsigned short* __restrict__ s, const float* __restrict__ bias,
                             int hasBias, const float* __restrict__ x, int cols, int rows, float* out0, int n0, float* out1, int n1,
                             float* out2, int split)
{
    DYNAMIC_SHARED(float4, xs4); // cols / 4 float4 of x, then one partial sum per warp
    float* part = reinterpret_cast<float*>(xs4 + cols / 4);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int rowsPerBlock = (blockDim.x >> 5) / split;
    const int piece = warp % split;
    const int n16 = cols / 16;          // chunks per row (Q8_0: cols is a multiple of 32)
    const int stride = 32 * split;      // between a lane's chunks
    const int c0 = piece * 32 + lane;   // the lane's first chunk
    const int rot = (lane >> 1) & 3;
    const bool aligned = ((size_t) w & 15) == 0;
    uint4 q[DENSE_Q8_NL];
    unsigned short e[DENSE_Q8_NL];
    int r = blockIdx.x * rowsPerBlock + warp / split;
    if (r < rows) { // the first step's loads, in flight while x is staged
        q8_load(w, s, r, n16, c0, stride, aligned, q, e);
    }
    if (((size_t) x & 15) == 0) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
            xs4[i] = x4[i];
        }
    } else {
        float* xs = reinterpret_cast<float*>(xs4);
        for (int i = threadIdx.x; i < cols; i += blockDim.x) {
            xs[i] = x[i];
        }
    }
    __syncthreads();
    bool first = true; // q, e hold the first step of row r
    // Every warp of the block takes the same row groups (barriers below); rows past the matrix only wait.
    for (int g = blockIdx.x; g * rowsPerBlock < rows; g += gridDim.x) {
        r = g * rowsPerBlock + warp / split;
        const bool live = r < rows;
        float acc = 0.0f;
        for (int base = 0; base < n16; base += stride * DENSE_Q8_NL) { // steps: the same count in every thread
            const int cs = base + c0;
            if (!first && live) {
                q8_load(w, s, r, n16, cs, stride, aligned, q, e);
            }
            first = false;
            if (live) {
                GOSS_PRAGMA(unroll)
                for (int j = 0; j < DENSE_Q8_NL; j++) {
                    if (cs + stride * j < n16) {
                        acc = q8_chunk_dot(q[j], f16_to_float(e[j]), xs4, cs + stride * j, rot, acc);
                    }
                }
            }
        }
        acc = warp_sum(acc);
        const float b = hasBias && live ? bias[r] : 0.0f;
        if (split == 1) {
            if (live && lane == 0) {
                *dense_out(out0, n0, out1, n1, out2, rows, 0, r) = acc + b;
            }
        } else {
            if (lane == 0) {
                part[warp] = acc;
            }
            __syncthreads();
            if (live && piece == 0 && lane == 0) {
                float sum = 0.0f;
                for (int p = 0; p < split; p++) {
                    sum += part[warp + p];
                }
                *dense_out(out0, n0, out1, n1, out2, rows, 0, r) = sum + b;
            }
            __syncthreads(); // part is refilled by the next row group
        }
    }
}

// ---- gemm (prefill): one block per tile of TM tokens x TR output rows -----------------------------
// grid (ceil(rows / TR), min(ceil(T / TM), 65535)), block TM*TR/16 threads, each computing 4 tokens x
// 4 rows. The tile's x and W slices go through shared memory KB columns at a time (W decoded to float
// there, read in 16-byte pieces when cols is a multiple of VEC and w is aligned), so every weight is read
// once per TM tokens. Sums run over c ascending per output.
#define DENSE_GEMM_KB 16

template <typename E, int TM, int TR>
__device__ void gemm(const typename E::T* __restrict__ w, const unsigned short* __restrict__ s, const float* __restrict__ bias, int hasBias,
                     const float* __restrict__ x, int T, int cols, int rows, float* out0, int n0, float* out1,
                     int n1, float* out2)
{
    __shared__ float xs[DENSE_GEMM_KB][TM + 4];
    __shared__ float ws[DENSE_GEMM_KB][TR + 4];
    const int threads = TM * TR / 16;
    const int tid = threadIdx.x;
    const int tr = tid % (TR / 4); // this thread's rows r0 + tr + (TR/4)*j
    const int tt = tid / (TR / 4); // this thread's tokens m0 + tt + (TM/4)*i
    const int r0 = blockIdx.x * TR;
    const bool vec = cols % E::VEC == 0 && ((size_t) w & 15) == 0;
    for (int m0 = blockIdx.y * TM; m0 < T; m0 += gridDim.y * TM) {
        float acc[4][4];
        GOSS_PRAGMA(unroll)
        for (int i = 0; i < 4; i++) {
            GOSS_PRAGMA(unroll)
            for (int j = 0; j < 4; j++) {
                acc[i][j] = 0.0f;
            }
        }
        for (int k0 = 0; k0 < cols; k0 += DENSE_GEMM_KB) {
            __syncthreads(); // the previous slice's readers are done
            for (int i = tid; i < TM * DENSE_GEMM_KB; i += threads) {
                const int m = i / DENSE_GEMM_KB, k = i % DENSE_GEMM_KB;
                const int t = m0 + m, c = k0 + k;
                xs[k][m] = t < T && c < cols ? x[(size_t) t * cols + c] : 0.0f;
            }
            if (vec) {
                // 16-byte pieces: a piece lies wholly inside or wholly past the row (cols % VEC == 0)
                for (int i = tid; i < TR * (DENSE_GEMM_KB / E::VEC); i += threads) {
                    const int n = i / (DENSE_GEMM_KB / E::VEC), k = i % (DENSE_GEMM_KB / E::VEC) * E::VEC;
                    const int r = r0 + n, c = k0 + k;
                    float f[E::VEC];
                    if (r < rows && c < cols) {
                        E::unpack(reinterpret_cast<const uint4*>(w + (size_t) r * cols + c)[0], s, cols, r, c, f);
                    } else {
                        for (int j = 0; j < E::VEC; j++) {
                            f[j] = 0.0f;
                        }
                    }
                    for (int j = 0; j < E::VEC; j++) {
                        ws[k + j][n] = f[j];
                    }
                }
            } else {
                for (int i = tid; i < TR * DENSE_GEMM_KB; i += threads) {
                    const int n = i / DENSE_GEMM_KB, k = i % DENSE_GEMM_KB;
                    const int r = r0 + n, c = k0 + k;
                    ws[k][n] = r < rows && c < cols ? E::at(w, s, cols, r, c) : 0.0f;
                }
            }
            __syncthreads();
            const int kn = min(DENSE_GEMM_KB, cols - k0);
            GOSS_PRAGMA(unroll 4)
            for (int k = 0; k < kn; k++) {
                float a[4], bw[4];
                GOSS_PRAGMA(unroll)
                for (int i = 0; i < 4; i++) {
                    a[i] = xs[k][tt + (TM / 4) * i];
                    bw[i] = ws[k][tr + (TR / 4) * i];
                }
                GOSS_PRAGMA(unroll)
                for (int i = 0; i < 4; i++) {
                    GOSS_PRAGMA(unroll)
                    for (int j = 0; j < 4; j++) {
                        acc[i][j] = fmaf(bw[j], a[i], acc[i][j]);
                    }
                }
            }
        }
        GOSS_PRAGMA(unroll)
        for (int i = 0; i < 4; i++) {
            const int t = m0 + tt + (TM / 4) * i;
            if (t >= T) {
                continue;
            }
            GOSS_PRAGMA(unroll)
            for (int j = 0; j < 4; j++) {
                const int r = r0 + tr + (TR / 4) * j;
                if (r < rows) {
                    *dense_out(out0, n0, out1, n1, out2, rows, t, r) = acc[i][j] + (hasBias ? bias[r] : 0.0f);
                }
            }
        }
    }
}

// ---- gemm on tensor cores (prefill, BF16 weights): dense_gemm_mma_bf16 ------------------------------------
// The gemm above as a BF16 product with FP32 sums (wmma m16n16k16), compute capability 8.0 and up (GOSS_MMA; a
// trap stub on sm_75, which DenseLauncher never picks): one block per tile of 32 tokens x 128 output rows, grid
// (ceil(rows / 128), min(ceil(T / 32), 65535)), block 256 threads (8 warps; warp w owns rows 16w .. 16w + 15 and
// both 16-token halves). Per step of 64 columns: the weights copied as they are (BF16) into a shared tile, the
// activations split into hi + lo BF16 (bf16_split, common.cuh: about 16 of their 24 mantissa bits, relative error
// <= 2^-16 per product), two mma per fragment. Rows, tokens and columns past the matrix are zeros in the tiles.
// Then the FP32 sums go through shared memory (where the weights were) to dense_out, plus the bias.
// Shared memory: 2 x 32 x 72 BF16 activations + 128 x 72 BF16 weights / 128 x 36 FP32 sums: 27.6 KB.
#define DENSE_MMA_TM 32
#define DENSE_MMA_TR 128
#define DENSE_MMA_KC 64
#define DENSE_MMA_KP (DENSE_MMA_KC + 8) // BF16 tile pitch: a multiple of 8 elements; +8 spreads rows over banks
#define DENSE_MMA_OP (DENSE_MMA_TM + 4) // FP32 sums' pitch: a multiple of 4
#define DENSE_MMA_THREADS 256

struct alignas(32) DenseMmaTiles { // every wmma pointer 32-byte aligned
    __nv_bfloat16 xhi[DENSE_MMA_TM * DENSE_MMA_KP];
    __nv_bfloat16 xlo[DENSE_MMA_TM * DENSE_MMA_KP];
    float wo[DENSE_MMA_TR * DENSE_MMA_OP]; // the BF16 weights [128][KP] during the steps, then the sums [128][OP]
};

__device__ void gemm_mma_bf16(const unsigned short* __restrict__ w, const float* __restrict__ bias, int hasBias,
                              const float* __restrict__ x, int T, int cols, int rows, float* out0, int n0, float* out1,
                              int n1, float* out2)
{
#ifdef GOSS_MMA
    namespace wmma = nvcuda::wmma;
    static_assert(DENSE_MMA_TR * DENSE_MMA_KP * 2 <= DENSE_MMA_TR * DENSE_MMA_OP * 4, "the weights fit where the sums go");
    __shared__ DenseMmaTiles t;
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int r0 = blockIdx.x * DENSE_MMA_TR;
    unsigned short* wbits = reinterpret_cast<unsigned short*>(t.wo); // BF16 weights by their bits
    const __nv_bfloat16* ws = reinterpret_cast<const __nv_bfloat16*>(t.wo);
    for (int m0 = blockIdx.y * DENSE_MMA_TM; m0 < T; m0 += gridDim.y * DENSE_MMA_TM) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> c[2];
        wmma::fill_fragment(c[0], 0.0f);
        wmma::fill_fragment(c[1], 0.0f);
        const int nt = min(DENSE_MMA_TM, T - m0);
        for (int k0 = 0; k0 < cols; k0 += DENSE_MMA_KC) {
            const int kc = min(DENSE_MMA_KC, cols - k0);
            __syncthreads(); // the previous step's (or tile's) readers are done
            for (int i = tid; i < DENSE_MMA_TM * DENSE_MMA_KC; i += DENSE_MMA_THREADS) {
                const int m = i / DENSE_MMA_KC, k = i % DENSE_MMA_KC;
                const float v = m < nt && k < kc ? x[(size_t) (m0 + m) * cols + k0 + k] : 0.0f;
                bf16_split(v, t.xhi[m * DENSE_MMA_KP + k], t.xlo[m * DENSE_MMA_KP + k]);
            }
            for (int i = tid; i < DENSE_MMA_TR * DENSE_MMA_KC; i += DENSE_MMA_THREADS) {
                const int n = i / DENSE_MMA_KC, k = i % DENSE_MMA_KC;
                const int r = r0 + n;
                wbits[n * DENSE_MMA_KP + k] = r < rows && k < kc ? w[(size_t) r * cols + k0 + k] : (unsigned short) 0;
            }
            __syncthreads();
            mma_rows_by_split_tokens(c, ws + warp * 16 * DENSE_MMA_KP, t.xhi, t.xlo, DENSE_MMA_KP, kc, nt);
        }
        __syncthreads(); // every warp is done with the weights: the sums go where they were
        wmma::store_matrix_sync(t.wo + warp * 16 * DENSE_MMA_OP, c[0], DENSE_MMA_OP, wmma::mem_row_major);
        wmma::store_matrix_sync(t.wo + warp * 16 * DENSE_MMA_OP + 16, c[1], DENSE_MMA_OP, wmma::mem_row_major);
        __syncthreads();
        for (int i = tid; i < DENSE_MMA_TM * DENSE_MMA_TR; i += DENSE_MMA_THREADS) {
            const int m = i / DENSE_MMA_TR, n = i % DENSE_MMA_TR; // consecutive threads: consecutive rows of one token
            const int r = r0 + n;
            if (m < nt && r < rows) {
                *dense_out(out0, n0, out1, n1, out2, rows, m0 + m, r) = t.wo[n * DENSE_MMA_OP + m] + (hasBias ? bias[r] : 0.0f);
            }
        }
    }
#else
    __trap(); // sm_75: DenseLauncher picks this kernel only on compute capability 8.0 and up
#endif
}

// ---- entry points ---------------------------------------------------------------------------------
// The scalars of every dense_matvec_* and dense_gemm_* kernel (the GEMM does not read split).
struct DenseParams {
    int fmt;     // unread: the entry points are one per format
    int hasBias; // 0: no bias
    int tokens;  // T: rows of x
    int cols;
    int rows;
    int xRow0;   // x's first row
    int n0;      // rows of y going to out0
    int n1;      // the next n1 to out1, the rest to out2
    int split;   // matvec: warps per row
    int vec;     // unread (dense.cl's vector switch)
    long long rowBytes; // unread (dense.cl's row stride)
};

#define DENSE_LINEAR_ARGS(E)                                                                                  \
    (const E::T* __restrict__ w, const unsigned short* __restrict__ s, const float* __restrict__ bias,        \
     const float* __restrict__ x, float* out0, float* out1, float* out2, const DenseParams p)
#define DENSE_GEMM_ENTRY(name, E, TM, TR)                                                                     \
    extern "C" __global__ void name DENSE_LINEAR_ARGS(E)                                                      \
    {                                                                                                         \
        gemm<E, TM, TR>(w, s, bias, p.hasBias, x + (size_t) p.xRow0 * p.cols, p.tokens, p.cols, p.rows, out0, p.n0, out1, p.n1, out2);   \
    }
#define DENSE_MATVEC_ENTRY(suffix, E)                                                                         \
    extern "C" __global__ void dense_matvec_##suffix DENSE_LINEAR_ARGS(E)                                     \
    {                                                                                                         \
        matvec<E>(w, s, bias, p.hasBias, x + (size_t) p.xRow0 * p.cols, p.tokens, p.cols, p.rows, out0, p.n0, out1, p.n1, out2, p.split); \
    }
#define DENSE_GEMM_ENTRIES(suffix, E)                                                                         \
    DENSE_GEMM_ENTRY(dense_gemm_##suffix##_32x64, E, 32, 64)                                                  \
    DENSE_GEMM_ENTRY(dense_gemm_##suffix##_64x64, E, 64, 64)                                                  \
    DENSE_GEMM_ENTRY(dense_gemm_##suffix##_32x128, E, 32, 128)                                                \
    DENSE_GEMM_ENTRY(dense_gemm_##suffix##_64x128, E, 64, 128)

DENSE_MATVEC_ENTRY(bf16, Bf16)
DENSE_GEMM_ENTRIES(bf16, Bf16)
extern "C" __global__ void dense_gemm_mma_bf16 DENSE_LINEAR_ARGS(Bf16)
{
    (void) s; // BF16 has no scales
    gemm_mma_bf16(w, bias, p.hasBias, x + (size_t) p.xRow0 * p.cols, p.tokens, p.cols, p.rows, out0, p.n0, out1, p.n1, out2);
}
DENSE_MATVEC_ENTRY(f16, F16)
DENSE_GEMM_ENTRIES(f16, F16)
DENSE_MATVEC_ENTRY(f32, F32)
DENSE_GEMM_ENTRIES(f32, F32)

// Q8_0: one token (decode) takes matvec_q8_t1 (DenseLauncher gives it its grid, split and shared memory), more
// tokens or wider rows matvec<Q8>. Registers capped at DENSE_Q8_REGS (ptxas 13.0: matvec<Q8> alone takes 72,
// matvec_q8_t1 alone 78, together 96 unbounded; 80 spills nothing on sm_75/80/90, 72 spills 8 bytes on sm_90):
// three 8-warp blocks an SM (3 x 256 x 80 <= 65536), 24 warps, as before; also when the driver's JIT compiles it.
extern "C" GOSS_MAXNREG(DENSE_Q8_REGS) __global__ void dense_matvec_q8_0 DENSE_LINEAR_ARGS(Q8)
{
    const float* xr = x + (size_t) p.xRow0 * p.cols;
    if (p.tokens == 1 && p.cols <= DENSE_Q8_T1_MAXK) {
        matvec_q8_t1(w, s, bias, p.hasBias, xr, p.cols, p.rows, out0, p.n0, out1, p.n1, out2, p.split);
    } else {
        matvec<Q8>(w, s, bias, p.hasBias, xr, p.tokens, p.cols, p.rows, out0, p.n0, out1, p.n1, out2, p.split);
    }
}
DENSE_GEMM_ENTRIES(q8_0, Q8)
