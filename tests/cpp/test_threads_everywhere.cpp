// In the wasm test binary built with Emscripten pthreads (build/wasm-threads, `npm test`'s "wasm ctest
// with real threads"), every test case runs on a pool of 4 threads: ctest runs each case in its own
// process, so the pool is started before main by this initializer (the 4 workers are preallocated:
// PTHREAD_POOL_SIZE=4). The golden, gradient and model tests then check the parallel code paths
// against their references too. Native builds and the single-thread wasm builds are untouched
// (natively, only the [parallel] cases start a pool).
#include "kernels/parallel.h"

#if defined(__EMSCRIPTEN_PTHREADS__)
namespace {
const int kThreadsForEveryCase = attn::kernels::start_thread_pool(4);
}  // namespace
#endif
