/*
 * The emulated Metal device: goss_metal.h implemented on the CPU for Linux CI.
 *
 * Kernels are the kernels/metal sources compiled as C++ through metal_emu.h (see emu_kernels.cpp) and
 * registered by name. A dispatch runs its threadgroups one after another on the calling thread; inside a
 * threadgroup every thread is a ucontext fiber with its own stack. A scheduler runs each runnable fiber
 * until it finishes or blocks at a threadgroup barrier or a simdgroup operation (32-wide simdgroups:
 * lane = thread index % 32). When nothing is runnable it first completes simdgroup operations whose
 * every live lane is waiting at the same operation, else releases a threadgroup barrier when every
 * thread of the threadgroup is waiting at one; if neither applies the dispatch fails with an error that
 * names the kernel and what was inconsistent (the GPU would hang or be undefined there).
 */
#include "goss_metal.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#include "metal_emu.h"
// the runtime itself is ordinary C++: drop the address-space macros the kernels need
#undef device
#undef constant
#undef thread

namespace {

thread_local std::string g_error;

void setError(const std::string &e) { g_error = e; }

std::map<std::string, void (*)()> &registry() {
    static std::map<std::string, void (*)()> r;
    return r;
}

constexpr uint kMaxThreads = 1024;
constexpr uint kSimdWidth = 32;
constexpr size_t kStackBytes = 128 * 1024;
constexpr int kMaxBindings = 31;

} // namespace

struct goss_mtl_device {
    std::string name = "goss emulated Metal device (CPU fibers, 32-wide simdgroups)";
};
struct goss_mtl_queue {
    goss_mtl_device *dev;
};
struct goss_mtl_library {
    goss_mtl_device *dev;
};
struct goss_mtl_pipeline {
    std::string name;
    void (*fn)();
};
struct goss_mtl_buffer {
    unsigned char *data;
    uint64_t length;
    bool owned;
    bool isPrivate;
};

namespace {
struct Binding {
    goss_mtl_buffer *buf = nullptr;
    uint64_t offset = 0;
    int bytesIndex = -1; // into Cmd::bytes
};
struct Command {
    bool isCopy = false;
    goss_mtl_pipeline *pipeline = nullptr;
    Binding bind[kMaxBindings];
    uint32_t tgMem[kMaxBindings] = {};
    uint32_t groups[3] = {}, threads[3] = {};
    goss_mtl_buffer *src = nullptr, *dst = nullptr;
    uint64_t srcOff = 0, dstOff = 0, len = 0;
};
} // namespace

struct goss_mtl_cmd {
    goss_mtl_queue *queue;
    goss_mtl_pipeline *pipeline = nullptr;
    Binding bind[kMaxBindings];
    uint32_t tgMem[kMaxBindings] = {};
    std::vector<std::vector<unsigned char>> bytes;
    std::vector<Command> commands;
    std::string recordError;
    double seconds = 0;
};

// ---- the fiber scheduler ----------------------------------------------------------------------------
namespace {
enum State { RUNNABLE, AT_BARRIER, AT_SIMD, DONE, FAULTED };

struct Fiber {
    ucontext_t uc;
    unsigned char *stack = nullptr;
    emu::ThreadContext tc;
    State state = DONE;
    int simdOp = 0, simdType = 0;
    uint32_t simdBits = 0, simdArg = 0, simdResult = 0;
};

struct Exec {
    ucontext_t scheduler;
    std::vector<Fiber> fibers;
    Fiber *current = nullptr;
    void (*kernel)() = nullptr;
    void *bindings[kMaxBindings] = {};
    std::vector<unsigned char> tgMemory[kMaxBindings];
    std::string fault; // set by a fiber that cannot go on (an unbound [[buffer(i)]]); it is never resumed

    ~Exec() {
        for (Fiber &f : fibers)
            if (f.stack) munmap(f.stack, kStackBytes);
    }
};

thread_local Exec *g_exec = nullptr;

Exec &exec() {
    static thread_local Exec e;
    return e;
}

void fiberEntry() {
    Exec &e = *g_exec;
    e.kernel();
    e.current->state = DONE;
    // returning resumes uc_link (the scheduler)
}

void yieldToScheduler() {
    Exec &e = *g_exec;
    swapcontext(&e.current->uc, &e.scheduler);
}

float asF(uint32_t b) { return emu::from<float>(b); }

uint32_t combine(int op, int type, uint32_t a, uint32_t b) {
    switch (type) {
    case emu::T_FLOAT: {
        float x = asF(a), y = asF(b);
        float r = op == emu::OP_SUM ? x + y : op == emu::OP_MAX ? std::fmax(x, y) : std::fmin(x, y);
        return emu::bits(r);
    }
    case emu::T_INT: {
        int x = (int) a, y = (int) b;
        int r = op == emu::OP_SUM ? (int) ((uint32_t) x + (uint32_t) y) : op == emu::OP_MAX ? (x > y ? x : y) : (x < y ? x : y);
        return (uint32_t) r;
    }
    default:
        return op == emu::OP_SUM ? a + b : op == emu::OP_MAX ? (a > b ? a : b) : (a < b ? a : b);
    }
}

/* Runs one threadgroup; returns an empty string or an error. */
std::string runThreadgroup(Exec &e, uint tgIndex, uint nThreads, const char *kernelName) {
    for (uint t = 0; t < nThreads; t++) {
        Fiber &f = e.fibers[t];
        f.tc = emu::ThreadContext{t, tgIndex, nThreads, tgIndex * nThreads + t, t % kSimdWidth, t / kSimdWidth};
        f.state = RUNNABLE;
        getcontext(&f.uc);
        f.uc.uc_stack.ss_sp = f.stack;
        f.uc.uc_stack.ss_size = kStackBytes;
        f.uc.uc_link = &e.scheduler;
        makecontext(&f.uc, fiberEntry, 0);
    }
    uint nSimd = (nThreads + kSimdWidth - 1) / kSimdWidth;
    for (;;) {
        bool ran = false;
        for (uint t = 0; t < nThreads; t++) {
            Fiber &f = e.fibers[t];
            if (f.state != RUNNABLE) continue;
            e.current = &f;
            swapcontext(&e.scheduler, &f.uc);
            if (f.state == FAULTED) return std::string("kernel ") + kernelName + ": " + e.fault;
            ran = true;
        }
        if (ran) continue;
        uint done = 0, atBarrier = 0, atSimd = 0;
        for (uint t = 0; t < nThreads; t++) {
            State s = e.fibers[t].state;
            done += s == DONE;
            atBarrier += s == AT_BARRIER;
            atSimd += s == AT_SIMD;
        }
        if (done == nThreads) return "";
        bool released = false;
        for (uint s = 0; s < nSimd && atSimd > 0; s++) {
            uint first = s * kSimdWidth, last = first + kSimdWidth < nThreads ? first + kSimdWidth : nThreads;
            uint waiting = 0;
            for (uint t = first; t < last; t++) waiting += e.fibers[t].state == AT_SIMD;
            if (waiting == 0) continue;
            if (waiting != last - first) {
                // some lanes of this simdgroup wait at a simd op while others are elsewhere: only an error
                // when those others can never arrive (finished, or parked at a threadgroup barrier)
                bool othersStuck = true;
                for (uint t = first; t < last; t++)
                    if (e.fibers[t].state == RUNNABLE) othersStuck = false;
                if (othersStuck)
                    return std::string("kernel ") + kernelName + ": simdgroup " + std::to_string(s) + " of threadgroup " +
                           std::to_string(tgIndex) + ": a simdgroup function was reached by only " + std::to_string(waiting) +
                           " of its " + std::to_string(last - first) + " lanes (divergent simdgroup operation)";
                continue;
            }
            const Fiber &f0 = e.fibers[first];
            for (uint t = first; t < last; t++)
                if (e.fibers[t].simdOp != f0.simdOp || e.fibers[t].simdType != f0.simdType ||
                    (f0.simdOp == emu::OP_SHUFFLE_DOWN && e.fibers[t].simdArg != f0.simdArg))
                    return std::string("kernel ") + kernelName + ": lanes of simdgroup " + std::to_string(s) +
                           " wait at different simdgroup functions";
            if (f0.simdOp == emu::OP_SHUFFLE_DOWN) {
                for (uint t = first; t < last; t++) {
                    uint src = t + f0.simdArg;
                    e.fibers[t].simdResult = src < last ? e.fibers[src].simdBits : e.fibers[t].simdBits;
                }
            } else {
                uint32_t acc = f0.simdBits;
                for (uint t = first + 1; t < last; t++) acc = combine(f0.simdOp, f0.simdType, acc, e.fibers[t].simdBits);
                for (uint t = first; t < last; t++) e.fibers[t].simdResult = acc;
            }
            for (uint t = first; t < last; t++) e.fibers[t].state = RUNNABLE;
            released = true;
        }
        if (released) continue;
        if (atBarrier == nThreads) {
            for (uint t = 0; t < nThreads; t++) e.fibers[t].state = RUNNABLE;
            continue;
        }
        return std::string("kernel ") + kernelName + ", threadgroup " + std::to_string(tgIndex) + ": deadlock: " +
               std::to_string(atBarrier) + " threads wait at threadgroup_barrier, " + std::to_string(atSimd) +
               " at simdgroup functions, " + std::to_string(done) + " of " + std::to_string(nThreads) +
               " have returned (every thread must reach each barrier)";
    }
}

std::string runDispatch(goss_mtl_cmd *c, Command &cmd) {
    Exec &e = exec();
    g_exec = &e;
    uint nThreads = cmd.threads[0], nGroups = cmd.groups[0];
    if (cmd.groups[1] != 1 || cmd.groups[2] != 1 || cmd.threads[1] != 1 || cmd.threads[2] != 1)
        return "kernel " + cmd.pipeline->name + ": the emulator supports 1-D dispatches only";
    if (nThreads == 0 || nThreads > kMaxThreads)
        return "kernel " + cmd.pipeline->name + ": " + std::to_string(nThreads) + " threads per threadgroup (1.." +
               std::to_string(kMaxThreads) + ")";
    while (e.fibers.size() < nThreads) {
        e.fibers.emplace_back();
        void *s = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (s == MAP_FAILED) return "cannot allocate fiber stacks";
        e.fibers.back().stack = (unsigned char *) s;
    }
    for (int i = 0; i < kMaxBindings; i++) {
        Binding &b = cmd.bind[i];
        if (b.bytesIndex >= 0) e.bindings[i] = c->bytes[b.bytesIndex].data();
        else if (b.buf) e.bindings[i] = b.buf->data + b.offset;
        else e.bindings[i] = nullptr;
        e.tgMemory[i].assign(cmd.tgMem[i], 0);
    }
    e.kernel = cmd.pipeline->fn;
    for (uint g = 0; g < nGroups; g++) {
        std::string err = runThreadgroup(e, g, nThreads, cmd.pipeline->name.c_str());
        if (!err.empty()) return err;
    }
    return "";
}
} // namespace

namespace emu {
const ThreadContext &ctx() { return g_exec->current->tc; }
/* Abandons the running fiber (it never resumes; its stack is reused by the next dispatch) and fails the dispatch. */
[[noreturn]] static void fault(const std::string &why) {
    g_exec->fault = why;
    g_exec->current->state = FAULTED;
    yieldToScheduler();
    std::abort(); // unreachable: a faulted fiber is never resumed
}
void *binding(uint index) {
    void *p = index < (uint) kMaxBindings ? g_exec->bindings[index] : nullptr;
    if (!p) fault("[[buffer(" + std::to_string(index) + ")]] is not bound");
    return p;
}
void *threadgroup_binding(uint index) {
    if (index >= (uint) kMaxBindings || g_exec->tgMemory[index].empty())
        fault("[[threadgroup(" + std::to_string(index) + ")]] has no threadgroup memory (goss_mtl_cmd_set_threadgroup_memory)");
    return g_exec->tgMemory[index].data();
}
void barrier() {
    g_exec->current->state = AT_BARRIER;
    yieldToScheduler();
}
uint32_t simd_op(int op, uint32_t bits, int type, uint32_t arg) {
    Fiber *f = g_exec->current;
    f->simdOp = op;
    f->simdType = type;
    f->simdBits = bits;
    f->simdArg = arg;
    f->state = AT_SIMD;
    yieldToScheduler();
    return f->simdResult;
}
void registerKernel(const char *name, void (*fn)()) { registry()[name] = fn; }
} // namespace emu

// ---- the C ABI ---------------------------------------------------------------------------------------
extern "C" {

int32_t goss_mtl_abi_version(void) { return GOSS_MTL_ABI_VERSION; }
const char *goss_mtl_last_error(void) { return g_error.c_str(); }

goss_mtl_device *goss_mtl_device_create(void) { return new goss_mtl_device(); }
const char *goss_mtl_device_name(goss_mtl_device *dev) { return dev->name.c_str(); }
uint64_t goss_mtl_device_memory(goss_mtl_device *) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t) pages * (uint64_t) page / 2 : (uint64_t) 4 << 30;
}
int32_t goss_mtl_device_is_emulated(goss_mtl_device *) { return 1; }
void goss_mtl_device_release(goss_mtl_device *dev) { delete dev; }

goss_mtl_queue *goss_mtl_queue_create(goss_mtl_device *dev) { return new goss_mtl_queue{dev}; }
void goss_mtl_queue_release(goss_mtl_queue *q) { delete q; }

goss_mtl_library *goss_mtl_library_from_source(goss_mtl_device *dev, const char *source) {
    // Every KERNEL(name) the source declares must have been compiled into this library at build time.
    std::string s(source ? source : "");
    size_t pos = 0;
    int found = 0;
    while ((pos = s.find("\nKERNEL(", pos)) != std::string::npos) {
        pos += 8;
        size_t end = s.find(')', pos);
        std::string name = s.substr(pos, end - pos);
        if (!registry().count(name)) {
            setError("emulated Metal: kernel '" + name + "' is in the source but was not compiled into the emulator "
                     "(rebuild native/ so the emulator matches kernels/metal)");
            return nullptr;
        }
        found++;
    }
    if (found == 0) {
        setError("emulated Metal: the source declares no KERNEL(...) functions");
        return nullptr;
    }
    return new goss_mtl_library{dev};
}
goss_mtl_library *goss_mtl_library_from_file(goss_mtl_device *, const char *path) {
    setError(std::string("emulated Metal cannot load a metallib (") + (path ? path : "null") + "); use library_from_source");
    return nullptr;
}
void goss_mtl_library_release(goss_mtl_library *lib) { delete lib; }

goss_mtl_pipeline *goss_mtl_pipeline_create(goss_mtl_library *, const char *name) {
    auto it = registry().find(name);
    if (it == registry().end()) {
        setError(std::string("no kernel function '") + name + "' in the library");
        return nullptr;
    }
    return new goss_mtl_pipeline{name, it->second};
}
uint32_t goss_mtl_pipeline_max_threads(goss_mtl_pipeline *) { return kMaxThreads; }
uint32_t goss_mtl_pipeline_simd_width(goss_mtl_pipeline *) { return kSimdWidth; }
void goss_mtl_pipeline_release(goss_mtl_pipeline *p) { delete p; }

goss_mtl_buffer *goss_mtl_buffer_new(goss_mtl_device *, uint64_t length, int32_t storage) {
    if (storage != GOSS_MTL_STORAGE_SHARED && storage != GOSS_MTL_STORAGE_PRIVATE) {
        setError("unknown storage mode " + std::to_string(storage));
        return nullptr;
    }
    void *p = std::calloc(length ? length : 1, 1);
    if (!p) {
        setError("cannot allocate a buffer of " + std::to_string(length) + " bytes");
        return nullptr;
    }
    return new goss_mtl_buffer{(unsigned char *) p, length, true, storage == GOSS_MTL_STORAGE_PRIVATE};
}
goss_mtl_buffer *goss_mtl_buffer_wrap(goss_mtl_device *, void *ptr, uint64_t length) {
    long page = sysconf(_SC_PAGESIZE);
    if (((uintptr_t) ptr % (uintptr_t) page) != 0 || length % (uint64_t) page != 0 || length == 0) {
        setError("no-copy buffers need page-aligned memory and a length that is a multiple of " + std::to_string(page));
        return nullptr;
    }
    return new goss_mtl_buffer{(unsigned char *) ptr, length, false, false};
}
uint64_t goss_mtl_page_size(void) { return (uint64_t) sysconf(_SC_PAGESIZE); }
void *goss_mtl_buffer_contents(goss_mtl_buffer *b) { return b->isPrivate ? nullptr : b->data; }
uint64_t goss_mtl_buffer_length(goss_mtl_buffer *b) { return b->length; }
void goss_mtl_buffer_release(goss_mtl_buffer *b) {
    if (!b) return;
    if (b->owned) std::free(b->data);
    delete b;
}

goss_mtl_cmd *goss_mtl_cmd_begin(goss_mtl_queue *q) { return new goss_mtl_cmd{q}; }
void goss_mtl_cmd_set_pipeline(goss_mtl_cmd *c, goss_mtl_pipeline *p) { c->pipeline = p; }
void goss_mtl_cmd_set_buffer(goss_mtl_cmd *c, uint32_t index, goss_mtl_buffer *b, uint64_t offset) {
    if (index >= (uint32_t) kMaxBindings) { c->recordError = "buffer index " + std::to_string(index) + " out of range"; return; }
    if (b && offset > b->length) { c->recordError = "buffer offset " + std::to_string(offset) + " past the buffer's end"; return; }
    c->bind[index] = Binding{b, offset, -1};
}
void goss_mtl_cmd_set_bytes(goss_mtl_cmd *c, uint32_t index, const void *bytes, uint64_t length) {
    if (index >= (uint32_t) kMaxBindings || length > 4096) { c->recordError = "set_bytes: index or length out of range"; return; }
    std::vector<unsigned char> v(length + 16);
    std::memcpy(v.data(), bytes, length);
    c->bytes.push_back(std::move(v));
    c->bind[index] = Binding{nullptr, 0, (int) c->bytes.size() - 1};
}
void goss_mtl_cmd_set_threadgroup_memory(goss_mtl_cmd *c, uint32_t index, uint32_t length) {
    if (index >= (uint32_t) kMaxBindings || length > 32768) { c->recordError = "threadgroup memory: index or length out of range (max 32 KiB)"; return; }
    c->tgMem[index] = length;
}
int32_t goss_mtl_cmd_dispatch(goss_mtl_cmd *c, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t tx, uint32_t ty, uint32_t tz) {
    if (!c->pipeline) { c->recordError = "dispatch without a pipeline"; return 1; }
    Command cmd;
    cmd.pipeline = c->pipeline;
    std::copy(std::begin(c->bind), std::end(c->bind), cmd.bind);
    std::copy(std::begin(c->tgMem), std::end(c->tgMem), cmd.tgMem);
    cmd.groups[0] = gx; cmd.groups[1] = gy; cmd.groups[2] = gz;
    cmd.threads[0] = tx; cmd.threads[1] = ty; cmd.threads[2] = tz;
    c->commands.push_back(cmd);
    return 0;
}
int32_t goss_mtl_cmd_copy(goss_mtl_cmd *c, goss_mtl_buffer *src, uint64_t so, goss_mtl_buffer *dst, uint64_t doff, uint64_t len) {
    if (so + len > src->length || doff + len > dst->length) { c->recordError = "copy out of the buffers' bounds"; return 1; }
    Command cmd;
    cmd.isCopy = true;
    cmd.src = src; cmd.dst = dst; cmd.srcOff = so; cmd.dstOff = doff; cmd.len = len;
    c->commands.push_back(cmd);
    // as on Metal, where a blit ends the compute encoder: pipeline and bindings must be set again
    c->pipeline = nullptr;
    for (Binding &b : c->bind) b = Binding{};
    for (uint32_t &m : c->tgMem) m = 0;
    return 0;
}
int32_t goss_mtl_cmd_commit_wait(goss_mtl_cmd *c) {
    if (!c->recordError.empty()) { setError("emulated Metal: " + c->recordError); return 1; }
    auto t0 = std::chrono::steady_clock::now();
    for (Command &cmd : c->commands) {
        if (cmd.isCopy) { std::memmove(cmd.dst->data + cmd.dstOff, cmd.src->data + cmd.srcOff, cmd.len); continue; }
        std::string err = runDispatch(c, cmd);
        if (!err.empty()) { setError("emulated Metal: " + err); return 1; }
    }
    c->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return 0;
}
double goss_mtl_cmd_gpu_seconds(goss_mtl_cmd *c) { return c->seconds; }
void goss_mtl_cmd_release(goss_mtl_cmd *c) { delete c; }

} // extern "C"
