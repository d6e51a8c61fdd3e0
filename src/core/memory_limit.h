// A configurable ceiling on the bytes one call may allocate for its buffers.
// Every operation estimates its buffers before allocating and returns kTooLarge when the estimate
// exceeds the limit, so "T = 100000 with weights" is a clear error instead of an out-of-memory abort.
#pragma once
#include <cstdint>

#include "core/status.h"

namespace attn {

constexpr std::uint64_t kDefaultMemoryLimitBytes = 1ull << 30;  // 1 GiB

void set_memory_limit_bytes(std::uint64_t bytes);
std::uint64_t memory_limit_bytes();

// `elements` float32 values (4 bytes each) needed by `what`; kTooLarge when over the limit.
Status check_allocation(std::uint64_t elements, const char* what);

}  // namespace attn
