/*
 * The emulated Metal device: goss_metal.h implemented on the CPU for Linux CI.
 *
 * Kernels are the backend-metal/kernels sources compiled as C++ through metal_emu.h (see emu_kernels.cpp) and
 * registered by name. A dispatch runs its threadgroups one after another on the calling thread, each on the
 * fiber scheduler shared with the CUDA emulator (gpu-device/emu/fibers.h: every thread a ucontext fiber;
 * threadgroup barriers and simdgroup functions are rendezvous; a divergent barrier or simdgroup call fails
 * the dispatch with an error that names the kernel). This file adds the Metal side: bindings, threadgroup
 * memory, thread positions and the simdgroup reductions/shuffles done at the rendezvous. GOSS_EMU_ORDER and
 * GOSS_EMU_POISON (fibers.h) are read at each dispatch; poisoning covers [[threadgroup(i)]] memory and TG_ARRAYs.
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
#include <unistd.h>
#include <vector>

#include "fibers.h"
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

constexpr uint kMaxThreads = gpuemu::kMaxThreads;
constexpr uint kSimdWidth = gpuemu::kWarp;
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

// ---- dispatches on the shared fiber scheduler (gpu-device/emu/fibers.h) ------------------------------
namespace {
/* Per OS thread: the dispatch now running (bindings, threadgroup memory, the threads' positions). */
struct Exec {
    void (*kernel)() = nullptr;
    void *bindings[kMaxBindings] = {};
    std::vector<unsigned char> tgMemory[kMaxBindings];
    emu::ThreadContext tc[gpuemu::kMaxThreads];
    bool poison = false;             // GOSS_EMU_POISON in this dispatch
    std::vector<void *> poisoned;    // the TG_ARRAYs already poisoned in this threadgroup
};

thread_local Exec t_exec;

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

/* simd_sum/max/min over the simdgroup's lanes, or simd_shuffle_down (a lane past the end keeps its value). */
std::string resolveSimd(gpuemu::WarpOp *const lanes[gpuemu::kWarp], uint32_t mask) {
    int first = __builtin_ctz(mask), last = 31 - __builtin_clz(mask);
    const gpuemu::WarpOp &f0 = *lanes[first];
    if (f0.op == emu::OP_SHUFFLE_DOWN) {
        for (int t = first; t <= last; t++)
            if (lanes[t]->arg != f0.arg) return "lanes wait at different simdgroup functions (shuffle deltas differ)";
        for (int t = first; t <= last; t++) {
            int src = t + (int) f0.arg;
            lanes[t]->result = src <= last ? lanes[src]->bits : lanes[t]->bits;
        }
    } else {
        uint32_t acc = f0.bits;
        for (int t = first + 1; t <= last; t++) acc = combine(f0.op, f0.type, acc, lanes[t]->bits);
        for (int t = first; t <= last; t++) lanes[t]->result = acc;
    }
    return "";
}

const gpuemu::Words kWords{"threadgroup", "threadgroup_barrier", "simdgroup"};

void runThread(unsigned, void *) { t_exec.kernel(); }

std::string runDispatch(goss_mtl_cmd *c, Command &cmd) {
    Exec &e = t_exec;
    uint nThreads = cmd.threads[0], nGroups = cmd.groups[0];
    if (cmd.groups[1] != 1 || cmd.groups[2] != 1 || cmd.threads[1] != 1 || cmd.threads[2] != 1)
        return "kernel " + cmd.pipeline->name + ": the emulator supports 1-D dispatches only";
    if (nThreads == 0 || nThreads > kMaxThreads)
        return "kernel " + cmd.pipeline->name + ": " + std::to_string(nThreads) + " threads per threadgroup (1.." +
               std::to_string(kMaxThreads) + ")";
    for (int i = 0; i < kMaxBindings; i++) {
        Binding &b = cmd.bind[i];
        if (b.bytesIndex >= 0) e.bindings[i] = c->bytes[b.bytesIndex].data();
        else if (b.buf) e.bindings[i] = b.buf->data + b.offset;
        else e.bindings[i] = nullptr;
        e.tgMemory[i].assign(cmd.tgMem[i], 0);
    }
    e.kernel = cmd.pipeline->fn;
    const gpuemu::Options opt = gpuemu::readOptions();
    if (!opt.error.empty()) return "kernel " + cmd.pipeline->name + ": " + opt.error;
    e.poison = opt.poison;
    // threadgroups one after another on the calling thread (dynamic threadgroup memory is per dispatch here)
    for (uint g = 0; g < nGroups; g++) {
        for (uint t = 0; t < nThreads; t++)
            e.tc[t] = emu::ThreadContext{t, g, nThreads, g * nThreads + t, t % kSimdWidth, t / kSimdWidth};
        if (opt.poison) {
            for (auto &m : e.tgMemory) gpuemu::poison(m.data(), m.size());
            e.poisoned.clear(); // TG_ARRAYs: poisoned again when this threadgroup first reaches them
        }
        std::string err = gpuemu::runGroup(nThreads, runThread, nullptr, resolveSimd, kWords,
                                           "kernel " + cmd.pipeline->name + ", threadgroup " + std::to_string(g), opt, g);
        if (!err.empty()) return err;
    }
    return "";
}
} // namespace

namespace emu {
const ThreadContext &ctx() { return t_exec.tc[gpuemu::threadIndex()]; }
void *binding(uint index) {
    void *p = index < (uint) kMaxBindings ? t_exec.bindings[index] : nullptr;
    if (!p) gpuemu::fault("[[buffer(" + std::to_string(index) + ")]] is not bound");
    return p;
}
void *threadgroup_binding(uint index) {
    if (index >= (uint) kMaxBindings || t_exec.tgMemory[index].empty())
        gpuemu::fault("[[threadgroup(" + std::to_string(index) + ")]] has no threadgroup memory (goss_mtl_cmd_set_threadgroup_memory)");
    return t_exec.tgMemory[index].data();
}
void threadgroup_array(void *p, size_t bytes) {
    Exec &e = t_exec;
    if (!e.poison || std::find(e.poisoned.begin(), e.poisoned.end(), p) != e.poisoned.end()) return;
    gpuemu::poison(p, bytes); // the first thread of this threadgroup to reach the declaration; none wrote it yet
    e.poisoned.push_back(p);
}
void barrier() { gpuemu::barrier(); }
uint32_t simd_op(int op, uint32_t bits, int type, uint32_t arg) {
    gpuemu::WarpOp w;
    w.op = op;
    w.type = type;
    w.bits = bits;
    w.arg = arg;
    return gpuemu::warpOp(w); // mask 0: every lane of the simdgroup takes part
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
                     "(rebuild backend-metal/emu so the emulator matches backend-metal/kernels)");
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
