#include "msgbench/params.hpp"

namespace msgbench {

namespace {

const json& param(const json& params, const char* name,
                  bool (json::*is)() const noexcept, const char* kind) {
  auto it = params.find(name);
  if (it == params.end() || !((*it).*is)())
    throw worker_error("internal", std::string("params.") + name
                                       + " is missing or not a " + kind);
  return *it;
}

} // namespace

int64_t int_param(const json& params, const char* name) {
  return param(params, name, &json::is_number, "number").get<int64_t>();
}

double number_param(const json& params, const char* name) {
  return param(params, name, &json::is_number, "number").get<double>();
}

std::string string_param(const json& params, const char* name) {
  return param(params, name, &json::is_string, "string").get<std::string>();
}

} // namespace msgbench
