#include "core/memory_limit.h"

#include <atomic>
#include <cmath>
#include <string>

namespace attn {

namespace {
std::atomic<std::uint64_t> g_limit{kDefaultMemoryLimitBytes};
}

void set_memory_limit_bytes(std::uint64_t bytes) {
  g_limit.store(bytes);
}
std::uint64_t memory_limit_bytes() {
  return g_limit.load();
}

Status check_allocation(std::uint64_t elements, const char* what) {
  const std::uint64_t limit = memory_limit_bytes();
  // Compare in elements so that huge counts cannot overflow the multiplication.
  if (elements > limit / sizeof(float)) {
    const double mib = static_cast<double>(elements) * sizeof(float) / (1024.0 * 1024.0);
    const double limit_mib = static_cast<double>(limit) / (1024.0 * 1024.0);
    return Status::Error(StatusCode::kTooLarge, std::string(what) + " would need " +
                                                    format_number(std::round(mib * 100) / 100) +
                                                    " MiB, over the memory limit of " +
                                                    format_number(std::round(limit_mib * 100) / 100) +
                                                    " MiB (setMemoryLimit raises it)");
  }
  return Status::Ok();
}

}  // namespace attn
