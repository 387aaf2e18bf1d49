// SPDX-License-Identifier: BSD-3-Clause
// replay --graph: load, replay, then optionally save, check, benchmark and profile.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "ca/error.h"
#include "ca/escape.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "ca/tensor_io.h"
#include "commands.h"
#include "replay_report.h"

namespace ca::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Replays leave .grad on the loaded parameters; each timed run starts from none, like a step
// after zero_grad(set_to_none=True).
void clear_grads(const Executor& ex, const std::vector<at::Tensor>& inputs) {
  for (size_t k : ex.grad_targets()) inputs[k].mutable_grad().reset();
}

std::vector<double> bench(const Executor& ex, const std::vector<at::Tensor>& inputs, int n) {
  const bool cuda = ex.placement() != nullptr && ex.placement()->target.is_cuda();
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    clear_grads(ex, inputs);
    const auto start = Clock::now();
    ex.run(inputs);
    if (cuda) torch::cuda::synchronize();  // a CUDA replay returns before its kernels end
    ms.push_back(ms_since(start));
  }
  return ms;
}

void print_profile(const Executor& ex, const std::vector<at::Tensor>& inputs) {
  clear_grads(ex, inputs);
  ex.run(inputs);  // warm the frame pool so the profiled run is a steady-state one
  clear_grads(ex, inputs);
  ProfileObserver profile(ex.graph().nodes.size());
  const auto start = Clock::now();
  ex.run(inputs, &profile);
  const double wall = ms_since(start) / 1e3;
  double in_nodes = 0, in_ops = 0;
  for (double s : profile.node_seconds()) in_nodes += s;
  for (double s : profile.op_seconds()) in_ops += s;
  const double steps = static_cast<double>(std::max<size_t>(1, profile.nodes_run()));
  std::fprintf(stderr,
               "profile (one replay, %zu of %zu nodes run, %zu validate_outputs elided): %.3f ms "
               "wall, %.3f ms inside ops; runtime overhead %.0f ns/node within nodes, %.0f "
               "ns/node over the whole run (observer clock reads included)\n",
               profile.nodes_run(), ex.graph().nodes.size(), ex.stats().validates_elided,
               wall * 1e3, in_ops * 1e3, 1e9 * (in_nodes - in_ops) / steps,
               1e9 * (wall - in_ops) / steps);
  for (const auto& [op, t] : profile_by_op(ex.graph(), profile)) {
    if (t.seconds == 0.0) continue;  // elided
    std::fprintf(stderr, "  %10.3f ms %5.1f%% (op %10.3f ms) %5d x  %s\n", t.seconds * 1e3,
                 in_nodes > 0 ? 100.0 * t.seconds / in_nodes : 0.0, t.op_seconds * 1e3, t.calls,
                 escape_text(op).c_str());
  }
}

// Whether `path` holds whole, valid JSON: Kineto logs a failed or short write instead of
// throwing, so the file itself is the evidence.
bool whole_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return in && nlohmann::json::accept(in);
}

// One more replay, under torch's own profiler (Kineto), its Chrome trace written to `path` through
// a temporary file beside it, so that a failed write never leaves half a trace under that name.
void write_trace(const Executor& ex, const std::vector<at::Tensor>& inputs,
                 const std::string& path) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const bool cuda = ex.placement() != nullptr && ex.placement()->target.is_cuda();
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  std::set<ActivityType> activities{ActivityType::CPU};
  if (cuda) activities.insert(ActivityType::CUDA);
  clear_grads(ex, inputs);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  try {
    ex.run(inputs);
    if (cuda) torch::cuda::synchronize();
  } catch (...) {
    prof::disableProfiler();
    throw;
  }
  const std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::string failure;
  try {
    result->save(tmp);
    if (!whole_json_file(tmp)) failure = "the profiler could not write its trace to " + tmp;
  } catch (const std::exception& e) {
    failure = std::string("the profiler could not write its trace: ") + e.what();
  }
  if (failure.empty() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    failure = std::string("cannot write there: ") + std::strerror(errno);
  }
  if (!failure.empty()) {
    std::remove(tmp.c_str());
    throw Error("--trace " + path + ": " + failure);
  }
}

void save_grads(const std::vector<at::Tensor>& grads, const std::string& path) {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      throw Error("--out: gradient " + std::to_string(i) +
                  " is undefined (no gradient reached "
                  "it); .pt lists cannot hold it");
    }
    out.push_back(grads[i]);
  }
  save_tensors(out, path);
}

}  // namespace

int cmd_replay(const Options& o) {
  if (o.inputs.empty()) throw Error("--graph needs --inputs FILE (the graph's input tensors)");
  const ExecutorOptions options = executor_options(o);
  auto start = Clock::now();
  Executor ex(load_graph(o.graph, load_options(o)), options);
  std::vector<at::Tensor> inputs = load_tensors(o.inputs);
  if (ex.placement() != nullptr) {  // once, so that runs and --bench time the replay alone
    for (size_t k = 0; k < inputs.size() && k < ex.placement()->inputs.size(); ++k) {
      const bool leaf = inputs[k].requires_grad();
      inputs[k] = inputs[k].detach().to(ex.placement()->inputs[k].device).requires_grad_(leaf);
    }
  }
  const double load_ms = ms_since(start);
  if (o.verbose && ex.placement() != nullptr) {
    std::fprintf(stderr, "%s", escape_text(placement_report(ex.graph(), *ex.placement())).c_str());
  }

  start = Clock::now();
  std::vector<at::Tensor> grads = ex.run(inputs);
  const double first_ms = ms_since(start);
  for (at::Tensor& t : grads) t = t.defined() ? t.cpu() : t;  // saved and checked on the host
  if (!o.out.empty()) save_grads(grads, o.out);

  CheckResult check;
  if (!o.check.empty()) check = compare(grads, load_tensors(o.check), o.rtol, o.atol);
  std::vector<double> times;
  if (o.bench > 0) {
    clear_grads(ex, inputs);
    ex.run(inputs);  // warm-up
    times = bench(ex, inputs, o.bench);
  }
  if (o.profile) print_profile(ex, inputs);
  if (!o.trace.empty()) {
    write_trace(ex, inputs, o.trace);
    std::fprintf(stderr,
                 "trace of one replay written to %s (open in Perfetto or chrome://tracing)\n",
                 o.trace.c_str());
  }

  const Graph& g = ex.graph();
  const Stats st = stats_of(times);
  std::fprintf(stderr,
               "replayed %s: %zu nodes, %zu inputs, %zu gradients; load %.2f ms, first "
               "replay %.3f ms, peak RSS %.0f MiB; %zu validate_outputs elided at load\n",
               o.graph.c_str(), g.nodes.size(), g.inputs.size(), grads.size(), load_ms, first_ms,
               peak_rss_mib(), ex.stats().validates_elided);
  if (o.bench > 0) {
    std::fprintf(stderr,
                 "bench %d replays: min %.3f ms, median %.3f ms, max %.3f ms; %.2f us "
                 "per node (median)\n",
                 o.bench, st.min, st.median, st.max,
                 1e3 * st.median / static_cast<double>(std::max<size_t>(1, g.nodes.size())));
  }
  if (!o.check.empty()) {
    for (const std::string& p : check.problems) std::fprintf(stderr, "mismatch: %s\n", p.c_str());
    std::fprintf(stderr, "check vs %s: max abs err %.3g, max rel err %.3g (rtol %g, atol %g): %s\n",
                 o.check.c_str(), check.max_abs, check.max_rel, o.rtol, o.atol,
                 check.ok ? "OK" : "MISMATCH");
  }
  if (o.json) {
    nlohmann::ordered_json summary = {{"graph", o.graph},
                                      {"nodes", g.nodes.size()},
                                      {"inputs", g.inputs.size()},
                                      {"gradients", grads.size()},
                                      {"load_ms", load_ms},
                                      {"first_replay_ms", first_ms},
                                      {"peak_rss_mib", peak_rss_mib()},
                                      {"validates_elided", ex.stats().validates_elided}};
    if (o.bench > 0) {
      summary["bench"] = {
          {"runs", o.bench}, {"min_ms", st.min}, {"median_ms", st.median}, {"max_ms", st.max}};
    }
    if (!o.check.empty()) {
      summary["check"] = {{"ok", check.ok}, {"max_abs", check.max_abs}, {"max_rel", check.max_rel}};
    }
    // A path is bytes, not always UTF-8: invalid sequences print as U+FFFD, never throw.
    std::printf("%s\n",
                summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return check.ok ? 0 : 1;
}

}  // namespace ca::cli
