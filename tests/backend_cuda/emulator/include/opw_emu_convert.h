/* The emulated device's float to integer conversions (test infrastructure), included by
 * cuda_fp16.h.
 *
 * A GPU converts a float to an integer with `cvt.rzi` (PTX float-to-integer conversions
 * saturate): NaN gives 0, values below or above the range give its minimum or maximum. nvcc
 * converts to an 8- or 16-bit type through the 32-bit type of the same signedness (`cvt.rzi.
 * s32`/`cvt.rzi.u32`), whose result is then truncated. x86-64 gives other results for the same
 * C cast (-1.0 to `unsigned char` is 255 there, 0 on a GPU), so the stand-in rewrites every C
 * cast to an integer type written `(T)(expr)` (fake/pycuda/_emulator.py) into
 * `opw_emu::cvt<T>(expr)`, which does what the GPU does. Other conversions are unchanged.
 */
#ifndef OPW_EMU_CONVERT_H
#define OPW_EMU_CONVERT_H

#include <limits>
#include <type_traits>

namespace opw_emu {

/* The value type of an operand: checked shared and global elements read as their element. */
template <typename S> struct value_of { using type = S; };
template <typename T> struct value_of<shared_elem<T>> { using type = T; };
template <typename T> struct value_of<gref<T>> { using type = std::remove_const_t<T>; };

/* The conversion of `x` to the integer type `T` (or any other type: a plain conversion). */
template <typename T, typename S> static inline T cvt(const S &x) {
    using V = typename value_of<std::remove_cv_t<std::remove_reference_t<S>>>::type;
    if constexpr (std::is_floating_point_v<V> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        using Wide = std::conditional_t<
            (sizeof(T) > 4), std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>,
            std::conditional_t<std::is_signed_v<T>, int, unsigned int>>;
        const int bits = 8 * (int)sizeof(Wide);
        const double v = (double)(V)x;
        if (v != v) return (T)0;
        const double t = std::trunc(v);
        const double low = std::is_signed_v<Wide> ? -std::ldexp(1.0, bits - 1) : 0.0;
        const double high = std::ldexp(1.0, std::is_signed_v<Wide> ? bits - 1 : bits);
        if (t < low) return (T)std::numeric_limits<Wide>::min();
        if (t >= high) return (T)std::numeric_limits<Wide>::max();
        return (T)(Wide)t;
    } else {
        return (T)x;
    }
}

} // namespace opw_emu

#endif
