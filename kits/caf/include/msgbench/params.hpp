// The request's params, as the harness checked them against the workload's
// spec: a missing or mistyped one is the harness's bug, an internal error
// naming it.
#pragma once

#include <cstdint>
#include <string>

#include "protocol.hpp"

namespace msgbench {

int64_t int_param(const json& params, const char* name);
double number_param(const json& params, const char* name);
std::string string_param(const json& params, const char* name);

} // namespace msgbench
