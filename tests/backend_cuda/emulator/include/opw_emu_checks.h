/* The emulated device's memory checks (test infrastructure), included by cuda_fp16.h.
 *
 * Before compiling a module, the stand-in (fake/pycuda/_instrument.py) rewrites two things of
 * the generated source, whose text is otherwise unchanged:
 *
 * - `__shared__ T name[...];` declares an array of `opw_emu::shared_elem<T>`: each element
 *   carries a shadow (the block that last wrote it, the barrier interval, the thread that wrote
 *   it and up to two threads that read it in that interval). A read of an element no thread of
 *   the block has written, or an element accessed by two threads between the same two
 *   barriers with at least one write, is reported. Values exchanged by warp shuffles never
 *   pass through shared memory and are not checked.
 * - a kernel's pointer parameter `T* p` becomes an `opw_emu::gptr<T>`: `p[i]` is checked
 *   against the allocation `p` points into (reads and writes before its start or past its
 *   end are reported and not done), and every write records its thread in a shadow of the
 *   allocation, so that two threads of one launch writing the same element are reported.
 *
 * A fault stops the faulting thread for good and ends the launch with an error naming the
 * kernel, the block, the threads and the place.
 */
#ifndef OPW_EMU_CHECKS_H
#define OPW_EMU_CHECKS_H

#include <type_traits>

namespace opw_emu {

/* Report a fault from inside a kernel: the first report of a launch goes to its error
   buffer, and the running fiber stops (it is never resumed; the launch ends with it). */
__attribute__((format(printf, 1, 2))) static void report(const char *fmt, ...) {
    if (!rt.failed) {
        char msg[448];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fail(rt.err, rt.errlen, rt.kernel, "%s", msg);
        rt.failed = 1;
    }
    yield_as(FAILED, 0);
    __builtin_trap();
}

/* "(x, y, z)" of the block's thread number `lin`. */
struct ThreadText {
    char text[48];
};
static inline ThreadText thread_text(unsigned int lin) {
    ThreadText t;
    const unsigned int bx = rt.bdim.x, bxy = rt.bdim.x * rt.bdim.y;
    std::snprintf(t.text, sizeof t.text, "(%u, %u, %u)", lin % bx, lin % bxy / bx, lin / bxy);
    return t;
}

/* ------------------------------------------------------------------ shared memory */

struct SharedShadow {
    unsigned long long gen; /* rt.block_gen of the block that wrote it (other: never written) */
    unsigned int epoch;     /* the barrier interval of the accesses below */
    int writer, reader1, reader2;
};

/* Names a `__shared__` array for the reports (one object per declaration; registers once). */
struct SharedName {
    template <typename A> SharedName(A &array, const char *name) {
        const void *base = (const void *)&array;
        for (int i = 0; i < rt.nshared; ++i)
            if (rt.shared[i].base == base) return;
        if (rt.nshared < (int)(sizeof rt.shared / sizeof rt.shared[0]))
            rt.shared[rt.nshared++] =
                SharedArray{base, sizeof(A), sizeof(std::remove_all_extents_t<A>), name};
    }
};

struct PlaceText {
    char text[96];
};
static inline PlaceText shared_place(const void *element) {
    PlaceText p;
    const char *c = (const char *)element;
    for (int i = 0; i < rt.nshared; ++i) {
        const SharedArray &a = rt.shared[i];
        const char *base = (const char *)a.base;
        if (c >= base && c < base + a.bytes) {
            std::snprintf(p.text, sizeof p.text, "shared array %s, element offset %zu", a.name,
                          (size_t)(c - base) / a.elem);
            return p;
        }
    }
    std::snprintf(p.text, sizeof p.text, "a shared element at %p", element);
    return p;
}

static void shared_race(const void *element, int first, const char *did, int second,
                        const char *does) {
    report("shared-memory race on %s: thread %s %s it and thread %s %s it between the same "
           "two barriers (barrier interval %u of the block)",
           shared_place(element).text, thread_text((unsigned int)first).text, did,
           thread_text((unsigned int)second).text, does, rt.epoch);
}

static inline void shared_read(SharedShadow &s, const void *element) {
    const int t = (int)rt.cur->lin;
    if (s.gen != rt.block_gen)
        report("read of never-written shared memory: thread %s reads %s, which no thread of "
               "the block has written",
               thread_text((unsigned int)t).text, shared_place(element).text);
    if (s.epoch != rt.epoch) {
        s.epoch = rt.epoch;
        s.writer = -1;
        s.reader1 = t;
        s.reader2 = -1;
        return;
    }
    if (s.writer >= 0 && s.writer != t) shared_race(element, s.writer, "writes", t, "reads");
    if (s.reader1 < 0) s.reader1 = t;
    else if (s.reader1 != t && s.reader2 < 0) s.reader2 = t;
}

static inline void shared_write(SharedShadow &s, const void *element) {
    const int t = (int)rt.cur->lin;
    if (s.gen != rt.block_gen || s.epoch != rt.epoch) {
        s.gen = rt.block_gen;
        s.epoch = rt.epoch;
        s.writer = t;
        s.reader1 = s.reader2 = -1;
        return;
    }
    if (s.writer >= 0 && s.writer != t) shared_race(element, s.writer, "writes", t, "writes");
    const int other = (s.reader1 >= 0 && s.reader1 != t)   ? s.reader1
                      : (s.reader2 >= 0 && s.reader2 != t) ? s.reader2
                                                           : -1;
    if (other >= 0) shared_race(element, other, "reads", t, "writes");
    s.writer = t;
}

/* One element of a checked `__shared__` array (zero-initialised static storage: "never
   written"). Reads and writes go through its conversion and assignment operators. */
template <typename T> struct shared_elem {
    T value;
    mutable SharedShadow shadow;

    operator T() const {
        shared_read(shadow, this);
        return value;
    }
    shared_elem &operator=(const T &x) {
        shared_write(shadow, this);
        value = x;
        return *this;
    }
    shared_elem &operator=(const shared_elem &other) { return *this = (T)other; }
#define OPW_EMU_COMPOUND(op)                                                                       \
    template <typename U> shared_elem &operator op##=(const U &x) {                               \
        const T current = (T) * this;                                                              \
        return *this = (T)(current op x);                                                          \
    }
    OPW_EMU_COMPOUND(+)
    OPW_EMU_COMPOUND(-)
    OPW_EMU_COMPOUND(*)
    OPW_EMU_COMPOUND(/)
    OPW_EMU_COMPOUND(%)
    OPW_EMU_COMPOUND(&)
    OPW_EMU_COMPOUND(|)
    OPW_EMU_COMPOUND(^)
    OPW_EMU_COMPOUND(<<)
    OPW_EMU_COMPOUND(>>)
    shared_elem &operator++() { return *this += 1; }
    shared_elem &operator--() { return *this -= 1; }
    T operator++(int) {
        const T old = (T) * this;
        *this = (T)(old + 1);
        return old;
    }
    T operator--(int) {
        const T old = (T) * this;
        *this = (T)(old - 1);
        return old;
    }
};

/* ------------------------------------------------------------------ global memory */

/* The allocation a pointer parameter points into (size 0, number -1: none), and the shadow
   of the threads that wrote it in this launch (shared by the parameters of one allocation). */
struct Region {
    unsigned long long start, size;
    long long number;
    Region *owner;
    int shift; /* log2 of the element size of the first write (-1: no write yet) */
    unsigned long long npages;
    unsigned long long **pages;
};
static const unsigned int SHADOW_PAGE = 512; /* elements per shadow page */

/* regions: (start, size, number) per pointer parameter, from the stand-in. */
static inline void set_regions(Region *r, int count, const unsigned long long *info) {
    for (int j = 0; j < count; ++j) {
        r[j] = Region{info[3 * j], info[3 * j + 1], (long long)info[3 * j + 2], &r[j], -1, 0,
                      nullptr};
        for (int i = 0; i < j; ++i)
            if (r[i].number >= 0 && r[i].number == r[j].number) {
                r[j].owner = &r[i];
                break;
            }
    }
}

static inline void free_regions(Region *r, int count) {
    for (int j = 0; j < count; ++j) {
        if (r[j].pages == nullptr) continue;
        for (unsigned long long p = 0; p < r[j].npages; ++p) std::free(r[j].pages[p]);
        std::free(r[j].pages);
        r[j].pages = nullptr;
    }
}

static void global_bounds(const Region *r, const char *param, unsigned long long a, size_t bytes,
                          const char *what) {
    const unsigned int t = rt.cur->lin;
    if (r->number < 0)
        report("global %s through parameter %s by thread %s: the pointer is inside no "
               "allocation (%zu byte(s) at %#llx)",
               what, param, thread_text(t).text, bytes, a);
    const long long off = (long long)(a - r->start);
    report("global %s %s allocation %lld (%llu bytes) through parameter %s by thread %s: "
           "%zu byte(s) at byte offset %lld",
           what, off < 0 ? "before the start of" : "past the end of", r->number, r->size, param,
           thread_text(t).text, bytes, off);
}

/* The thread that last wrote the element at byte offset `off` (0: none), recorded as
   (linear block << 10 | thread) + 1; reports when another thread of the launch did. */
static void global_written(Region *owner, const char *param, unsigned long long off,
                           size_t bytes) {
    int shift = 0;
    while ((1ull << shift) < bytes) ++shift;
    if (owner->shift < 0) {
        owner->shift = shift;
        owner->npages = ((owner->size >> shift) + SHADOW_PAGE) / SHADOW_PAGE;
        owner->pages =
            (unsigned long long **)std::calloc(owner->npages, sizeof(unsigned long long *));
        if (owner->pages == nullptr) owner->shift = 99;
    }
    if (owner->shift != shift || (off & ((1ull << shift) - 1)) != 0) return; /* not covered */
    const unsigned long long index = off >> shift;
    unsigned long long *&page = owner->pages[index / SHADOW_PAGE];
    if (page == nullptr) {
        page = (unsigned long long *)std::calloc(SHADOW_PAGE, sizeof(unsigned long long));
        if (page == nullptr) return;
    }
    unsigned long long &slot = page[index % SHADOW_PAGE];
    const unsigned long long me = ((rt.block_lin << 10) | rt.cur->lin) + 1;
    if (slot != 0 && slot != me) {
        const unsigned long long block = (slot - 1) >> 10;
        const unsigned long long gx = rt.gdim.x, gxy = gx * rt.gdim.y;
        report("two threads of the launch write the same global element: thread %s of block "
               "(%llu, %llu, %llu) and thread %s of this block write byte offset %llu of "
               "allocation %lld through parameter %s",
               thread_text((unsigned int)((slot - 1) & 1023)).text, block % gx, block % gxy / gx,
               block / gxy, thread_text(rt.cur->lin).text, off, owner->number, param);
    }
    slot = me;
}

enum { READ = 0, WRITE = 1, ADDRESS = 2 };

static inline void global_access(Region *r, const char *param, unsigned long long a,
                                 size_t bytes, int kind) {
    if (a < r->start || a - r->start > r->size || r->size - (a - r->start) < bytes ||
        r->number < 0)
        global_bounds(r, param, a, bytes, kind == WRITE ? "write" : kind == READ ? "read"
                                                                     : "access");
    if (kind == WRITE) global_written(r->owner, param, a - r->start, bytes);
}

/* `p[i]` of a checked pointer parameter. */
template <typename T> struct gref {
    using V = std::remove_const_t<T>;
    unsigned long long address;
    Region *region;
    const char *param;

    operator V() const {
        global_access(region, param, address, sizeof(T), READ);
        return *(const T *)address;
    }
    gref &operator=(const V &x) {
        global_access(region, param, address, sizeof(T), WRITE);
        *(T *)address = x;
        return *this;
    }
    gref &operator=(const gref &other) { return *this = (V)other; }
    T *operator&() const {
        global_access(region, param, address, sizeof(T), ADDRESS);
        return (T *)address;
    }
#define OPW_EMU_GCOMPOUND(op)                                                                      \
    template <typename U> gref &operator op##=(const U &x) {                                      \
        const V current = (V) * this;                                                              \
        return *this = (V)(current op x);                                                          \
    }
    OPW_EMU_GCOMPOUND(+)
    OPW_EMU_GCOMPOUND(-)
    OPW_EMU_GCOMPOUND(*)
    OPW_EMU_GCOMPOUND(/)
    OPW_EMU_GCOMPOUND(%)
    OPW_EMU_GCOMPOUND(&)
    OPW_EMU_GCOMPOUND(|)
    OPW_EMU_GCOMPOUND(^)
};

/* A kernel's checked pointer parameter. */
template <typename T> struct gptr {
    T *pointer;
    Region *region;
    const char *param;

    template <typename I> gref<T> operator[](I i) const {
        const unsigned long long a =
            (unsigned long long)pointer + (unsigned long long)((long long)i * (long long)sizeof(T));
        return gref<T>{a, region, param};
    }
    gref<T> operator*() const { return (*this)[0]; }
    template <typename I> gptr operator+(I i) const {
        return gptr{(T *)((unsigned long long)pointer +
                          (unsigned long long)((long long)i * (long long)sizeof(T))),
                    region, param};
    }
    template <typename I> gptr operator-(I i) const { return *this + (-(long long)i); }
    template <typename I> gptr &operator+=(I i) { return *this = *this + i; }
    template <typename I> gptr &operator-=(I i) { return *this = *this - i; }
    operator T *() const { return pointer; }
};

} // namespace opw_emu

template <typename T, typename U> static inline T atomicAdd(opw_emu::gptr<T> p, U val) {
    return atomicAdd(&p[0], (T)val);
}

#endif
