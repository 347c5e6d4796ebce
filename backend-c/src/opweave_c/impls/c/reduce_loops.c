#section plan

/* The loops below keep 8 independent accumulators (NumPy's order of operations). Built
 * for 512-bit vectors they would be one vector and one dependency chain: GCC builds them
 * for 256-bit vectors, two chains, where the module targets AVX-512. */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define OPW_RED_LOOP __attribute__((target("prefer-vector-width=256"))) OPW_HOT
#else
#define OPW_RED_LOOP OPW_HOT
#endif


#section simd

/* opweave reductions: SSE2 for float maxima and minima where the target has it. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define OPW_RED_SSE2 1
#endif

