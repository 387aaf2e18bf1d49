// SPDX-License-Identifier: BSD-3-Clause
#include "replay_report.h"

#include <ATen/ATen.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

namespace ca::cli {

CheckResult compare(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want,
                    double rtol, double atol) {
  CheckResult r;
  if (got.size() != want.size()) {
    r.ok = false;
    r.problems.push_back("expected " + std::to_string(want.size()) + " tensors, replay gave " +
                         std::to_string(got.size()));
    return r;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string at = "tensor " + std::to_string(i);
    if (!got[i].defined() || !want[i].defined()) {
      if (got[i].defined() != want[i].defined()) {
        r.ok = false;
        r.problems.push_back(at + ": one side is undefined");
      }
      continue;
    }
    if (got[i].scalar_type() != want[i].scalar_type() || got[i].sizes() != want[i].sizes()) {
      r.ok = false;
      r.problems.push_back(at + ": got " + std::string(c10::toString(got[i].scalar_type())) +
                           c10::str(got[i].sizes()) + ", expected " +
                           c10::toString(want[i].scalar_type()) + c10::str(want[i].sizes()));
      continue;
    }
    if (got[i].numel() == 0) continue;
    const auto g = got[i].to(at::kDouble), w = want[i].to(at::kDouble);
    const auto diff = (g - w).abs();
    const double abs_err = diff.max().item<double>();
    const double rel_err = abs_err / std::max(w.abs().max().item<double>(), 1e-30);
    r.max_abs = std::max(r.max_abs, abs_err);
    r.max_rel = std::max(r.max_rel, rel_err);
    const auto bad = (diff > atol + rtol * w.abs()).sum().item<int64_t>();
    if (bad > 0) {
      r.ok = false;
      r.problems.push_back(at + ": " + std::to_string(bad) + " of " +
                           std::to_string(got[i].numel()) + " elements off (max abs " +
                           c10::str(abs_err) + ")");
    }
  }
  return r;
}

Stats stats_of(std::vector<double> s) {
  if (s.empty()) return {};
  std::sort(s.begin(), s.end());
  return {s.front(), s[s.size() / 2], s.back()};
}

namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

void ProfileObserver::node_begin(size_t) { node_start_ = now_seconds(); }
void ProfileObserver::op_begin(size_t) { op_start_ = now_seconds(); }
void ProfileObserver::op_end(size_t node) { op_seconds_[node] += now_seconds() - op_start_; }
void ProfileObserver::node_end(size_t node) {
  node_seconds_[node] += now_seconds() - node_start_;
  ++nodes_run_;
}

std::vector<std::pair<std::string, OpTime>> profile_by_op(const Graph& graph,
                                                          const ProfileObserver& profile) {
  std::map<std::string, OpTime> by_op;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const std::string key = n.kind == NodeKind::kFunctional || n.kind == NodeKind::kAten
                                ? std::string(graph.op(n))
                                : node_kind_name(n.kind);
    OpTime& t = by_op[key];
    t.seconds += profile.node_seconds()[i];
    t.op_seconds += profile.op_seconds()[i];
    t.calls += 1;
  }
  std::vector<std::pair<std::string, OpTime>> out(by_op.begin(), by_op.end());
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  return out;
}

double peak_rss_mib() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace ca::cli
