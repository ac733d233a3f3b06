#include "msgbench/options.hpp"

#include <algorithm>

namespace msgbench {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

} // namespace

options::options(json values) : values_(std::move(values)) {
  if (!values_.is_null() && !values_.is_object())
    throw worker_error("internal",
                       "options = " + values_.dump() + ": expected an object");
}

void options::only(const std::vector<std::string>& known) const {
  if (values_.is_null())
    return;
  std::vector<std::string> unknown;
  for (const auto& [name, value] : values_.items())
    if (std::find(known.begin(), known.end(), name) == known.end())
      unknown.push_back(name);
  if (!unknown.empty())
    throw worker_error("internal", "unknown option " + joined(unknown)
                                       + " (known here: " + joined(known)
                                       + ")");
}

bool options::flag(const std::string& name) const {
  if (values_.is_null() || !values_.contains(name))
    return false;
  const json& value = values_[name];
  if (!value.is_boolean())
    throw worker_error("internal", "option " + name + " = " + value.dump()
                                       + ": expected true or false");
  return value.get<bool>();
}

int64_t options::positive(const std::string& name) const {
  if (values_.is_null() || !values_.contains(name))
    return 0;
  const json& value = values_[name];
  if (!value.is_number_integer() || value.get<int64_t>() < 1)
    throw worker_error("internal", "option " + name + " = " + value.dump()
                                       + ": expected a positive integer");
  return value.get<int64_t>();
}

} // namespace msgbench
