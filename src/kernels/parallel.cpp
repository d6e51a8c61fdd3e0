// The thread pool behind parallel_for (parallel.h, docs/threads.md).
//
// The calling thread publishes a job with one atomic store (no lock: it may be a browser's main
// thread), runs part 0 itself and then waits for the others by spinning on an atomic counter, never
// on a mutex or a join: on a page's main thread Emscripten turns a blocking wait into a busy-wait
// plus the console warning "Blocking on the main thread is very dangerous". Workers poll for the
// next job for a few tens of microseconds after each part, then sleep on a condition variable.
#include "kernels/parallel.h"

#include <algorithm>
#include <array>
#include <atomic>

#if ATTN_HAVE_THREADS
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attn::kernels {

namespace {

#if ATTN_HAVE_THREADS

void run_part(RangeFn fn, void* ctx, std::int64_t n, int parts, int t) {
  const std::int64_t begin = n * t / parts, end = n * (t + 1) / parts;
  if (begin < end) fn(ctx, t, begin, end);
}

thread_local bool t_in_parallel = false;  // this thread runs a part of a parallel_for now

struct InParallel {  // marks the current thread as inside a part (nested loops run inline)
  bool saved;
  InParallel() : saved(t_in_parallel) { t_in_parallel = true; }
  ~InParallel() { t_in_parallel = saved; }
  InParallel(const InParallel&) = delete;
  InParallel& operator=(const InParallel&) = delete;
};

// How long a worker keeps polling for the next job before it sleeps on the condition variable:
// jobs come in bursts (a forward is dozens of parallel products and row loops microseconds apart),
// and waking a sleeping thread costs tens of microseconds (a futex, Atomics.wait/notify in
// browsers), so a worker that just finished a part polls for a few tens of microseconds first.
constexpr int kSpinPolls = 1 << 14;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class Pool {
 public:
  ~Pool() {
    stop_.store(true);
    { std::lock_guard<std::mutex> lock(m_); }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  std::uint64_t jobs() const { return jobs_.load(std::memory_order_relaxed); }
  int active() const { return active_.load(std::memory_order_relaxed); }
  // 1 + the workers 1 … k − 1 that have all entered their loop: only those get parts. Under
  // Emscripten a thread created at run time starts only after its Web Worker has loaded the module,
  // which needs the page's event loop; giving a part to a worker that has not started would leave
  // the caller spinning forever (docs/threads.md).
  int ready() const {
    int n = 1;
    while (n < size() && started_[static_cast<std::size_t>(n)].load(std::memory_order_acquire)) ++n;
    return n;
  }
  void set_active(int n) { active_.store(n, std::memory_order_relaxed); }

  void grow(int threads) {
    std::lock_guard<std::mutex> busy(dispatch_);  // no job in flight while the pool grows
    while (size() < threads) {
      const int index = size();
      workers_.emplace_back([this, index] { work(index); });
    }
  }

  // false when another thread is dispatching: the caller then runs the loop itself.
  bool run(RangeFn fn, void* ctx, std::int64_t n, int parts) {
    std::unique_lock<std::mutex> busy(dispatch_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    jobs_.fetch_add(1, std::memory_order_relaxed);
    pending_.store(parts - 1, std::memory_order_relaxed);
    // Publish: the job's fields, then the generation (job number and part count in one word) with
    // release order. No worker reads the fields of the previous job any more: its participants
    // have all counted pending_ down, and the others read only the generation word.
    job_ = Job{fn, ctx, n};
    published_ = ((published_ >> 8) + 1) << 8 | static_cast<std::uint64_t>(parts);
    generation_.store(published_, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_sleepers();
    {
      InParallel mark;
      try {
        run_part(fn, ctx, n, parts, 0);
      } catch (...) {
        record_error(std::current_exception());
      }
    }
    // Wait for parts 1 … parts − 1 on the atomic (see the file comment).
    for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
#if !defined(__EMSCRIPTEN__)
      if (spins > 64) std::this_thread::yield();
#endif
    }
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(error_m_);  // uncontended: every part has finished
      error = error_;
      error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
    return true;
  }

 private:
  struct Job {
    RangeFn fn = nullptr;
    void* ctx = nullptr;
    std::int64_t n = 0;
  };

  // The sleepers wait on cv_ under m_; taking m_ (which a worker holds only for a moment, between
  // counting itself a sleeper and waiting) before notifying means none misses the new generation.
  // try_lock in a loop, not lock: a contended lock on a browser's main thread would enter
  // Emscripten's blocking wait (and its console warning).
  void wake_sleepers() {
    while (!m_.try_lock()) cpu_relax();
    m_.unlock();
    cv_.notify_all();
  }

  void record_error(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(error_m_);
    if (!error_) error_ = e;
  }

  // The next generation after `seen`: polled for a while, then slept for.
  std::uint64_t next_generation(std::uint64_t seen) {
    for (int i = 0; i < kSpinPolls; ++i) {
      const std::uint64_t g = generation_.load(std::memory_order_acquire);
      if (g != seen || stop_.load(std::memory_order_relaxed)) return g;
      cpu_relax();
    }
    std::unique_lock<std::mutex> lock(m_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    // seq_cst on both sides: either this load sees the new generation, or the dispatcher sees this
    // sleeper and notifies after taking m_ (which this thread releases only inside wait).
    cv_.wait(lock, [&] { return stop_.load() || generation_.load(std::memory_order_seq_cst) != seen; });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return generation_.load(std::memory_order_acquire);
  }

  void work(int index) {
    t_in_parallel = true;  // a worker never dispatches: its nested loops run inline
    started_[static_cast<std::size_t>(index)].store(true, std::memory_order_release);
    std::uint64_t seen = 0;
    for (;;) {
      const std::uint64_t g = next_generation(seen);
      if (stop_.load()) return;
      seen = g;
      const int parts = static_cast<int>(g & 0xff);
      if (index >= parts) continue;  // not needed for this job (and its fields are not ours to read)
      const Job job = job_;
      try {
        run_part(job.fn, job.ctx, job.n, parts, index);
      } catch (...) {
        record_error(std::current_exception());
      }
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::mutex dispatch_;  // held by the thread whose job is in flight
  std::mutex m_;         // the sleepers' mutex (cv_)
  std::condition_variable cv_;
  std::mutex error_m_;                        // guards error_
  Job job_;                                   // written by the dispatcher before it publishes generation_
  std::uint64_t published_ = 0;               // the dispatcher's copy of generation_
  std::atomic<std::uint64_t> generation_{0};  // (job number << 8) | parts
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
  std::atomic<int> pending_{0};
  std::atomic<std::uint64_t> jobs_{0};
  std::atomic<int> active_{1};
  std::array<std::atomic<bool>, kMaxThreads> started_{};  // [i]: worker i has entered its loop
  std::vector<std::thread> workers_;
};

Pool& pool() {
  static Pool p;
  return p;
}

#endif  // ATTN_HAVE_THREADS

}  // namespace

bool threads_supported() {
  return ATTN_HAVE_THREADS != 0;
}

std::uint64_t pool_jobs() {
#if ATTN_HAVE_THREADS
  return pool().jobs();
#else
  return 0;
#endif
}

int start_thread_pool(int threads) {
#if ATTN_HAVE_THREADS
  threads = std::clamp(threads, 1, kMaxThreads);
  pool().grow(threads);
  pool().set_active(pool().size());
#if !defined(__EMSCRIPTEN__)
  // Natively the workers start at once: wait for them, so a native program's pool is all there.
  // (Under Emscripten this thread may be the one whose event loop the workers need to start.)
  while (pool().ready() < pool().size()) std::this_thread::yield();
#endif
  return pool().size();
#else
  (void)threads;
  return 1;
#endif
}

int thread_pool_size() {
#if ATTN_HAVE_THREADS
  return pool().size();
#else
  return 1;
#endif
}

#if ATTN_HAVE_THREADS
int thread_count() {
  return pool().active();
}
int thread_pool_ready() {
  return pool().ready();
}
#endif

bool set_thread_count(int n) {
  if (n < 1 || n > thread_pool_size()) return false;
#if ATTN_HAVE_THREADS
  pool().set_active(n);
#endif
  return true;
}

#if ATTN_HAVE_THREADS
int parallel_parts(std::int64_t n, std::int64_t min_per_part) {
  if (t_in_parallel || n <= 0) return 1;
  const std::int64_t by_size = n / std::max<std::int64_t>(min_per_part, 1);
  return static_cast<int>(std::clamp<std::int64_t>(by_size, 1, std::min(thread_count(), pool().ready())));
}
#endif

#if ATTN_HAVE_THREADS
void parallel_parts_raw(std::int64_t n, int parts, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  parts = static_cast<int>(std::clamp<std::int64_t>(std::min<std::int64_t>(parts, n), 1,
                                                    std::min(thread_count(), pool().ready())));
  if (parts > 1 && !t_in_parallel && pool().run(fn, ctx, n, parts)) return;
  // One part (loops inside it may still split), nested, or the pool busy with another caller's
  // job: every part here, in order.
  for (int t = 0; t < parts; ++t) run_part(fn, ctx, n, parts, t);
}
#endif

}  // namespace attn::kernels
