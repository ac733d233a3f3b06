// The whole kit, for a target's workloads: the worker's main and request,
// options, params, clocks and RSS, protocol lines, histograms, the open
// loop's pacer.
#pragma once

#include "histogram.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "pacer.hpp"
#include "params.hpp"
#include "protocol.hpp"
#include "worker.hpp"
