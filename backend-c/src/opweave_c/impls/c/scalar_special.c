#section helpers
/* opweave special functions (opweave.scalar.special), in double precision: the algorithms
   and the order of operations of opweave_python.special_math_extra. C99 on <math.h>, no
   CPython; uses the opw_sm_* helpers of scalar_math.c (emitted before these). */
#ifndef OPW_SC_FN
#define OPW_SC_FN static inline OPW_HOT
#endif
#define OPW_SS_EPS 2.220446049250313e-16
#define OPW_SS_TINY 1e-300
#define OPW_SS_PI 3.141592653589793
#define OPW_SS_SQRT_PI 1.7724538509055159
#define OPW_SS_SQRT2 1.4142135623730951
#define OPW_SS_LOG2 0.6931471805599453

/* ---------------------------------------------------------------- inverse error functions */

/* x >= 0 with log(erfc(x)) = logz (for logz <= log(0.5)): Newton's method on
   log(erfcx(x)) - x * x. */
OPW_SC_FN double opw_ss_log_erfc_inverse(double logz) {
    double x = -logz, e, g, step;
    int i;
    if (0.0 > x) x = 0.0;
    x = sqrt(x);
    for (i = 0; i < 100; i++) {
        e = opw_sm_erfcx(x);
        g = log(e) - x * x - logz;
        step = g / (-2.0 / (OPW_SS_SQRT_PI * e));
        x -= step;
        if (fabs(step) <= 4 * OPW_SS_EPS * fabs(x)) break;
    }
    return x;
}

OPW_SC_FN double opw_ss_erfcinv(double z) {
    if (isnan(z) || z < 0.0 || z > 2.0) return NAN;
    if (z == 0.0) return INFINITY;
    if (z == 2.0) return -INFINITY;
    if (0.5 <= z && z <= 1.5) return opw_sm_erfinv(1.0 - z);
    if (z > 1.5) return -opw_ss_log_erfc_inverse(log(2.0 - z));
    return opw_ss_log_erfc_inverse(log(z));
}

OPW_SC_FN double opw_ss_ndtri_exp(double y) {
    if (isnan(y) || y > 0.0) return NAN;
    if (y == 0.0) return INFINITY;
    if (y == -INFINITY) return -INFINITY;
    if (y > -OPW_SS_LOG2) return OPW_SS_SQRT2 * opw_ss_erfcinv(-2.0 * expm1(y));
    if (y > -2.0 * OPW_SS_LOG2) return -OPW_SS_SQRT2 * opw_sm_erfinv(1.0 - 2.0 * exp(y));
    return -OPW_SS_SQRT2 * opw_ss_log_erfc_inverse(y + OPW_SS_LOG2);
}

/* ---------------------------------------------------------------- modified Bessel functions */

OPW_SC_FN int opw_ss_is_int(double v) { return isfinite(v) && v == floor(v); }

/* The sign of gamma(z). */
OPW_SC_FN double opw_ss_gamma_sign(double z) {
    return z < 0 && fabs(fmod(floor(z), 2.0)) == 1.0 ? -1.0 : 1.0;
}

/* n! for an integer 0 <= n <= 170, rounded once: the product in two parts (hi + lo, fma
   giving each product's rounding error exactly), as Python's float(math.factorial(n)). */
OPW_SC_FN double opw_ss_factorial(double n) {
    double hi = 1.0, lo = 0.0, k, p;
    for (k = 2.0; k <= n; k += 1.0) {
        p = hi * k;
        lo = lo * k + fma(hi, k, -p);
        hi = p + lo;
        lo = lo - (hi - p);
    }
    return hi + lo;
}

/* exp(-scale) (x/2)^v / gamma(v + 1) (its logarithm log_t0): for an integer order up to
   170 whose powers stay normal, pow and the factorial, rounded once each (exp(log_t0)
   carries the rounding of the logarithm into the result: about |log_t0| ulps, 60 to 290
   at the order 100). */
OPW_SC_FN double opw_ss_iv_first_term(double v, double half, double log_half, double log_t0,
                                      double scale) {
    if (v >= 0.0 && v <= 170.0 && v == floor(v) && half > 0.0 && fabs(v * log_half) < 700.0
        && scale < 700.0 && log_t0 > -700.0)
        return pow(half, v) / opw_ss_factorial(v) * exp(-scale);
    return opw_ss_gamma_sign(v + 1.0) * exp(log_t0);
}

/* exp(-scale) * sum((x/2)^(2k+v) / (k! gamma(v+k+1))) for x > 0. */
OPW_SC_FN double opw_ss_iv_series(double v, double x, double scale) {
    double half, log_half, log_t0, term, total, q, k = 0.0;
    half = 0.5 * x; /* 0 for the smallest subnormal x: then log(x) - log(2) */
    log_half = half > 0.0 ? log(half) : log(x) - 0.6931471805599453;
    log_t0 = v * log_half - opw_sm_gammaln(v + 1.0) - scale;
    if (log_t0 > 709.0) return INFINITY;
    term = opw_ss_iv_first_term(v, half, log_half, log_t0, scale);
    total = term;
    q = 0.25 * x * x;
    for (;;) {
        k += 1.0;
        term *= q / (k * (v + k));
        total += term;
        if (fabs(term) <= OPW_SS_EPS * fabs(total) * 0.5 && k > v) return total;
        if (!isfinite(total) || k > 100000.0) return total;
    }
}

/* exp(-x) iv(v, x) by the asymptotic expansion (x large, x > v * v). */
OPW_SC_FN double opw_ss_iv_asymptotic_scaled(double v, double x) {
    double mu = 4.0 * v * v, term = 1.0, total = 1.0, nw, odd;
    int k;
    for (k = 1; k < 200; k++) {
        odd = 2.0 * k - 1.0;
        nw = -term * (mu - odd * odd) / (k * 8.0 * x);
        if (fabs(nw) >= fabs(term) && k > 2) break;
        term = nw;
        total += term;
        if (fabs(term) <= OPW_SS_EPS * fabs(total) * 0.5) break;
    }
    return total / sqrt(2.0 * OPW_SS_PI * x);
}

/* iv(v, x), times exp(-|x|) where scaled. */
OPW_SC_FN double opw_ss_iv_any(double v, double x, int scaled) {
    double r, sign = 1.0;
    /* SciPy's values: NaN for an infinite x; 0 (iv) or NaN (ive) for an infinite order */
    if (isnan(v) || isnan(x) || isinf(x)) return NAN;
    if (isinf(v)) return scaled ? NAN : 0.0;
    if (x < 0.0) {
        if (!opw_ss_is_int(v)) return NAN;
        if (fmod(v, 2.0) != 0.0) sign = -1.0;
        x = -x;
    }
    if (v < 0.0 && opw_ss_is_int(v)) v = -v;
    if (x == 0.0) {
        if (v == 0.0) r = 1.0;
        else if (v > 0.0) r = 0.0;
        else r = scaled ? NAN : INFINITY; /* SciPy's values at 0 for v < 0 */
    } else if (x > 40.0 && x > v * v) {
        r = opw_ss_iv_asymptotic_scaled(v, x);
        if (!scaled) r = x > 709.0 ? copysign(INFINITY, r) : r * exp(x);
    } else {
        r = opw_ss_iv_series(v, x, scaled ? x : 0.0);
    }
    return sign < 0.0 ? -r : r;
}

OPW_SC_FN double opw_ss_iv(double v, double x) { return opw_ss_iv_any(v, x, 0); }
OPW_SC_FN double opw_ss_ive(double v, double x) { return opw_ss_iv_any(v, x, 1); }
OPW_SC_FN double opw_ss_i0(double x) { return opw_ss_iv_any(0.0, x, 0); }
OPW_SC_FN double opw_ss_i1(double x) { return opw_ss_iv_any(1.0, x, 0); }

/* ---------------------------------------------------------------- Bessel functions */

/* J_n(x) (n = 0, 1) by its power series, for 0 <= x <= 2. */
OPW_SC_FN double opw_ss_j_series(int n, double x) {
    double q = -0.25 * x * x, term = n == 0 ? 1.0 : 0.5 * x, total = term;
    int k;
    for (k = 1; k < 60; k++) {
        term *= q / (double)(k * (n + k));
        total += term;
        if (fabs(term) <= OPW_SS_EPS * fabs(total) * 0.25) break;
    }
    return total;
}

/* J_n(x) (n = 0, 1) for 0 < x <= 25 by Miller's backward recurrence, normalized by
   J0 + 2 (J2 + J4 + ...) = 1. */
OPW_SC_FN double opw_ss_j_miller(int n, double x) {
    int top = 2 * (((int)x + 40) / 2), k;
    double j_next = 0.0, j = 1e-30, norm = 0.0, j1 = 0.0, j_prev;
    for (k = top; k > 0; k--) { /* j = J_k, j_next = J_{k+1} */
        if (k % 2 == 0) norm += 2.0 * j;
        j_prev = 2.0 * k / x * j - j_next;
        j_next = j;
        j = j_prev;
        if (k == 1) j1 = j_next;
        if (fabs(j) > 1e250) {
            j *= 1e-250;
            j_next *= 1e-250;
            norm *= 1e-250;
            j1 *= 1e-250;
        }
    }
    norm += j;
    return n == 0 ? j / norm : j1 / norm;
}

/* J_n(x) (n = 0, 1) by Hankel's asymptotic expansion, for x > 25. */
OPW_SC_FN double opw_ss_j_hankel(int n, double x) {
    double mu = 4.0 * n * n, p = 1.0, q = 0.0, term = 1.0, nw, odd, c, cos_chi, sin_chi;
    int k;
    for (k = 1; k < 100; k++) {
        odd = 2.0 * k - 1.0;
        nw = term * (mu - odd * odd) / (k * 8.0 * x);
        if (fabs(nw) >= fabs(term) && k > 2) break;
        term = nw;
        if (k % 2) q += (k / 2) % 2 == 0 ? term : -term;
        else p += (k / 2) % 2 == 0 ? term : -term;
        if (fabs(term) < OPW_SS_EPS * 0.25) break;
    }
    c = (0.5 * n + 0.25) * OPW_SS_PI;
    cos_chi = cos(x) * cos(c) + sin(x) * sin(c);
    sin_chi = sin(x) * cos(c) - cos(x) * sin(c);
    /* pi x overflows near the largest double; the amplitude does not */
    return (isinf(OPW_SS_PI * x) ? sqrt(2.0 / OPW_SS_PI) / sqrt(x) : sqrt(2.0 / (OPW_SS_PI * x)))
           * (p * cos_chi - q * sin_chi);
}

OPW_SC_FN double opw_ss_jn(int n, double x) {
    double sign;
    if (isnan(x) || isinf(x)) return NAN; /* SciPy's value at +-inf (the limit would be 0) */
    sign = x < 0 && n % 2 ? -1.0 : 1.0;
    x = fabs(x);
    if (x <= 2.0) return sign * opw_ss_j_series(n, x);
    if (x <= 25.0) return sign * opw_ss_j_miller(n, x);
    return sign * opw_ss_j_hankel(n, x);
}

OPW_SC_FN double opw_ss_j0(double x) { return opw_ss_jn(0, x); }
OPW_SC_FN double opw_ss_j1(double x) { return opw_ss_jn(1, x); }

/* ---------------------------------------------------------------- incomplete beta function */

OPW_SC_FN double opw_ss_nonzero(double d) { return fabs(d) > OPW_SS_TINY ? d : OPW_SS_TINY; }

/* The continued fraction of the incomplete beta function (modified Lentz). */
OPW_SC_FN double opw_ss_beta_fraction(double a, double b, double x) {
    double qab = a + b, qap = a + 1.0, qam = a - 1.0, c = 1.0, d, h, aa, delta, m, m2;
    int i;
    d = 1.0 - qab * x / qap;
    d = 1.0 / opw_ss_nonzero(d);
    h = d;
    for (i = 1; i < 100000; i++) {
        m = (double)i;
        m2 = 2.0 * m;
        aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = 1.0 / opw_ss_nonzero(d);
        c = opw_ss_nonzero(1.0 + aa / c);
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = 1.0 / opw_ss_nonzero(d);
        c = opw_ss_nonzero(1.0 + aa / c);
        delta = d * c;
        h *= delta;
        if (fabs(delta - 1.0) < OPW_SS_EPS) break;
    }
    return h;
}

/* gammaln(z) - ((z - 1/2) log(z) - z + log(2 pi) / 2) for z >= 1e5 (Stirling's series; its
   first omitted term is below 1e-48 there). */
OPW_SC_FN double opw_ss_stirling_rest(double z) {
    double r = 1.0 / (z * z);
    return (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r / 1680.0))) / z;
}

/* log(B(a, b)) for a, b > 0, to a few ulps: where the larger argument is 1e5 or more,
   gammaln(a + b) - gammaln(a) comes from Stirling's series rather than from a difference of
   two large gammaln values (which loses 1e-16 a log(a)), as opweave_python computes it. */
OPW_SC_FN double opw_ss_log_beta(double a, double b) {
    double t, rise;
    if (a < b) { t = a; a = b; b = t; }
    if (a >= 1e5) {
        rise = (a - 0.5) * log1p(b / a) + b * log(a + b) - b;
        return opw_sm_gammaln(b) - (rise + opw_ss_stirling_rest(a + b) - opw_ss_stirling_rest(a));
    }
    return opw_sm_gammaln(a) + opw_sm_gammaln(b) - opw_sm_gammaln(a + b);
}

OPW_SC_FN double opw_ss_betainc(double a, double b, double x) {
    double log_front;
    if (isnan(a) || isnan(b) || isnan(x)) return NAN;
    if (a < 0.0 || b < 0.0 || x < 0.0 || x > 1.0) return NAN;
    /* SciPy's limits: all the mass at 0 (a = 0 or b = inf) or at 1 (b = 0 or a = inf) */
    if ((a == 0.0 && b == 0.0) || (isinf(a) && isinf(b))) return NAN;
    if (a == 0.0 || isinf(b)) return x > 0.0 ? 1.0 : 0.0;
    if (b == 0.0 || isinf(a)) return x < 1.0 ? 0.0 : 1.0;
    if (x == 0.0 || x == 1.0) return x;
    log_front = a * log(x) + b * log1p(-x) - opw_ss_log_beta(a, b);
    if (x < (a + 1.0) / (a + b + 2.0)) {
        return exp(log_front) * opw_ss_beta_fraction(a, b, x) / a;
    }
    return 1.0 - exp(log_front) * opw_ss_beta_fraction(b, a, 1.0 - x) / b;
}

/* ---------------------------------------------------------------- inverse incomplete gamma */

/* Numerical Recipes' first guess of x with gammainc(a, x) = p = 1 - q. */
OPW_SC_FN double opw_ss_gamma_guess(double a, double p, double q) {
    double pp, t, x, v;
    if (a > 1.0) {
        pp = p < 0.5 ? p : q;
        t = sqrt(-2.0 * log(pp));
        x = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t;
        if (p < 0.5) x = -x;
        v = a * pow(1.0 - 1.0 / (9.0 * a) - x / (3.0 * sqrt(a)), 3.0);
        return v > 1e-3 ? v : 1e-3;
    }
    t = 1.0 - a * (0.253 + a * 0.12);
    if (p < t) return pow(p / t, 1.0 / a);
    return 1.0 - log(q / (1.0 - t > OPW_SS_TINY ? 1.0 - t : OPW_SS_TINY));
}

/* x with gammainc(a, x) = p (q = 1 - p), by Newton's method on log(P(a, x)) = log(p),
   or on log(Q(a, x)) = log(q) where upper. */
OPW_SC_FN double opw_ss_gamma_inverse(double a, double p, double q, int upper) {
    double x = opw_ss_gamma_guess(a, p, q), small, lg, log_target, log_val, log_ratio, r, step;
    double nw;
    int i;
    /* P ~ x^a / gamma(a + 1) near 0: where that solution underflows, it is 0 */
    if (((p < 0.5 ? log(p) : log1p(-q)) + opw_sm_gammaln(a + 1.0)) / a < -745.2) return 0.0;
    if (!(x > OPW_SS_TINY)) x = OPW_SS_TINY; /* Python's max(guess, tiny) */
    if (p < 0.5) { /* the leading term of the series: P ~ x^a / gamma(a + 1) */
        small = exp((log(p) + opw_sm_gammaln(a + 1.0)) / a);
        if (small < 0.2 * a) x = small;
    }
    lg = opw_sm_gammaln(a);
    log_target = log(upper ? q : p);
    for (i = 0; i < 300; i++) {
        if (x <= 0.0) return 0.0;
        log_val = isfinite(x) ? opw_sm_log_regularized_gamma(a, x, !upper) : -INFINITY;
        if (log_val == -INFINITY) {
            x = upper ? x * 0.5 : x * 2.0;
            continue;
        }
        log_ratio = log_val - (-x + (a - 1.0) * log(x) - lg); /* log(val / dP/dx) */
        r = log_val - log_target;
        step = r * exp(700.0 < log_ratio ? 700.0 : log_ratio);
        nw = upper ? x + step : x - step;
        if (nw <= 0.0) nw = 0.1 * x;
        if (fabs(nw - x) <= 4 * OPW_SS_EPS * nw) return nw;
        x = nw;
    }
    return x;
}

/* SciPy's value outside the open domain (1 when *out is set): NaN outside a >= 0,
   0 <= y <= 1; the ends 0 and inf of the range at y = 0 and y = 1 (for every a, 0 and inf
   included); NaN for 0 < y < 1 where a is 0 or inf (the function of x is constant there). */
OPW_SC_FN int opw_ss_gamma_inverse_edge(double a, double y, int lower, double* out) {
    if (isnan(a) || isnan(y) || a < 0.0 || y < 0.0 || y > 1.0) { *out = NAN; return 1; }
    if (y == 0.0 || y == 1.0) { *out = (y == 0.0) == lower ? 0.0 : INFINITY; return 1; }
    if (a == 0.0 || isinf(a)) { *out = NAN; return 1; }
    return 0;
}

/* Above this shape both inverses are a itself: the solution is a + sqrt(a) z + O(1) with
   |z| < 39 for every double y in (0, 1), within half an ulp of a. */
#define OPW_SS_HUGE_A 1e40

OPW_SC_FN double opw_ss_gammaincinv(double a, double y) {
    double edge;
    if (opw_ss_gamma_inverse_edge(a, y, 1, &edge)) return edge;
    if (a > OPW_SS_HUGE_A) return a;
    return opw_ss_gamma_inverse(a, y, 1.0 - y, y > 0.5);
}

OPW_SC_FN double opw_ss_gammainccinv(double a, double y) {
    double edge;
    if (opw_ss_gamma_inverse_edge(a, y, 0, &edge)) return edge;
    if (a > OPW_SS_HUGE_A) return a;
    return opw_ss_gamma_inverse(a, 1.0 - y, y, y < 0.5);
}
