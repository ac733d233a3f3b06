#include "msgbench/histogram.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace msgbench {

json histogram_pairs(const std::unordered_map<int64_t, int64_t>& counts) {
  std::vector<std::pair<int64_t, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end());
  json pairs = json::array();
  for (const auto& [bucket, count] : sorted)
    pairs.push_back({bucket, count});
  return pairs;
}

} // namespace msgbench
