#pragma once
// What `replay` measures and prints: comparisons with expected gradients, timing statistics,
// per-op profiles, and the JSON summary.

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "ca/executor.h"

namespace ca::cli {

/// Result of comparing replayed gradients with expected ones.
struct CheckResult {
  bool ok = true;
  double max_abs = 0.0;
  double max_rel = 0.0;
  std::vector<std::string> problems;  ///< one line per mismatching tensor
};

/// Elementwise |got - want| <= atol + rtol * |want|, plus dtype and shape equality.
CheckResult compare(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want,
                    double rtol, double atol);

/// Min, median and max of a sample, in the sample's unit.
struct Stats {
  double min = 0, median = 0, max = 0;
};
Stats stats_of(std::vector<double> samples);

/// Time per op name (builtins by kind), largest first: {name, {seconds, calls}}.
std::vector<std::pair<std::string, std::pair<double, int>>> profile_by_op(
    const Graph& graph, const RunProfile& profile);

/// Peak resident memory of this process, in MiB (0 where unknown).
double peak_rss_mib();

/// JSON string literal of `s`.
std::string json_string(const std::string& s);

}  // namespace ca::cli
