// The heap peak counter: the global operator new and delete of the wasm module, replaced by ones that
// count the bytes they hand out (malloc_usable_size: what the allocator really gives), so memoryStats()
// can say how many bytes the library's C++ holds now and the most it held since resetMemoryPeak().
// Every tensor, buffer, cache and weight of the core is a std::vector or another operator new
// allocation, and the wrapper makes no malloc of its own; the glue's own few bytes (Embind's strings)
// go through it too. Only the wasm build links it: the core never sees it (the native tests keep their
// own operator new, tests/cpp/test_decode_allocations.cpp).
#include <emscripten/bind.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::int64_t> g_in_use{0}, g_peak{0};

void* counted(void* p) {
  if (!p) return p;
  const std::int64_t now = g_in_use.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p))) +
                           static_cast<std::int64_t>(malloc_usable_size(p));
  std::int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void release(void* p) {
  if (!p) return;
  g_in_use.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)));
  std::free(p);
}

void* allocate(std::size_t n) {
  void* p = counted(std::malloc(n ? n : 1));
  if (!p) std::abort();  // as libc++'s operator new without exceptions: the memory checks run first
  return p;
}

void* allocate_aligned(std::size_t n, std::align_val_t a) {
  const std::size_t align = std::max(static_cast<std::size_t>(a), sizeof(void*));
  void* p = nullptr;
  if (posix_memalign(&p, align, n ? n : 1) != 0) std::abort();
  return counted(p);
}

double bytes_in_use_js() {
  return static_cast<double>(g_in_use.load());
}
double peak_bytes_in_use_js() {
  return static_cast<double>(g_peak.load());
}
// The peak starts again from the bytes in use now.
void reset_memory_peak_js() {
  g_peak.store(g_in_use.load());
}

}  // namespace

void* operator new(std::size_t n) {
  return allocate(n);
}
void* operator new[](std::size_t n) {
  return allocate(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted(std::malloc(n ? n : 1));
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted(std::malloc(n ? n : 1));
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_aligned(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_aligned(n, a);
}
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}

EMSCRIPTEN_BINDINGS(attention_memory_counter) {
  emscripten::function("_bytesInUse", &bytes_in_use_js);
  emscripten::function("_peakBytesInUse", &peak_bytes_in_use_js);
  emscripten::function("_resetMemoryPeak", &reset_memory_peak_js);
}
