/*
 * fibers.h — the fiber scheduler shared by the emulated GPUs (backend-metal/emu for Metal, backend-cuda/emu/cuda-emu for
 * CUDA). One workgroup (Metal threadgroup, CUDA block) runs on one OS thread; each of its threads is a ucontext
 * fiber with its own stack. A fiber runs until it returns or blocks at a group barrier or a warp operation
 * (32-wide warps/simdgroups; lane = linear thread index % 32). When nothing is runnable the scheduler first
 * completes the warp operations whose participants all wait at the same operation (the language layer's
 * WarpResolver does the exchange), else releases the barrier when every thread of the group waits at it; if
 * neither applies the group fails with an error (a GPU would hang or be undefined there). Errors are returned
 * as strings, never papered over; nothing aborts the process.
 *
 * parallelFor spreads the groups of one dispatch over a few OS threads (persistent pool); language layers keep
 * group-shared arrays in thread_local storage, which is right because one OS thread runs one group at a time.
 *
 * Race checks (Options, read from the environment at each dispatch). A group's runnable fibers are resumed in
 * one pass per phase, each running until it blocks, so a missing barrier (a thread reads group memory another
 * writes in the same phase) only shows when the pass puts the reader first. GOSS_EMU_ORDER picks the pass order:
 * forward (default: thread 0 first), reverse, or shuffle[:SEED] (a fresh permutation per pass, derived from
 * the seed, the group index and the pass number: a failure reproduces with the same seed). Barriers and warp
 * operations keep their semantics in every order. GOSS_EMU_POISON=1 makes the language layers fill group memory
 * with the NaN pattern kPoison at the start of every group, so a read of a value not written in this group
 * shows as NaN rather than a stale value left by the previous group on the same OS thread.
 */
#ifndef GOSS_GPU_EMU_FIBERS_H
#define GOSS_GPU_EMU_FIBERS_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace gpuemu {

constexpr unsigned kWarp = 32;
constexpr unsigned kMaxThreads = 1024;

/* One lane's side of a warp operation. op/type/mask must agree among the participants (arg may differ per lane;
 * the resolver decides). mask: the lanes that take part; 0 means every lane of the warp that exists. */
struct WarpOp {
    int op = 0, type = 0;
    uint32_t mask = 0;
    uint32_t bits = 0, arg = 0, arg2 = 0;
    uint32_t result = 0;
};

/* Completes one warp operation: lanes[i] is lane i's op when bit i of mask is set (null otherwise); it writes
 * every participant's result and returns "" or an error. */
using WarpResolver = std::string (*)(WarpOp *const lanes[kWarp], uint32_t mask);

/* The words the errors use: {"threadgroup", "threadgroup_barrier", "simdgroup"} or {"block", "__syncthreads", "warp"}. */
struct Words {
    const char *group, *barrier, *warp;
};

enum class Order { FORWARD, REVERSE, SHUFFLE };
struct Options {
    Order order = Order::FORWARD;
    uint64_t seed = 0;
    bool poison = false;
    std::string error; // a malformed variable: the dispatch fails with this message
};
/* GOSS_EMU_ORDER and GOSS_EMU_POISON; called once per dispatch (a test may change them between dispatches). */
Options readOptions();

constexpr uint32_t kPoison = 0x7fc0deadu; // a quiet NaN as float, a large odd number as int
/* Fills [p, p + bytes) with kPoison words (a trailing partial word with its first bytes). */
void poison(void *p, size_t bytes);

/* Runs one group of n (1..kMaxThreads) threads as fibers on the calling OS thread; thread i calls body(i, arg).
 * `group` (the group's linear index) seeds the shuffle order. Returns "" or an error prefixed with `where`
 * (e.g. "kernel foo, block 3"). */
std::string runGroup(unsigned n, void (*body)(unsigned tid, void *arg), void *arg, WarpResolver resolve,
                     const Words &words, const std::string &where, const Options &options, uint64_t group);

// ---- called from inside a running fiber ----
unsigned threadIndex();                // linear index of the running thread in its group
void *groupArg();                      // the arg runGroup was given
void barrier();                        // group-wide rendezvous
uint32_t warpOp(const WarpOp &op);     // warp rendezvous; returns this lane's result
[[noreturn]] void fault(const std::string &why); // abandons the fiber and fails the group with `why`

/* Calls body(i) for every i < n on up to `threads` OS threads (the caller is one of them), one dispatch at a time
 * process-wide. Returns the first error a body returned ("" when none); after an error no new i is started. */
std::string parallelFor(uint64_t n, unsigned threads, const std::function<std::string(uint64_t)> &body);

/* GOSS_EMU_THREADS when set (>= 1), else the number of CPUs, at most 4. */
unsigned defaultThreads();

} // namespace gpuemu

#endif
