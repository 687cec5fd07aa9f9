#include "fit/least_squares.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace sextant {

namespace {
using Vector = std::vector<double>;

Vector residuals(const FitProblem& p, const Vector& x, const std::vector<std::size_t>& rows) {
    Vector r;
    r.reserve(rows.size());
    for (auto i : rows) r.push_back(p.predict(x, i) / p.measured[i] - 1.0);
    return r;
}

double rms(const Vector& r) {
    double s = 0;
    for (double v : r) s += v * v;
    return r.empty() ? 0.0 : std::sqrt(s / static_cast<double>(r.size()));
}

// Solves the small dense system A x = b by Gaussian elimination with partial pivoting; returns
// false when A is (numerically) singular.
bool solve(std::vector<Vector> a, Vector b, Vector& x) {
    const std::size_t n = b.size();
    for (std::size_t c = 0; c < n; ++c) {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < n; ++r)
            if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
        if (std::fabs(a[pivot][c]) < 1e-12) return false;
        std::swap(a[c], a[pivot]);
        std::swap(b[c], b[pivot]);
        for (std::size_t r = c + 1; r < n; ++r) {
            const double k = a[r][c] / a[c][c];
            for (std::size_t j = c; j < n; ++j) a[r][j] -= k * a[c][j];
            b[r] -= k * b[c];
        }
    }
    x.assign(n, 0.0);
    for (std::size_t c = n; c-- > 0;) {
        double s = b[c];
        for (std::size_t j = c + 1; j < n; ++j) s -= a[c][j] * x[j];
        x[c] = s / a[c][c];
    }
    return true;
}

struct Solution {
    Vector x;
    std::size_t iterations = 0;
};

// Levenberg-Marquardt on the given rows, factors clamped to their bounds.
Solution minimise(const FitProblem& p, const std::vector<std::size_t>& rows) {
    const std::size_t n = p.initial.size();
    Vector x = p.initial;
    double lambda = 1e-3;
    Vector r = residuals(p, x, rows);
    std::size_t it = 0;
    for (; it < 100; ++it) {
        std::vector<Vector> jac(rows.size(), Vector(n));
        for (std::size_t k = 0; k < n; ++k) {
            Vector xk = x;
            const double h = 1e-6 * std::max(1.0, std::fabs(x[k]));
            xk[k] += h;
            Vector rk = residuals(p, xk, rows);
            for (std::size_t i = 0; i < rows.size(); ++i) jac[i][k] = (rk[i] - r[i]) / h;
        }
        std::vector<Vector> jtj(n, Vector(n, 0.0));
        Vector jtr(n, 0.0);
        for (std::size_t i = 0; i < rows.size(); ++i)
            for (std::size_t a = 0; a < n; ++a) {
                jtr[a] -= jac[i][a] * r[i];
                for (std::size_t b = 0; b < n; ++b) jtj[a][b] += jac[i][a] * jac[i][b];
            }
        bool improved = false;
        for (int tries = 0; tries < 10 && !improved; ++tries) {
            auto damped = jtj;
            for (std::size_t a = 0; a < n; ++a) damped[a][a] += lambda * std::max(jtj[a][a], 1e-12);
            Vector step;
            if (!solve(damped, jtr, step)) {
                lambda *= 10;
                continue;
            }
            Vector trial = x;
            for (std::size_t a = 0; a < n; ++a) trial[a] = std::clamp(x[a] + step[a], p.lower[a], p.upper[a]);
            Vector rt = residuals(p, trial, rows);
            if (rms(rt) < rms(r)) {
                const double gain = rms(r) - rms(rt);
                x = trial;
                r = rt;
                lambda = std::max(lambda / 10, 1e-9);
                improved = true;
                if (gain < 1e-12) return {x, it + 1};
            } else {
                lambda *= 10;
            }
        }
        if (!improved) break;
    }
    return {x, it};
}

void check_supported(const FitProblem& p) {
    const std::size_t n = p.factor_names.size();
    if (p.initial.size() != n || p.lower.size() != n || p.upper.size() != n || p.measured.size() != p.observations)
        throw InternalError("fit problem with inconsistent sizes");
    if (p.observations < n + 1)
        throw InputError("runs", std::to_string(p.observations) + " measured runs",
                         "fitting " + std::to_string(n) + " factors needs at least " + std::to_string(n + 1) +
                             " runs (factors + 1, so that each run can be predicted from a fit without it); fit fewer factors");
    for (std::size_t i = 0; i < p.observations; ++i)
        if (!(p.measured[i] > 0))
            throw InputError("runs/" + std::to_string(i), std::to_string(p.measured[i]), "measured step time must be positive");
    // A factor no run is sensitive to cannot be fitted: the data does not support it.
    for (std::size_t k = 0; k < n; ++k) {
        double sensitivity = 0;
        for (std::size_t i = 0; i < p.observations; ++i) {
            Vector x = p.initial;
            const double base = p.predict(x, i);
            x[k] *= 1.05;
            sensitivity = std::max(sensitivity, std::fabs(p.predict(x, i) / base - 1.0));
        }
        if (sensitivity < 1e-4)
            throw InputError("factors/" + p.factor_names[k], "", "no run's step time depends on this factor; the data cannot fit it");
    }
}
}  // namespace

FitResult fit_least_squares(const FitProblem& p) {
    check_supported(p);
    std::vector<std::size_t> all(p.observations);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    FitResult out;
    out.rms_error_before_pct = 100.0 * rms(residuals(p, p.initial, all));
    Solution best = minimise(p, all);
    out.factors = best.x;
    out.iterations = best.iterations;
    out.rms_error_after_pct = 100.0 * rms(residuals(p, best.x, all));
    Vector loo;
    for (std::size_t held = 0; held < p.observations; ++held) {
        std::vector<std::size_t> rows;
        for (auto i : all)
            if (i != held) rows.push_back(i);
        Solution s = minimise(p, rows);
        loo.push_back(p.predict(s.x, held) / p.measured[held] - 1.0);
    }
    out.leave_one_out_pct = 100.0 * rms(loo);
    return out;
}

}  // namespace sextant
