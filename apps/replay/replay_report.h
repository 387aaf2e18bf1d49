// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What `replay` measures and prints: comparisons with expected gradients, timing statistics,
// per-op profiles.

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

/// Times one run: each node's whole time and the part spent inside torch (op functions,
/// dispatcher, validate_outputs, AccumulateGrad); the rest is the runtime's own overhead.
class ProfileObserver : public RunObserver {
 public:
  explicit ProfileObserver(size_t nodes) : node_seconds_(nodes, 0.0), op_seconds_(nodes, 0.0) {}
  void node_begin(size_t node) override;
  void op_begin(size_t node) override;
  void op_end(size_t node) override;
  void node_end(size_t node) override;

  const std::vector<double>& node_seconds() const { return node_seconds_; }  ///< by node
  const std::vector<double>& op_seconds() const { return op_seconds_; }      ///< by node
  size_t nodes_run() const { return nodes_run_; }  ///< elided nodes do not run

 private:
  std::vector<double> node_seconds_, op_seconds_;
  double node_start_ = 0, op_start_ = 0;
  size_t nodes_run_ = 0;
};

/// Time of one op name (builtins by kind) in a profiled run.
struct OpTime {
  double seconds = 0;     ///< whole nodes
  double op_seconds = 0;  ///< inside torch
  int calls = 0;
};
/// Per op name, largest first.
std::vector<std::pair<std::string, OpTime>> profile_by_op(const Graph& graph,
                                                          const ProfileObserver& profile);

/// Peak resident memory of this process, in MiB (0 where unknown).
double peak_rss_mib();

}  // namespace ca::cli
