// Central finite differences of a double-precision function, for checking backward passes.
//
//   fd::gradient(x, f, h)  d f / d x[i] ≈ (f(x + h·e_i) − f(x − h·e_i)) / 2h for every i, with x
//                          given in double (the reference runs in double, so h = 1e-4 leaves an error
//                          of O(h²) ≈ 1e-8 relative, far below the float32 core's rounding).
//   fd::gradient_at(x, f, indices, h)  the same at the listed indices only (big inputs).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace fd {

constexpr double kStep = 1e-4;

inline double partial(std::vector<double>& x, const std::function<double()>& f, std::size_t i, double h) {
  const double keep = x[i];
  x[i] = keep + h;
  const double up = f();
  x[i] = keep - h;
  const double down = f();
  x[i] = keep;
  return (up - down) / (2 * h);
}

inline std::vector<double> gradient(std::vector<double>& x, const std::function<double()>& f,
                                    double h = kStep) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) g[i] = partial(x, f, i, h);
  return g;
}

inline std::vector<double> gradient_at(std::vector<double>& x, const std::function<double()>& f,
                                       const std::vector<std::size_t>& indices, double h = kStep) {
  std::vector<double> g;
  for (std::size_t i : indices) g.push_back(partial(x, f, i, h));
  return g;
}

template <class T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace fd
