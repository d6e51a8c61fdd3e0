// A small fixed thread pool and a deterministic parallel_for (docs/threads.md).
//
// The pool lives in the kernels layer, the lowest one, so that the GEMM (kernels_dispatch.cpp) and
// the core's attention loops share it. Natively it runs on std::thread; the same code compiles with
// Emscripten pthreads (-pthread, where __EMSCRIPTEN_PTHREADS__ is defined). A wasm build without
// pthreads has no pool: every parallel_for runs on the calling thread, exactly as before.
//
// Determinism: parallel_for(n, ...) splits [0, n) into `parts` contiguous ranges, part t =
// [n·t/parts, n·(t+1)/parts), and each range is run by exactly one thread. The callers split over
// output elements (rows or column panels of a GEMM's C, attention slices and query blocks), and
// each element's arithmetic does not depend on which range it falls in: results are bit-identical
// at every thread count (tests/cpp/test_parallel.cpp).
//
// A parallel_for inside a parallel_for (an attention block calling the GEMM) runs on its own
// thread; so does one started while another thread is dispatching to the pool. The body must not
// throw (the kernels do not); if it does, the first exception is rethrown on the calling thread.
#pragma once
#include <cstdint>
#include <type_traits>

// Whether the pool's threads exist: natively, and in wasm built with -pthread.
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define ATTN_HAVE_THREADS 1
#else
#define ATTN_HAVE_THREADS 0
#endif

namespace attn::kernels {

// The most threads a pool may hold (the calling thread included); 1 without threads.
constexpr int kMaxThreads = ATTN_HAVE_THREADS ? 64 : 1;

// Grows the pool to `threads` threads in all (the caller counts as one; threads − 1 workers wait),
// clamped to [1, kMaxThreads], and makes them all in use (thread_count() == the pool size).
// A pool never shrinks. Returns the pool size: 1 in a build without threads. Natively it returns
// once every worker runs; under Emscripten see thread_pool_ready(). Not thread-safe: call it from
// the thread that owns the library (the module's init, a test's setup).
int start_thread_pool(int threads);
// Threads the pool holds, the calling thread included (1 before start_thread_pool).
int thread_pool_size();
// Threads of the pool that are running (1 + the workers that have started, counted in order):
// parallel_for uses at most this many. Natively every worker starts at once; under Emscripten a
// worker created at run time starts only after its Web Worker loaded the module, which needs the
// JS event loop — so a caller (init) waits, yielding, until this equals thread_pool_size().
#if ATTN_HAVE_THREADS
int thread_pool_ready();
#else
inline int thread_pool_ready() {
  return 1;
}
#endif
// Threads a parallel_for uses now: 1 … thread_pool_size().
#if ATTN_HAVE_THREADS
int thread_count();
#else
inline int thread_count() {
  return 1;
}  // known at compile time: the single-thread build is as before
#endif
// Uses n threads from now on; false (and nothing changes) unless 1 ≤ n ≤ thread_pool_size().
bool set_thread_count(int n);
// Whether the threads are really concurrent (native, or wasm built with pthreads).
bool threads_supported();
// Jobs handed to the pool's workers so far (a loop run wholly on the calling thread is not one):
// lets tests check that small work never wakes a worker.
std::uint64_t pool_jobs();

// Work (multiply-adds, or a comparable count) each part must have for a loop to be split: waking a
// worker costs microseconds to tens of microseconds (more in browsers), so small calls — the demo
// shape's (B1 T16 D64 h4) products and attention — stay on the calling thread. Not tuned on a quiet
// machine yet (docs/threads.md).
constexpr std::int64_t kMinParallelWork = std::int64_t{1} << 18;

using RangeFn = void (*)(void* ctx, int part, std::int64_t begin, std::int64_t end);
// Runs fn(ctx, t, begin_t, end_t) for t in [0, parts): part t = [n·t/parts, n·(t+1)/parts), each on
// one thread (part 0 on the calling thread). parts is clamped to [1, thread_count()]; inside another
// parallel_for, or while another thread's job is in flight, every part runs here, in order.
#if ATTN_HAVE_THREADS
void parallel_parts_raw(std::int64_t n, int parts, RangeFn fn, void* ctx);
#else
inline void parallel_parts_raw(std::int64_t n, int, RangeFn fn, void* ctx) {
  if (n > 0) fn(ctx, 0, 0, n);
}
#endif

// The number of parts parallel_for(n, min_per_part, …) uses now: at most thread_count(), each of
// at least min_per_part items (n < 2·min_per_part: one part), 1 inside another parallel_for.
#if ATTN_HAVE_THREADS
int parallel_parts(std::int64_t n, std::int64_t min_per_part);
#else
inline int parallel_parts(std::int64_t, std::int64_t) {
  return 1;
}
#endif

// f(part, begin, end) over parts = parallel_parts(…) computed once by the caller, who may size
// per-part buffers with it.
template <class F>
void parallel_for_parts(std::int64_t n, int parts, F&& f) {
  using Fn = std::remove_reference_t<F>;
  parallel_parts_raw(
      n, parts,
      [](void* ctx, int part, std::int64_t begin, std::int64_t end) {
        (*static_cast<Fn*>(ctx))(part, begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// f(begin, end) over [0, n) in parallel_parts(n, min_per_part) parts.
template <class F>
void parallel_for(std::int64_t n, std::int64_t min_per_part, F&& f) {
  parallel_for_parts(n, parallel_parts(n, min_per_part),
                     [&f](int, std::int64_t begin, std::int64_t end) { f(begin, end); });
}

// Items per part so that each part does at least kMinParallelWork, for items of `work_per_item`.
inline std::int64_t min_items_for(std::int64_t work_per_item) {
  if (work_per_item <= 0) return kMinParallelWork;
  return (kMinParallelWork + work_per_item - 1) / work_per_item;
}

// f(begin, end) over [0, n) items of `work_per_item` each (elementwise ops, rows of a norm): split
// only where every part gets kMinParallelWork. For loops whose every output element depends on its
// own item alone, so the bits do not depend on the split.
template <class F>
void parallel_items(std::int64_t n, std::int64_t work_per_item, F&& f) {
  parallel_for(n, min_items_for(work_per_item), f);
}

}  // namespace attn::kernels
