// SPDX-License-Identifier: BSD-3-Clause
// train_example: trains a TorchScript CNN (BatchNorm, a branch taken on some steps, a smaller
// last batch per epoch, a custom C++ autograd function in the loss) with ca-replay as its
// backward engine, and checks the result against eager backward.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/tensor_io.h"
#include "trainer.h"

namespace {

// Bitwise comparison of two training runs' final state; prints the first difference.
bool same_state(const train::Result& a, const train::Result& b, const char* name) {
  for (size_t k = 0; k < a.state.size(); ++k) {
    if (!torch::equal(a.state[k], b.state[k])) {
      std::printf("%s: tensor %zu differs from eager (max abs difference %g)\n", name, k,
                  (a.state[k] - b.state[k]).abs().max().item<double>());
      return false;
    }
  }
  return a.state.size() == b.state.size();
}

// One mode's summary line; returns whether its cache did what the data schedule implies: one
// capture per distinct (batch size, branch) pair, no eager fallback.
bool report(const train::Result& r, train::Mode mode, double eager_seconds) {
  std::printf("%-8s %d timed steps in %.3f s: %.1f steps/s", train::mode_name(mode), r.timed_steps,
              r.seconds, r.timed_steps / r.seconds);
  if (mode == train::Mode::kEager) {
    std::printf("\n");
    return true;
  }
  std::printf(" (%.2fx eager's steps/s); %zu hits, %zu misses, %zu eager fallbacks\n",
              eager_seconds / r.seconds, r.stats.hits, r.stats.misses, r.stats.eager_fallbacks);
  if (r.stats.misses != r.graphs || r.stats.eager_fallbacks != 0) {
    std::printf(
        "%s: expected %zu captures (one per batch size and branch) and no fallback; "
        "last miss: %s; last fallback: %s\n",
        train::mode_name(mode), r.graphs, r.stats.last_miss_reason.c_str(),
        r.stats.last_fallback_reason.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // One handler for everything main does, CLI11 set-up included.
  try {
    CLI::App app{
        "Trains a TorchScript model written by make_model.py for N SGD steps on synthetic data,\n"
        "its backward run by eager autograd, by ca::CompiledBackward, or by ca::enable().\n"
        "--mode all runs the three from the same start and checks that the ca-replay runs end\n"
        "with bitwise the same parameters and BatchNorm statistics as eager, with one capture\n"
        "per distinct (batch size, branch) pair and no eager fallback; exit 1 otherwise."};
    train::Config config;
    std::string mode = "all", out;
    int threads = 0;
    app.add_option("--model", config.model_path, "TorchScript model (make_model.py)")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("--steps", config.steps, "SGD steps")->check(CLI::Range(1, 1000000));
    app.add_option("--batch", config.batch, "batch size")->check(CLI::Range(1, 4096));
    app.add_option("--dataset", config.dataset, "samples per epoch (last batch is smaller)")
        ->check(CLI::Range(1, 100000));
    app.add_option("--aux-every", config.aux_every, "take the aux branch every N steps; 0: never")
        ->check(CLI::Range(0, 1000000));
    app.add_option("--mode", mode, "eager, compiled, enabled or all")
        ->check(CLI::IsMember({"eager", "compiled", "enabled", "all"}));
    app.add_option("--warmup", config.warmup,
                   "steps left out of the timing (all timed if >= steps)")
        ->check(CLI::Range(0, 1000000));
    app.add_option("--out", out, "save the last mode's parameters and buffers (.pt)");
    app.add_option("--threads", threads, "intra-op threads (default: torch's)")
        ->check(CLI::Range(1, 256));
    CLI11_PARSE(app, argc, argv);
    if (threads > 0) torch::set_num_threads(threads);

    std::vector<train::Mode> modes;
    if (mode == "all" || mode == "eager") modes.push_back(train::Mode::kEager);
    if (mode == "all" || mode == "compiled") modes.push_back(train::Mode::kCompiled);
    if (mode == "all" || mode == "enabled") modes.push_back(train::Mode::kEnabled);
    bool ok = true;
    train::Result eager, last;
    for (train::Mode m : modes) {
      last = train::train(config, m);
      if (m == train::Mode::kEager) eager = last;
      ok = report(last, m, eager.seconds > 0 ? eager.seconds : last.seconds) && ok;
      if (m != train::Mode::kEager && mode == "all") {
        const bool same = same_state(last, eager, train::mode_name(m));
        std::printf("%s: %zu parameters and buffers %s eager's\n", train::mode_name(m),
                    last.state.size(), same ? "bitwise equal to" : "DIFFER from");
        ok = ok && same;
      }
    }
    if (!out.empty()) {
      ca::save_tensors(last.state, out);
      std::printf("wrote %s (%zu tensors)\n", out.c_str(), last.state.size());
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_example: %s\n", e.what());
    return 2;
  }
}
