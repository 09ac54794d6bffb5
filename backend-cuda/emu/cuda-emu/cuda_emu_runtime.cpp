/*
 * The emulated CUDA device: runs a launch of a kernel compiled from backend-cuda/kernels through cuda_emu.h (see
 * cuda_kernels.cpp) on the fiber scheduler shared with the Metal emulator (gpu-device/emu/fibers.h). Blocks are
 * spread over a few OS threads (GOSS_EMU_THREADS, default: CPUs, at most 4); inside a block every thread is a
 * fiber. This file adds the CUDA side: the registry, thread/block indices, dynamic shared memory (sized exactly,
 * a PROT_NONE guard page right behind it, so an overrun faults instead of reading a neighbour's data) and the
 * warp shuffles done at the rendezvous. GOSS_EMU_ORDER / GOSS_EMU_POISON (fibers.h) are read at each launch;
 * poisoning covers the dynamic shared memory (static __shared__ arrays keep what the previous block left).
 */
#include "cuda_emu_abi.h"
#include "cuda_emu.h"
#include "fibers.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace cuemu {
namespace {

struct Kernel {
    void *fn;
    Trampoline call;
    int nparams;
    size_t sizes[kMaxParams];
};

std::map<std::string, Kernel> &registry() {
    static std::map<std::string, Kernel> r;
    return r;
}

struct Launch {
    const char *name;
    const Kernel *k;
    uint3 grid, block;
    unsigned shared;
    void **params;
};

/* Per OS thread: the launch and block now running, and this thread's dynamic shared memory. */
struct BlockState {
    const Launch *launch = nullptr;
    uint3 idx{0, 0, 0};
    unsigned char *region = nullptr; // mmap'd: pages for the buffer, then one guard page
    size_t regionBytes = 0, bufferBytes = (size_t) -1;
    unsigned char *dyn = nullptr;

    ~BlockState() {
        if (region) munmap(region, regionBytes);
    }
    /* Places a buffer of exactly `bytes` (rounded up to 16 for alignment) so that it ends at the guard page. */
    std::string sizeShared(unsigned bytes) {
        size_t b = ((size_t) bytes + 15) & ~(size_t) 15;
        if (b == bufferBytes) return "";
        size_t page = (size_t) sysconf(_SC_PAGESIZE), pages = (b + page - 1) / page * page;
        if (region) munmap(region, regionBytes);
        regionBytes = pages + page;
        void *r = mmap(nullptr, regionBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r == MAP_FAILED) { region = nullptr; bufferBytes = (size_t) -1; return "cannot map dynamic shared memory"; }
        region = (unsigned char *) r;
        if (mprotect(region + pages, page, PROT_NONE) != 0) return "cannot protect the shared memory guard page";
        dyn = region + pages - b;
        bufferBytes = b;
        return "";
    }
};
thread_local BlockState t_block;
thread_local std::string t_error;

/* The exchange of __shfl_*_sync at the rendezvous: lane i reads lane src(i) of its width-wide segment. */
std::string resolveShuffle(gpuemu::WarpOp *const lanes[gpuemu::kWarp], uint32_t mask) {
    int first = __builtin_ctz(mask);
    int op = lanes[first]->op;
    if (op == SYNCWARP) return "";
    for (int i = 0; i < 32; i++) {
        if (!(mask >> i & 1u)) continue;
        const gpuemu::WarpOp &o = *lanes[i];
        int w = (int) o.arg2, base = i & ~(w - 1), a = (int) o.arg, src = i;
        if (op == SHFL_IDX) src = base + (a & (w - 1));
        else if (op == SHFL_UP) src = i - a >= base ? i - a : i;
        else if (op == SHFL_DOWN) src = i + a < base + w ? i + a : i;
        else if (op == SHFL_XOR) src = (i ^ a) < base + w ? (i ^ a) : i;
        if (src < 0 || src > 31 || !(mask >> src & 1u))
            return "lane " + std::to_string(i) + " reads lane " + std::to_string(src) + ", which the mask does not name";
        lanes[i]->result = lanes[src]->bits;
    }
    return "";
}

const gpuemu::Words kWords{"block", "__syncthreads", "warp"};

/* The running block, found through the fiber (no thread_local lookup in the kernels' hot paths). */
inline BlockState &cur() { return *(BlockState *) gpuemu::groupArg(); }

void runThread(unsigned, void *arg) {
    const Launch &l = *((BlockState *) arg)->launch;
    l.k->call(l.k->fn, l.params);
}

} // namespace

uint3 thread_idx() {
    unsigned i = gpuemu::threadIndex();
    const uint3 &b = cur().launch->block;
    return b.y == 1 && b.z == 1 ? uint3{i, 0, 0} : uint3{i % b.x, i / b.x % b.y, i / (b.x * b.y)};
}
uint3 block_idx() { return cur().idx; }
uint3 block_dim() { return cur().launch->block; }
uint3 grid_dim() { return cur().launch->grid; }
void *dynamic_shared() { return cur().dyn; }
void syncthreads() { gpuemu::barrier(); }
unsigned linear_thread() { return gpuemu::threadIndex(); }
void fail(const char *why) { gpuemu::fault(why); }

uint32_t warp_op(int op, unsigned mask, uint32_t bits, int type, unsigned arg, int width) {
    if (width < 1 || width > 32 || (width & (width - 1)) != 0)
        gpuemu::fault("a warp shuffle's width " + std::to_string(width) + " is not a power of two in 1..32");
    if (mask == 0) gpuemu::fault("a warp function with an empty mask");
    gpuemu::WarpOp w;
    w.op = op;
    w.type = type;
    w.mask = mask;
    w.bits = bits;
    w.arg = arg;
    w.arg2 = (uint32_t) width;
    return gpuemu::warpOp(w);
}

void register_kernel(const char *name, void *fn, Trampoline call, int nparams, const size_t *sizes) {
    Kernel k{fn, call, nparams, {}};
    for (int i = 0; i < nparams; i++) k.sizes[i] = sizes[i];
    registry()[name] = k;
}

} // namespace cuemu

using namespace cuemu;

extern "C" {

int goss_cuemu_kernel(const char *name, int *nparams, size_t *sizes) {
    auto it = registry().find(name ? name : "");
    if (it == registry().end()) return -1;
    *nparams = it->second.nparams;
    for (int i = 0; i < it->second.nparams; i++) sizes[i] = it->second.sizes[i];
    return 0;
}

int goss_cuemu_launch(const char *name, const unsigned grid[3], const unsigned block[3], unsigned sharedMemBytes,
                      void **kernelParams) {
    auto it = registry().find(name ? name : "");
    std::string err;
    if (it == registry().end()) {
        err = std::string("no emulated kernel '") + (name ? name : "null") + "'";
    } else {
        Launch l{name, &it->second, uint3{grid[0], grid[1], grid[2]}, uint3{block[0], block[1], block[2]},
                 sharedMemBytes, kernelParams};
        uint64_t gx = grid[0], gxy = gx * grid[1], n = gxy * grid[2];
        unsigned threads = block[0] * block[1] * block[2];
        const gpuemu::Options opt = gpuemu::readOptions();
        if (!opt.error.empty()) err = std::string("kernel ") + name + ": " + opt.error;
        else err = gpuemu::parallelFor(n, gpuemu::defaultThreads(), [&](uint64_t b) -> std::string {
            BlockState &s = t_block;
            std::string e = s.sizeShared(sharedMemBytes);
            if (!e.empty()) return std::string("kernel ") + name + ": " + e;
            // static __shared__ arrays are not poisoned: `static thread_local` leaves no hook to find them
            if (opt.poison) gpuemu::poison(s.dyn, s.bufferBytes);
            s.launch = &l;
            s.idx = uint3{(unsigned) (b % gx), (unsigned) (b % gxy / gx), (unsigned) (b / gxy)};
            std::string where = std::string("kernel ") + name + ", block (" + std::to_string(s.idx.x) + "," +
                                std::to_string(s.idx.y) + "," + std::to_string(s.idx.z) + ")";
            return gpuemu::runGroup(threads, runThread, &s, resolveShuffle, kWords, where, opt, b);
        });
    }
    t_error = err;
    if (err.empty()) return 0;
    std::fprintf(stderr, "emulated CUDA: %s\n", err.c_str());
    return -1;
}

const char *goss_cuemu_last_error(void) { return t_error.c_str(); }

} // extern "C"
