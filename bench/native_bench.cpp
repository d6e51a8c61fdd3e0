// Native timing of attn::MultiHeadAttention::forward for the benchmark (bench/run.mjs drives it).
//
// Usage: native_bench <problem.bin> <output.bin> <budget_ms> <need_weights 0|1> [runs]
//   problem.bin (little-endian): int32 B, T, E, H, then float32
//     x (B, T, E), in_proj_weight (3E, E), in_proj_bias (3E), out_proj.weight (E, E), out_proj.bias (E)
//   output.bin: float32 y (B, T, E) of the last timed run (run.mjs compares it with the others).
// Prints one JSON line: {"variant", "warmup", "runs", "median_ms", "min_ms",
//   "peak_heap_delta_bytes" (-1 when not counted), "peak_rss_bytes", "peak_rss_delta_bytes"}.
// Timing policy as bench/harness.mjs: warm up for max(10% of the budget, 250 ms) (at least one
// call), then timed calls until the budget is spent (3 … 2000 of them), report the median.
// With [runs] (for shapes that take seconds per call): no warm-up, exactly that many runs.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/multi_head.h"
#include "kernels/kernels.h"

// ---- heap accounting -------------------------------------------------------------------------
// The process's peak RSS moves in pages and proved unreliable here (deltas of 0 for 100 MB of
// buffers), so the memory column uses exact malloc accounting: these definitions interpose glibc's
// allocator for the whole process (operator new, Eigen and the core all end in malloc) and track
// live and peak usable bytes. Not under AddressSanitizer, which owns malloc itself.
#if defined(__SANITIZE_ADDRESS__)
#define ATTN_BENCH_COUNT_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_BENCH_COUNT_HEAP 0
#endif
#endif
#ifndef ATTN_BENCH_COUNT_HEAP
#define ATTN_BENCH_COUNT_HEAP 1
#endif

namespace {
std::size_t g_live_bytes = 0;  // single-threaded benchmark: plain counters
std::size_t g_peak_bytes = 0;
}  // namespace

#if ATTN_BENCH_COUNT_HEAP
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace {
void* note_alloc(void* p) {
  if (p) {
    g_live_bytes += malloc_usable_size(p);
    g_peak_bytes = std::max(g_peak_bytes, g_live_bytes);
  }
  return p;
}
void note_free(void* p) {
  if (p) g_live_bytes -= malloc_usable_size(p);
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) {
  return note_alloc(__libc_malloc(n));
}
void* calloc(std::size_t count, std::size_t n) {
  return note_alloc(__libc_calloc(count, n));
}
void* memalign(std::size_t align, std::size_t n) {
  return note_alloc(__libc_memalign(align, n));
}
void* aligned_alloc(std::size_t align, std::size_t n) {
  return memalign(align, n);
}
void free(void* p) {
  note_free(p);
  __libc_free(p);
}
void* realloc(void* p, std::size_t n) {
  const std::size_t old = p ? malloc_usable_size(p) : 0;
  void* q = __libc_realloc(p, n);
  if (q || n == 0) {
    g_live_bytes -= old;
    note_alloc(q);
  }
  return q;
}
int posix_memalign(void** out, std::size_t align, std::size_t n) {
  void* p = memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif  // ATTN_BENCH_COUNT_HEAP

namespace {

constexpr std::size_t kMinRuns = 3;
constexpr std::size_t kMaxRuns = 2000;
constexpr double kMinWarmupMs = 250;

// Peak resident set size of this process so far (Linux reports ru_maxrss in KiB).
std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

struct Problem {
  int B = 0, T = 0, E = 0, H = 0;
  attn::Tensor x, in_w, in_b, out_w, out_b;
};

bool read_floats(std::ifstream& in, attn::Tensor& t, attn::Shape shape) {
  t.shape = std::move(shape);
  t.data.resize(static_cast<std::size_t>(attn::shape_numel(t.shape)));
  in.read(reinterpret_cast<char*>(t.data.data()),
          static_cast<std::streamsize>(t.data.size() * sizeof(float)));
  return static_cast<bool>(in);
}

bool read_problem(const char* path, Problem& p) {
  std::ifstream in(path, std::ios::binary);
  std::int32_t header[4];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return false;
  p.B = header[0], p.T = header[1], p.E = header[2], p.H = header[3];
  const int E = p.E;
  return read_floats(in, p.x, {p.B, p.T, E}) && read_floats(in, p.in_w, {3 * E, E}) &&
         read_floats(in, p.in_b, {3 * E}) && read_floats(in, p.out_w, {E, E}) &&
         read_floats(in, p.out_b, {E});
}

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

int fail(const std::string& what) {
  std::fprintf(stderr, "native_bench: %s\n", what.c_str());
  return 1;
}

// 1. The module with the problem's weights (PyTorch names and layouts).
attn::Status make_module(const Problem& p, attn::MultiHeadAttention& mha) {
  attn::MhaConfig config;
  config.embed_dim = p.E;
  config.num_heads = p.H;
  ATTN_RETURN_IF_ERROR(attn::MultiHeadAttention::create(config, mha));
  ATTN_RETURN_IF_ERROR(mha.set_parameter("in_proj_weight", p.in_w));
  ATTN_RETURN_IF_ERROR(mha.set_parameter("in_proj_bias", p.in_b));
  ATTN_RETURN_IF_ERROR(mha.set_parameter("out_proj.weight", p.out_w));
  return mha.set_parameter("out_proj.bias", p.out_b);
}

struct Timing {
  int warmup = 0;
  std::vector<double> times;  // times: (runs) milliseconds, sorted
  double median() const {
    const std::size_t n = times.size();
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  }
};

// 2. Warm-up (as bench/harness.mjs): at least one call, until max(10% of the budget, 250 ms) is
//    spent, unless one call is > 5% of the budget. Skipped when the caller fixes the run count.
// 3. Timed calls until the budget is spent (kMinRuns … kMaxRuns of them, or exactly fixed_runs).
attn::Status time_forward(const attn::MultiHeadAttention& mha, const Problem& p,
                          const attn::MhaForwardOptions& options, double budget_ms, int fixed_runs,
                          attn::MhaResult& result, Timing& timing) {
  const double warmup_ms = std::max(0.1 * budget_ms, kMinWarmupMs);
  double last_ms = 0, spent_ms = 0;
  while (fixed_runs == 0 && (timing.warmup == 0 || (spent_ms < warmup_ms && last_ms < 0.05 * budget_ms))) {
    const double t0 = now_ms();
    ATTN_RETURN_IF_ERROR(mha.forward(p.x, nullptr, nullptr, options, result));
    last_ms = now_ms() - t0;
    spent_ms += last_ms;
    ++timing.warmup;
  }
  const std::size_t max_runs = fixed_runs > 0 ? fixed_runs : kMaxRuns;
  for (double spent = 0; timing.times.size() < max_runs &&
                         (fixed_runs > 0 || spent < budget_ms || timing.times.size() < kMinRuns);) {
    const double t0 = now_ms();
    ATTN_RETURN_IF_ERROR(mha.forward(p.x, nullptr, nullptr, options, result));
    timing.times.push_back(now_ms() - t0);
    spent += timing.times.back();
  }
  std::sort(timing.times.begin(), timing.times.end());
  return attn::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    return fail("usage: native_bench problem.bin output.bin budget_ms need_weights [runs]");
  }
  Problem p;
  if (!read_problem(argv[1], p)) return fail(std::string("cannot read ") + argv[1]);
  attn::MultiHeadAttention mha;
  attn::Status st = make_module(p, mha);
  if (!st.ok()) return fail(st.message);

  attn::MhaForwardOptions options;
  options.need_weights = std::atoi(argv[4]) != 0;
  attn::MhaResult result;
  const std::int64_t rss_before = peak_rss_bytes();
  const std::size_t heap_before = g_live_bytes;
  g_peak_bytes = g_live_bytes;
  Timing timing;
  st = time_forward(mha, p, options, std::atof(argv[3]), argc == 6 ? std::atoi(argv[5]) : 0, result, timing);
  if (!st.ok()) return fail(st.message);

  // 4. The output for the error column, then the JSON line.
  std::ofstream out(argv[2], std::ios::binary);
  out.write(reinterpret_cast<const char*>(result.output.data.data()),
            static_cast<std::streamsize>(result.output.data.size() * sizeof(float)));
  if (!out) return fail(std::string("cannot write ") + argv[2]);
  const std::int64_t rss_peak = peak_rss_bytes();
  std::printf(
      "{\"variant\":\"%s\",\"warmup\":%d,\"runs\":%zu,\"median_ms\":%.6f,\"min_ms\":%.6f,"
      "\"peak_heap_delta_bytes\":%lld,\"peak_rss_bytes\":%lld,\"peak_rss_delta_bytes\":%lld}\n",
      attn::kernels::active_variant(), timing.warmup, timing.times.size(), timing.median(),
      timing.times.front(), ATTN_BENCH_COUNT_HEAP ? static_cast<long long>(g_peak_bytes - heap_before) : -1LL,
      static_cast<long long>(rss_peak), static_cast<long long>(rss_peak - rss_before));
  return 0;
}
