// The latency histogram's layout, as msgbench/histogram.py: log-linear, 64
// sub-buckets per power of two. v < 128 -> v; else shift = bit_length(v) - 7
// and index = shift * 64 + (v >> shift).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "protocol.hpp"

namespace msgbench {

inline int64_t histogram_bucket(uint64_t v) {
  if (v < 128)
    return static_cast<int64_t>(v);
  const int bit_length = 64 - __builtin_clzll(v);
  const int shift = bit_length - 7;
  return static_cast<int64_t>(shift) * 64 + static_cast<int64_t>(v >> shift);
}

// The result line's form of a histogram: [[bucket, count], ...] by bucket.
json histogram_pairs(const std::unordered_map<int64_t, int64_t>& counts);

} // namespace msgbench
