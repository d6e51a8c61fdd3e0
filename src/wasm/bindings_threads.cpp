// The kernels' thread pool (kernels/parallel.h, docs/threads.md) for JS: _startThreadPool(n) →
// the pool size, _setThreadCount(n) → false outside 1 … pool size, _threadCount(), _threadPoolSize(),
// _threadPoolReady() (threads running; wait for it to reach the pool size, yielding to the event
// loop, before relying on them), _threadsSupported(). Only in a build with -DATTN_THREADS=ON
// (Emscripten pthreads): the shipped single-thread builds have no pool and do not carry these (their
// size budget is tight); a caller treats their absence as one thread. The JS wrapper does not call
// them yet: init({ threads }) is #26's next step.
#if defined(__EMSCRIPTEN_PTHREADS__)
#include <emscripten/bind.h>

#include "kernels/parallel.h"

EMSCRIPTEN_BINDINGS(attn_threads) {
  emscripten::function("_startThreadPool", &attn::kernels::start_thread_pool);
  emscripten::function("_setThreadCount", &attn::kernels::set_thread_count);
  emscripten::function("_threadCount", &attn::kernels::thread_count);
  emscripten::function("_threadPoolSize", &attn::kernels::thread_pool_size);
  emscripten::function("_threadPoolReady", &attn::kernels::thread_pool_ready);
  emscripten::function("_threadsSupported", &attn::kernels::threads_supported);
}
#endif  // __EMSCRIPTEN_PTHREADS__
