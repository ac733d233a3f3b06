// A variant's options, as the request carries them (target.toml's options
// table). A worker refuses an option it does not read, naming it and what it
// reads, since a worker that ignored one would measure something else than its
// variant says; and a value of the wrong kind, naming the option.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol.hpp"

namespace msgbench {

class options {
public:
  // `values`: the request's options object (null: none).
  explicit options(json values);

  // Throws an internal error naming every option not in `known`:
  // "unknown option X (known here: a, b)", or "none" when `known` is empty.
  void only(const std::vector<std::string>& known) const;
  // A boolean option; false when the variant does not set it.
  bool flag(const std::string& name) const;
  // A positive integer option; 0 when the variant does not set it.
  int64_t positive(const std::string& name) const;

private:
  json values_;
};

} // namespace msgbench
