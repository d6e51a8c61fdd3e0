// The kernels' thread pool (kernels/parallel.h, docs/threads.md) for JS: _startThreadPool(n) →
// the pool size, _setThreadCount(n) → false outside 1 … pool size, _threadCount(), _threadPoolSize(),
// _threadPoolReady() (threads running; wait for it to reach the pool size, yielding to the event
// loop, before relying on them), _threadsSupported(), _poolJobs() (loops split so far, as a double:
// tests check that a call really ran in parallel). Only in a build with -DATTN_THREADS=ON
// (Emscripten pthreads): the single-thread builds have no pool and do not carry these (their size
// budget is tight); src/js/runtime/threads.js treats their absence as one thread.
#if defined(__EMSCRIPTEN_PTHREADS__)
#include <emscripten/bind.h>

#include "kernels/parallel.h"

namespace {
double pool_jobs_count() {
  return static_cast<double>(attn::kernels::pool_jobs());
}
}  // namespace

EMSCRIPTEN_BINDINGS(attn_threads) {
  emscripten::function("_startThreadPool", &attn::kernels::start_thread_pool);
  emscripten::function("_setThreadCount", &attn::kernels::set_thread_count);
  emscripten::function("_threadCount", &attn::kernels::thread_count);
  emscripten::function("_threadPoolSize", &attn::kernels::thread_pool_size);
  emscripten::function("_threadPoolReady", &attn::kernels::thread_pool_ready);
  emscripten::function("_threadsSupported", &attn::kernels::threads_supported);
  emscripten::function("_poolJobs", &pool_jobs_count);
}
#endif  // __EMSCRIPTEN_PTHREADS__
