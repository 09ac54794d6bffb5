// The fiber scheduler of the emulated GPUs; see fibers.h.
#include "fibers.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <thread>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

namespace gpuemu {
namespace {

constexpr size_t kStackBytes = 128 * 1024;

enum State { RUNNABLE, AT_BARRIER, AT_WARP, DONE, FAULTED };

#if defined(__x86_64__)
/* A context is a saved stack pointer: the switch pushes the callee-saved registers (and MXCSR / x87 control
 * word) on the old stack and pops them from the new one. No signal-mask syscall, unlike swapcontext, whose
 * two syscalls per switch dominated the time of kernels with many barriers and shuffles. */
struct Context {
    void *sp = nullptr;
};
extern "C" void gpuemu_switch(void **save, void *to);
asm(R"(
    .text
    .globl gpuemu_switch
    .hidden gpuemu_switch
    .type gpuemu_switch, @function
gpuemu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size gpuemu_switch, .-gpuemu_switch
)");
void fiberEntry();
[[noreturn]] void fiberStart() {
    fiberEntry();
    std::abort(); // fiberEntry switches away for good
}
void switchTo(Context &save, Context &to) { gpuemu_switch(&save.sp, to.sp); }
void makeContext(Context &c, unsigned char *stack, size_t bytes) {
    uintptr_t top = ((uintptr_t) (stack + bytes)) & ~(uintptr_t) 15;
    uint64_t *p = (uint64_t *) top;
    *--p = 0;                            // fiberStart's (never used) return address
    *--p = (uint64_t) (uintptr_t) &fiberStart;
    for (int i = 0; i < 6; i++) *--p = 0; // rbp rbx r12..r15
    uint32_t mxcsr = __builtin_ia32_stmxcsr();
    uint16_t cw;
    asm volatile("fnstcw %0" : "=m"(cw));
    *--p = (uint64_t) mxcsr | (uint64_t) cw << 32;
    c.sp = p;
}
#else
/* Portable fallback: ucontext (a signal-mask syscall per switch: correct, slower). */
struct Context {
    ucontext_t uc;
};
void fiberEntry();
void switchTo(Context &save, Context &to) { swapcontext(&save.uc, &to.uc); }
void makeContext(Context &c, unsigned char *stack, size_t bytes) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = bytes;
    c.uc.uc_link = nullptr; // fiberEntry switches away for good
    makecontext(&c.uc, fiberEntry, 0);
}
#endif

struct Fiber {
    Context uc;
    unsigned char *stack = nullptr;
    State state = DONE;
    WarpOp warp;
};

/* Per OS thread: the fibers (stacks kept across groups) and the group now running. */
struct Exec {
    Context scheduler;
    std::vector<Fiber> fibers;
    std::vector<unsigned> perm; // the shuffle order's pass order
    unsigned current = 0;
    void (*body)(unsigned, void *) = nullptr;
    void *arg = nullptr;
    std::string fault;

    ~Exec() {
        for (Fiber &f : fibers)
            if (f.stack) munmap(f.stack, kStackBytes);
    }
};

thread_local Exec t_exec; // touched once per group: thread_local access in a shared library is a call

/* At the lowest address of every fiber stack (stacks are kStackBytes-aligned): who runs on it. The running
 * fiber finds its own state from its stack pointer, with no thread_local lookup per barrier or shuffle. */
struct StackHeader {
    Exec *exec;
    unsigned index;
};
inline StackHeader &self() {
    return *(StackHeader *) ((uintptr_t) __builtin_frame_address(0) & ~(uintptr_t) (kStackBytes - 1));
}
inline Fiber &selfFiber() {
    StackHeader &h = self();
    return h.exec->fibers[h.index];
}

void fiberEntry() {
    StackHeader &h = self();
    Exec &e = *h.exec;
    e.body(h.index, e.arg);
    e.fibers[h.index].state = DONE;
    switchTo(e.fibers[h.index].uc, e.scheduler); // never resumed
}

void yieldToScheduler(Fiber &f) { switchTo(f.uc, self().exec->scheduler); }

/* A kStackBytes-aligned stack (mapped twice the size, the excess unmapped): the StackHeader in its first page,
 * a PROT_NONE guard page above it (an overflowing kernel crashes instead of corrupting the header), then the stack. */
size_t pageBytes() { return (size_t) sysconf(_SC_PAGESIZE); }
unsigned char *mapStack() {
    void *m = mmap(nullptr, 2 * kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    uintptr_t b = (uintptr_t) m, a = (b + kStackBytes - 1) & ~(uintptr_t) (kStackBytes - 1);
    if (a > b) munmap(m, a - b);
    if (b + 2 * kStackBytes > a + kStackBytes) munmap((void *) (a + kStackBytes), b + 2 * kStackBytes - (a + kStackBytes));
    if (mprotect((void *) (a + pageBytes()), pageBytes(), PROT_NONE) != 0) {
        munmap((void *) a, kStackBytes);
        return nullptr;
    }
    return (unsigned char *) a;
}

std::string lanesText(uint32_t m) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", m);
    return buf;
}

/* Completes what the waiting lanes of warp w allow; sets `released`. Returns "" or an error. */
std::string settleWarp(Exec &e, unsigned w, unsigned n, WarpResolver resolve, const Words &words, bool &released) {
    unsigned first = w * kWarp, count = n - first < kWarp ? n - first : kWarp;
    uint32_t exists = count == 32 ? 0xffffffffu : ((1u << count) - 1u);
    uint32_t handled = 0;
    for (unsigned l = 0; l < count; l++) {
        Fiber &f = e.fibers[first + l];
        if (f.state != AT_WARP || (handled >> l & 1u)) continue;
        uint32_t p = f.warp.mask ? f.warp.mask : exists;
        std::string at = std::string(words.warp) + " " + std::to_string(w);
        if (p & ~exists)
            return at + ": the mask " + lanesText(f.warp.mask) + " of a " + words.warp +
                   " function names lanes that are not in the " + words.group;
        if (!(p >> l & 1u))
            return at + ": lane " + std::to_string(l) + " calls a " + words.warp + " function whose mask " +
                   lanesText(p) + " does not name it";
        unsigned waiting = 0, stuck = 0, runnable = 0;
        for (unsigned i = 0; i < count; i++) {
            if (!(p >> i & 1u)) continue;
            State s = e.fibers[first + i].state;
            waiting += s == AT_WARP;
            runnable += s == RUNNABLE;
            stuck += s != AT_WARP && s != RUNNABLE;
        }
        if (runnable > 0) continue; // the others have not arrived yet
        if (stuck > 0)
            return at + ": a " + words.warp + " function was reached by only " + std::to_string(waiting) + " of its " +
                   std::to_string(waiting + stuck) + " lanes, the others returned or wait at " + words.barrier +
                   " (divergent " + words.warp + " operation)";
        WarpOp *lanes[kWarp] = {};
        for (unsigned i = 0; i < count; i++) {
            if (!(p >> i & 1u)) continue;
            WarpOp &o = e.fibers[first + i].warp;
            if (o.op != f.warp.op || o.type != f.warp.type || o.mask != f.warp.mask)
                return at + ": lanes " + std::to_string(l) + " and " + std::to_string(i) + " wait at different " +
                       words.warp + " functions";
            lanes[i] = &o;
        }
        std::string err = resolve(lanes, p);
        if (!err.empty()) return at + ": " + err;
        for (unsigned i = 0; i < count; i++)
            if (p >> i & 1u) e.fibers[first + i].state = RUNNABLE;
        handled |= p;
        released = true;
    }
    return "";
}

/* splitmix64: the shuffle order's random numbers. */
uint64_t mix(uint64_t &x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

} // namespace

Options readOptions() {
    Options o;
    if (const char *s = std::getenv("GOSS_EMU_ORDER"); s && *s) {
        std::string v(s);
        if (v == "forward") o.order = Order::FORWARD;
        else if (v == "reverse") o.order = Order::REVERSE;
        else if (v == "shuffle") o.order = Order::SHUFFLE;
        else if (v.rfind("shuffle:", 0) == 0 && v.size() > 8 &&
                 v.find_first_not_of("0123456789", 8) == std::string::npos && v.size() <= 8 + 19) {
            o.order = Order::SHUFFLE;
            o.seed = std::strtoull(v.c_str() + 8, nullptr, 10);
        } else {
            o.error = "GOSS_EMU_ORDER='" + v + "': expected forward, reverse, shuffle or shuffle:SEED (decimal)";
        }
    }
    if (const char *s = std::getenv("GOSS_EMU_POISON"); s && *s) {
        std::string v(s);
        if (v == "1") o.poison = true;
        else if (v != "0") o.error = "GOSS_EMU_POISON='" + v + "': expected 0 or 1";
    }
    return o;
}

void poison(void *p, size_t bytes) {
    unsigned char *b = (unsigned char *) p;
    uint32_t w = kPoison;
    size_t i = 0;
    for (; i + 4 <= bytes; i += 4) std::memcpy(b + i, &w, 4);
    if (i < bytes) std::memcpy(b + i, &w, bytes - i);
}

std::string runGroup(unsigned n, void (*body)(unsigned, void *), void *arg, WarpResolver resolve, const Words &words,
                     const std::string &where, const Options &options, uint64_t group) {
    Exec &e = t_exec;
    if (n == 0 || n > kMaxThreads)
        return where + ": " + std::to_string(n) + " threads per " + words.group + " (1.." + std::to_string(kMaxThreads) + ")";
    while (e.fibers.size() < n) {
        unsigned char *s = mapStack();
        if (!s) return where + ": cannot allocate fiber stacks";
        e.fibers.emplace_back();
        e.fibers.back().stack = s;
        *(StackHeader *) s = StackHeader{&e, (unsigned) e.fibers.size() - 1};
    }
    e.body = body;
    e.arg = arg;
    for (unsigned t = 0; t < n; t++) {
        Fiber &f = e.fibers[t];
        f.state = RUNNABLE;
        makeContext(f.uc, f.stack + 2 * pageBytes(), kStackBytes - 2 * pageBytes());
    }
    unsigned nWarps = (n + kWarp - 1) / kWarp;
    uint64_t rng = options.seed ^ (group * 0xd1b54a32d192ed03ull);
    if (options.order == Order::SHUFFLE) {
        e.perm.resize(n);
        for (unsigned t = 0; t < n; t++) e.perm[t] = t;
    }
    for (;;) {
        bool ran = false, faulted = false;
        auto resume = [&](unsigned t) { // false once the fiber faulted
            if (e.fibers[t].state != RUNNABLE) return true;
            e.current = t;
            switchTo(e.scheduler, e.fibers[t].uc);
            ran = true;
            return e.fibers[t].state != FAULTED;
        };
        // one loop per order, so the default pass is the plain forward loop
        if (options.order == Order::FORWARD) {
            for (unsigned t = 0; t < n && !faulted; t++) faulted = !resume(t);
        } else if (options.order == Order::REVERSE) {
            for (unsigned t = n; t-- > 0 && !faulted;) faulted = !resume(t);
        } else { // Fisher-Yates, a fresh permutation every pass
            for (unsigned k = n - 1; k > 0; k--) std::swap(e.perm[k], e.perm[mix(rng) % (k + 1)]);
            for (unsigned k = 0; k < n && !faulted; k++) faulted = !resume(e.perm[k]);
        }
        if (faulted) return where + ": " + e.fault;
        if (ran) continue;
        unsigned done = 0, atBarrier = 0, atWarp = 0;
        for (unsigned t = 0; t < n; t++) {
            State s = e.fibers[t].state;
            done += s == DONE;
            atBarrier += s == AT_BARRIER;
            atWarp += s == AT_WARP;
        }
        if (done == n) return "";
        bool released = false;
        for (unsigned w = 0; w < nWarps && atWarp > 0; w++) {
            std::string err = settleWarp(e, w, n, resolve, words, released);
            if (!err.empty()) return where + ", " + err;
        }
        if (released) continue;
        if (atBarrier == n) {
            for (unsigned t = 0; t < n; t++) e.fibers[t].state = RUNNABLE;
            continue;
        }
        return where + ": deadlock: " + std::to_string(atBarrier) + " threads wait at " + words.barrier + ", " +
               std::to_string(atWarp) + " at " + words.warp + " functions, " + std::to_string(done) + " of " +
               std::to_string(n) + " have returned (every thread must reach each " + words.barrier + ")";
    }
}

unsigned threadIndex() { return self().index; }
void *groupArg() { return self().exec->arg; }

void barrier() {
    Fiber &f = selfFiber();
    f.state = AT_BARRIER;
    yieldToScheduler(f);
}

uint32_t warpOp(const WarpOp &op) {
    Fiber &f = selfFiber();
    f.warp = op;
    f.state = AT_WARP;
    yieldToScheduler(f);
    return f.warp.result;
}

void fault(const std::string &why) {
    Fiber &f = selfFiber();
    self().exec->fault = why;
    f.state = FAULTED;
    yieldToScheduler(f);
    std::abort(); // unreachable: a faulted fiber is never resumed
}

// ---- the pool --------------------------------------------------------------------------------------------
namespace {
struct Pool {
    std::mutex dispatchLock; // one dispatch at a time
    std::mutex m;
    std::condition_variable wake, finished;
    unsigned workers = 0;
    uint64_t generation = 0;
    unsigned wanted = 0, busy = 0;
    const std::function<std::string(uint64_t)> *body = nullptr;
    uint64_t n = 0;
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::string error;

    void work() {
        for (uint64_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
            std::string err = (*body)(i);
            if (!err.empty()) {
                std::lock_guard<std::mutex> g(m);
                if (error.empty()) error = err;
                failed = true;
            }
        }
    }
    void loop(unsigned id) {
        uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> g(m);
                wake.wait(g, [&] { return generation != seen; });
                seen = generation;
                if (id >= wanted) continue;
            }
            work();
            std::lock_guard<std::mutex> g(m);
            if (--busy == 0) finished.notify_all();
        }
    }
};
Pool &pool() {
    static Pool *p = new Pool(); // never destroyed: its threads are detached and live as long as the process
    return *p;
}
} // namespace

std::string parallelFor(uint64_t n, unsigned threads, const std::function<std::string(uint64_t)> &body) {
    Pool &p = pool();
    std::lock_guard<std::mutex> d(p.dispatchLock);
    unsigned helpers = threads > 1 && n > 1 ? (unsigned) std::min<uint64_t>(threads - 1, n - 1) : 0;
    {
        std::lock_guard<std::mutex> g(p.m);
        while (p.workers < helpers) std::thread(&Pool::loop, &p, p.workers++).detach();
        p.body = &body;
        p.n = n;
        p.next = 0;
        p.failed = false;
        p.error.clear();
        p.wanted = helpers;
        p.busy = helpers;
        p.generation++;
    }
    if (helpers) p.wake.notify_all();
    p.work();
    std::unique_lock<std::mutex> g(p.m);
    p.finished.wait(g, [&] { return p.busy == 0; });
    return p.error;
}

unsigned defaultThreads() {
    if (const char *s = std::getenv("GOSS_EMU_THREADS")) {
        int v = std::atoi(s);
        if (v >= 1) return (unsigned) v;
    }
    unsigned c = std::thread::hardware_concurrency();
    return c == 0 ? 1 : c > 4 ? 4 : c;
}

} // namespace gpuemu
