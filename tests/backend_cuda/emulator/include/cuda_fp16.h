/* The emulated device's stand-in for CUDA's <cuda_fp16.h> (test infrastructure).
 *
 * Every generated translation unit starts with `#include <cuda_fp16.h>`; with this directory
 * first on the include path the unit compiles unchanged as host C++17. Besides `__half` it
 * provides the CUDA keywords, the built-in index variables, `__syncthreads`, warp shuffles and
 * the bit-cast intrinsics, and the execution model: the threads of a block run as cooperative
 * fibers (ucontext) switched at every barrier and shuffle, blocks run one after another, and
 * barrier or shuffle divergence ends the launch with an error naming the kernel.
 * `opw_emu_checks.h` (included at the end) adds the memory checks: shared-memory races and
 * reads of unwritten shared memory, global accesses outside their allocation, and two threads
 * writing one global element (the stand-in rewrites `__shared__` declarations and kernel
 * pointer parameters into its checked types before compiling). `opw_emu_convert.h` (included
 * last) converts floats to integers as a GPU does: saturating (the stand-in rewrites C casts
 * to integer types into its conversion).
 */
#ifndef OPW_EMU_CUDA_FP16_H
#define OPW_EMU_CUDA_FP16_H

#include <math.h>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
/* Shared memory: one static object per kernel; blocks run one after another, so each block
   has it to itself (its content at block start is whatever the previous block left). The
   stand-in rewrites `__shared__ T name[...];` into checked elements (opw_emu_checks.h); this
   definition serves what it does not rewrite. */
#define __shared__ static

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
};

/* ------------------------------------------------------------------ float16 */

namespace opw_emu {
static inline unsigned int f32_bits(float f) {
    unsigned int u;
    std::memcpy(&u, &f, 4);
    return u;
}
static inline float bits_f32(unsigned int u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
/* IEEE binary32 -> binary16, round to nearest, ties to even. */
static inline unsigned short f32_to_f16(float value) {
    const unsigned int f = f32_bits(value);
    const unsigned int sign = (f >> 16) & 0x8000u;
    const unsigned int a = f & 0x7fffffffu;
    if (a >= 0x7f800000u) { /* inf, nan (quiet, payload kept where it fits) */
        if (a == 0x7f800000u) return (unsigned short)(sign | 0x7c00u);
        return (unsigned short)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    }
    if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u); /* >= 65520: inf */
    const int e = (int)(a >> 23) - 127;
    if (e < -14) { /* a binary16 subnormal (or zero) */
        if (a < 0x00800000u) return (unsigned short)sign; /* float zero/subnormal */
        const unsigned int mant = (a & 0x7fffffu) | 0x800000u;
        const int shift = -e - 1; /* mant * 2^(e-23) in units of 2^-24 */
        if (shift > 24) return (unsigned short)sign;
        unsigned int q = mant >> shift;
        const unsigned int rem = mant & ((1u << shift) - 1u);
        const unsigned int half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return (unsigned short)(sign | q);
    }
    const unsigned int m = a & 0x7fffffu;
    unsigned int q = ((unsigned int)(e + 15) << 10) | (m >> 13);
    const unsigned int rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;
    return (unsigned short)(sign | q);
}
/* IEEE binary16 -> binary32 (exact). */
static inline float f16_to_f32(unsigned short h) {
    const unsigned int sign = ((unsigned int)h & 0x8000u) << 16;
    const unsigned int e = (h >> 10) & 0x1fu;
    const unsigned int m = h & 0x3ffu;
    if (e == 0) {
        const float v = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        return sign ? -v : v;
    }
    if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
    return bits_f32(sign | ((e - 15 + 127) << 23) | (m << 13));
}
} // namespace opw_emu

struct __half {
    unsigned short x;
    __half() = default;
    __half(float f) : x(opw_emu::f32_to_f16(f)) {}
    __half(double d) : x(opw_emu::f32_to_f16((float)d)) {}
    operator float() const { return opw_emu::f16_to_f32(x); }
};
typedef __half half;

static inline float __half2float(__half h) { return opw_emu::f16_to_f32(h.x); }
static inline __half __float2half_rn(float f) {
    __half h;
    h.x = opw_emu::f32_to_f16(f);
    return h;
}
static inline __half __float2half(float f) { return __float2half_rn(f); }

/* ------------------------------------------------------------------ bit casts */

static inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}
static inline int __float_as_int(float f) {
    int i;
    std::memcpy(&i, &f, 4);
    return i;
}
static inline float __uint_as_float(unsigned int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}
static inline unsigned int __float_as_uint(float f) {
    unsigned int i;
    std::memcpy(&i, &f, 4);
    return i;
}
static inline double __longlong_as_double(long long i) {
    double d;
    std::memcpy(&d, &i, 8);
    return d;
}
static inline long long __double_as_longlong(double d) {
    long long i;
    std::memcpy(&i, &d, 8);
    return i;
}

/* ------------------------------------------------------------------ execution model */

#if defined(__x86_64__) && !defined(OPW_EMU_UCONTEXT)
#define OPW_EMU_ASM_SWITCH 1
/* Save the callee-saved state on the current stack, store the stack pointer in *save_sp,
   continue on load_sp (a stack saved the same way). Local to each built module. */
extern "C" __attribute__((visibility("hidden"))) void opw_emu_switch(void **save_sp,
                                                                     void *load_sp);
__asm__(".text\n"
        ".p2align 4\n"
        ".type opw_emu_switch, @function\n"
        "opw_emu_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size opw_emu_switch, .-opw_emu_switch\n");
#else
#define OPW_EMU_ASM_SWITCH 0
#endif

namespace opw_emu {

enum State { READY = 0, AT_BARRIER = 1, AT_SHUFFLE = 2, DONE = 3, FAILED = 4 };
enum { SHFL_DOWN = 0, SHFL_UP = 1, SHFL_XOR = 2, SHFL_IDX = 3 };

struct Fiber {
#if OPW_EMU_ASM_SWITCH
    void *sp;
#else
    ucontext_t ctx;
#endif
    uint3 tid;
    unsigned int lin;          /* linear thread index in the block */
    int state;
    int line;                  /* source line of the barrier / shuffle it waits at */
    int shfl_kind, shfl_arg, shfl_width;
    unsigned int shfl_mask;
    unsigned long long value;  /* the value it offers at a shuffle, then the one it gets */
};

/* A `__shared__` array the kernel declared (for naming it in reports). */
struct SharedArray {
    const void *base;
    size_t bytes, elem;
    const char *name;
};

struct Runtime {
    Fiber *fibers = nullptr;
    char *stacks = nullptr;
    unsigned int capacity = 0;
    Fiber *cur = nullptr;
#if OPW_EMU_ASM_SWITCH
    void *sched_sp = nullptr;
#else
    ucontext_t sched;
#endif
    uint3 bidx;
    dim3 bdim, gdim;
    void (*body)(void *) = nullptr;
    void *body_arg = nullptr;
    /* The memory checks (opw_emu_checks.h): where a fiber reports, whether it did, the block
       generation (one number per block run, so shared-memory shadows reset per block) and the
       epoch (barriers the block has passed). */
    char *err = nullptr;
    int errlen = 0;
    const char *kernel = "";
    int failed = 0;
    unsigned long long block_gen = 0;
    unsigned long long block_lin = 0; /* linear index of the running block in the grid */
    unsigned int epoch = 0;
    SharedArray shared[32];
    int nshared = 0;
};
static Runtime rt;
static const size_t STACK = 256 * 1024;

/* Switching between the scheduler and the fibers: a few instructions on x86-64 (the
   callee-saved registers, the SSE and x87 control words and the stack pointer), ucontext
   elsewhere (it costs a signal-mask system call per switch). */
#if OPW_EMU_ASM_SWITCH
static void fiber_entry() {
    rt.body(rt.body_arg);
    rt.cur->state = DONE;
    opw_emu_switch(&rt.cur->sp, rt.sched_sp);
    __builtin_trap();
}
static inline void start_fiber(Fiber &f, char *stack) {
    void **sp = (void **)(stack + STACK);
    unsigned int mxcsr;
    unsigned short fpcw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
    *--sp = nullptr;                        /* the entry's return address: never used */
    *--sp = (void *)&fiber_entry;           /* where the first switch returns to */
    for (int r = 0; r < 6; ++r) *--sp = nullptr; /* rbp rbx r12 r13 r14 r15 */
    *--sp = (void *)(((unsigned long long)fpcw << 32) | mxcsr);
    f.sp = (void *)sp;
}
static inline void resume(Fiber &f) { opw_emu_switch(&rt.sched_sp, f.sp); }
static inline void suspend(Fiber *f) { opw_emu_switch(&f->sp, rt.sched_sp); }
#else
static void fiber_entry() {
    rt.body(rt.body_arg);
    rt.cur->state = DONE;
    swapcontext(&rt.cur->ctx, &rt.sched);
}
static inline void start_fiber(Fiber &f, char *stack) {
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stack;
    f.ctx.uc_stack.ss_size = STACK;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_entry, 0);
}
static inline void resume(Fiber &f) { swapcontext(&rt.sched, &f.ctx); }
static inline void suspend(Fiber *f) { swapcontext(&f->ctx, &rt.sched); }
#endif

static inline void yield_as(int state, int line) {
    Fiber *f = rt.cur;
    f->state = state;
    f->line = line;
    suspend(f);
}

static inline void syncthreads(int line) { yield_as(AT_BARRIER, line); }

template <typename T>
static inline T shuffle(unsigned int mask, T var, int arg, int width, int kind, int line) {
    static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
    Fiber *f = rt.cur;
    f->value = 0;
    std::memcpy(&f->value, &var, sizeof(T));
    f->shfl_kind = kind;
    f->shfl_arg = arg;
    f->shfl_width = width;
    f->shfl_mask = mask;
    yield_as(AT_SHUFFLE, line);
    T out;
    std::memcpy(&out, &rt.cur->value, sizeof(T));
    return out;
}

static inline unsigned long long rng_next(unsigned long long &s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

__attribute__((format(printf, 4, 5))) static int fail(char *err, int errlen,
                                                     const char *kernel, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::snprintf(err, (size_t)errlen, "kernel %s, block (%u, %u, %u): %s", kernel, rt.bidx.x,
                  rt.bidx.y, rt.bidx.z, msg);
    return 1;
}

/* Exchange the values of one warp's fibers that all wait at a shuffle. */
static int do_shuffle(unsigned int w0, unsigned int n_warp, char *err, int errlen,
                      const char *kernel) {
    unsigned long long got[32];
    Fiber *fs = rt.fibers + w0;
    for (unsigned int l = 0; l < n_warp; ++l) {
        const Fiber &f = fs[l];
        if (f.shfl_kind != fs[0].shfl_kind || f.line != fs[0].line)
            return fail(err, errlen, kernel,
                        "warp shuffle divergence: lanes %d and %d of warp %d wait at different "
                        "shuffles (line %d)",
                        0, (int)l, (int)(w0 / 32), f.line);
        if (f.shfl_mask != 0xffffffffu && ((f.shfl_mask >> l) & 1u) == 0)
            return fail(err, errlen, kernel,
                        "lane %d of warp %d shuffles with a mask 0x%x that leaves it out", (int)l,
                        (int)(w0 / 32), f.shfl_mask);
        const int width = f.shfl_width;
        const int base = (int)l - (int)l % width;
        int src = (int)l;
        switch (f.shfl_kind) {
        case SHFL_DOWN: src = (int)l + f.shfl_arg; if (src >= base + width) src = (int)l; break;
        case SHFL_UP: src = (int)l - f.shfl_arg; if (src < base) src = (int)l; break;
        case SHFL_XOR: src = (int)l ^ f.shfl_arg; if (src >= base + width) src = (int)l; break;
        default: src = base + (f.shfl_arg % width); break;
        }
        if (src >= (int)n_warp)
            return fail(err, errlen, kernel,
                        "lane %d of warp %d reads lane %d by a shuffle, which the block does not "
                        "have (line %d)",
                        (int)l, (int)(w0 / 32), src, f.line);
        got[l] = fs[src].value;
    }
    for (unsigned int l = 0; l < n_warp; ++l) {
        fs[l].value = got[l];
        fs[l].state = READY;
    }
    return 0;
}

static inline double now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
/* Seconds a launch may take ($OPWEAVE_CUDA_EMULATOR_TIMEOUT, 120 by default), checked at
   barriers and shuffles. */
static inline double time_limit() {
    const char *text = std::getenv("OPWEAVE_CUDA_EMULATOR_TIMEOUT");
    const double value = text ? std::atof(text) : 0.0;
    return value > 0.0 ? value : 120.0;
}

/* Run one block to completion (0) or to an error (1, message in err). */
static int run_block(unsigned int n, const unsigned int *order, char *err, int errlen,
                     const char *kernel, unsigned long long max_steps, double deadline) {
    for (unsigned int i = 0; i < n; ++i) {
        Fiber &f = rt.fibers[i];
        f.state = READY;
        f.line = 0;
        f.tid.x = i % rt.bdim.x;
        f.tid.y = (i / rt.bdim.x) % rt.bdim.y;
        f.tid.z = i / (rt.bdim.x * rt.bdim.y);
        f.lin = i;
        start_fiber(f, rt.stacks + (size_t)i * STACK);
    }
    unsigned long long steps = 0;
    ++rt.block_gen;
    rt.epoch = 0;
    for (;;) {
        for (unsigned int k = 0; k < n; ++k) {
            Fiber &f = rt.fibers[order[k]];
            if (f.state != READY) continue;
            rt.cur = &f;
            resume(f);
            if (rt.failed) { /* a memory check reported (the message is in err) */
                rt.cur = nullptr;
                return 1;
            }
        }
        rt.cur = nullptr;
        if (++steps > max_steps)
            return fail(err, errlen, kernel,
                        "more than %d barrier/shuffle rounds in one block: a barrier in an endless "
                        "loop?",
                        (int)max_steps);
        if ((steps & 255u) == 0 && now() > deadline)
            return fail(err, errlen, kernel,
                        "the launch ran past the emulator's time limit (%g s, "
                        "OPWEAVE_CUDA_EMULATOR_TIMEOUT): a barrier in an endless loop?",
                        time_limit());
        /* Shuffles: a warp whose every lane waits at a shuffle exchanges values. */
        bool released = false;
        for (unsigned int w0 = 0; w0 < n; w0 += 32) {
            const unsigned int nw = (n - w0 < 32) ? n - w0 : 32;
            unsigned int at = 0, other = 0, which = 0;
            for (unsigned int l = 0; l < nw; ++l) {
                if (rt.fibers[w0 + l].state == AT_SHUFFLE) ++at;
                else { other = l; which = (unsigned int)rt.fibers[w0 + l].state; }
            }
            if (at == 0) continue;
            if (at != nw)
                return fail(err, errlen, kernel,
                            which == DONE
                                ? "warp shuffle divergence: lane %d of warp %d has finished while "
                                  "%d lane(s) wait at a shuffle"
                                : "warp shuffle divergence: lane %d of warp %d waits at "
                                  "__syncthreads while %d lane(s) wait at a shuffle",
                            (int)other, (int)(w0 / 32), (int)at);
            if (do_shuffle(w0, nw, err, errlen, kernel)) return 1;
            released = true;
        }
        if (released) continue;
        unsigned int at_barrier = 0, done = 0;
        int line0 = -1;
        for (unsigned int i = 0; i < n; ++i) {
            const Fiber &f = rt.fibers[i];
            if (f.state == DONE) { ++done; continue; }
            ++at_barrier;
            if (line0 < 0) line0 = f.line;
            else if (f.line != line0)
                return fail(err, errlen, kernel,
                            "barrier divergence: threads wait at different __syncthreads (lines "
                            "%d and %d; thread %d)",
                            line0, f.line, (int)i);
        }
        if (done == n) return 0;
        if (done != 0)
            return fail(err, errlen, kernel,
                        "barrier divergence: %d thread(s) wait at __syncthreads (line %d) while "
                        "%d thread(s) of the block have finished",
                        (int)at_barrier, line0, (int)done);
        for (unsigned int i = 0; i < n; ++i) rt.fibers[i].state = READY;
        ++rt.epoch;
    }
}

/* order: 0 forward, 1 reverse, 2 random (seeded). blocks: the linear indices of the blocks to
   run (nblocks < 0: every block of the grid, in order). Returns 0, or 1 with a message in err. */
static int launch(void (*body)(void *), void *arg, const unsigned int *dims, int order_kind,
                  unsigned long long seed, const long long *blocks, long long nblocks,
                  const char *kernel, char *err, int errlen) {
    rt.err = err;
    rt.errlen = errlen;
    rt.kernel = kernel;
    rt.failed = 0;
    rt.gdim = dim3{dims[0], dims[1], dims[2]};
    rt.bdim = dim3{dims[3], dims[4], dims[5]};
    const unsigned int n = dims[3] * dims[4] * dims[5];
    if (n == 0 || n > 1024)
        return fail(err, errlen, kernel, "a block of %d threads (1 to 1024)", (int)n);
    if (n > rt.capacity) {
        std::free(rt.fibers);
        std::free(rt.stacks);
        rt.fibers = (Fiber *)std::calloc(n, sizeof(Fiber));
        rt.stacks = (char *)std::malloc((size_t)n * STACK);
        if (!rt.fibers || !rt.stacks) {
            rt.capacity = 0;
            return fail(err, errlen, kernel, "out of host memory for %d fibers", (int)n);
        }
        rt.capacity = n;
    }
    unsigned int *perm = (unsigned int *)std::malloc(n * sizeof(unsigned int));
    for (unsigned int i = 0; i < n; ++i) perm[i] = order_kind == 1 ? n - 1 - i : i;
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (s == 0) s = 1;
    rt.body = body;
    rt.body_arg = arg;
    const double deadline = now() + time_limit();
    int status = 0;
    const unsigned long long gx = rt.gdim.x, gxy = gx * rt.gdim.y;
    const unsigned long long total = gxy * rt.gdim.z;
    const unsigned long long count = nblocks < 0 ? total : (unsigned long long)nblocks;
    for (unsigned long long b = 0; b < count && !status; ++b) {
        const unsigned long long lin = nblocks < 0 ? b : (unsigned long long)blocks[b];
        if (lin >= total) continue;
        rt.block_lin = lin;
        rt.bidx = uint3{(unsigned int)(lin % gx), (unsigned int)(lin % gxy / gx),
                        (unsigned int)(lin / gxy)};
        if (order_kind == 2)
            for (unsigned int i = n - 1; i > 0; --i) {
                const unsigned int j = (unsigned int)(rng_next(s) % (i + 1));
                const unsigned int t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
        status = run_block(n, perm, err, errlen, kernel, 100000000ull, deadline);
    }
    std::free(perm);
    return status;
}

} // namespace opw_emu

#define threadIdx (opw_emu::rt.cur->tid)
#define blockIdx (opw_emu::rt.bidx)
#define blockDim (opw_emu::rt.bdim)
#define gridDim (opw_emu::rt.gdim)
#define warpSize 32
#define __syncthreads() opw_emu::syncthreads(__LINE__)
#define __syncwarp(...) ((void)0)
#define __shfl_down_sync(mask, var, delta, ...) \
    opw_emu::shuffle((mask), (var), (delta), opw_emu_width(__VA_ARGS__ + 0), opw_emu::SHFL_DOWN, __LINE__)
#define __shfl_up_sync(mask, var, delta, ...) \
    opw_emu::shuffle((mask), (var), (delta), opw_emu_width(__VA_ARGS__ + 0), opw_emu::SHFL_UP, __LINE__)
#define __shfl_xor_sync(mask, var, lane_mask, ...) \
    opw_emu::shuffle((mask), (var), (lane_mask), opw_emu_width(__VA_ARGS__ + 0), opw_emu::SHFL_XOR, __LINE__)
#define __shfl_sync(mask, var, lane, ...) \
    opw_emu::shuffle((mask), (var), (lane), opw_emu_width(__VA_ARGS__ + 0), opw_emu::SHFL_IDX, __LINE__)
static inline int opw_emu_width(int w) { return w <= 0 || w > 32 ? 32 : w; }

/* Atomics: fibers never run at the same time, so a plain read-modify-write is atomic. */
template <typename T>
static inline T atomicAdd(T *address, T val) {
    const T old = *address;
    *address = old + val;
    return old;
}

#include "opw_emu_checks.h"
#include "opw_emu_convert.h"

#endif
