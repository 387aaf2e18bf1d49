// SPDX-License-Identifier: BSD-3-Clause
// 2,000 random single-byte corruptions of a real captured graph, each run through the full load
// pipeline and a replay: the checksum must refuse every one at load, so that none replays, let
// alone to wrong gradients. The reference is eager autograd on the same model.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "ca/graph_dump.h"
#include "ca/graph_io.h"
#include "captured_backward.h"
#include "checksum_seal.h"

namespace ca {
namespace {

using CapturedMlp = test::CapturedBackward;

/// A small MLP's backward, captured, with eager autograd's parameter gradients.
CapturedMlp capture_mlp() {
  torch::manual_seed(9);
  torch::nn::Sequential mlp(torch::nn::Linear(8, 16), torch::nn::Tanh(), torch::nn::Linear(16, 4));
  const at::Tensor x = torch::randn({5, 8});
  return test::capture_with_eager(mlp->forward(x).pow(2).sum(), mlp->parameters());
}

/// Replays `bytes` from scratch and says whether the parameters got eager's gradients.
bool replay_matches_eager(const std::vector<uint8_t>& bytes, const CapturedMlp& m) {
  Executor ex(graph_from_bytes(bytes.data(), bytes.size()));
  test::clear_grads(m);
  ex.run(m.cap.inputs);
  return test::grads_match_eager(m);
}

constexpr int kTrials = 2000;

/// One random byte of the first `span` bytes of a file, changed (the same sequence every run).
class ByteFlips {
 public:
  explicit ByteFlips(size_t span) : pos_(0, span - 1) {}
  std::vector<uint8_t> next(const std::vector<uint8_t>& valid, size_t* at) {
    std::vector<uint8_t> bytes = valid;
    *at = pos_(rng_);
    bytes[*at] ^= static_cast<uint8_t>(delta_(rng_));
    return bytes;
  }

 private:
  std::mt19937 rng_{20261203};
  std::uniform_int_distribution<size_t> pos_;
  std::uniform_int_distribution<int> delta_{1, 255};
};

TEST(GraphCorruptionSweep, EveryCorruptionIsRefusedAtLoad) {
  const CapturedMlp mlp = capture_mlp();
  const std::vector<uint8_t> valid = graph_to_bytes(mlp.cap.graph);
  ASSERT_TRUE(replay_matches_eager(valid, mlp)) << "the uncorrupted graph must replay like eager";

  ByteFlips flips(valid.size());
  int refused = 0, other_error = 0, correct = 0, wrong = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    size_t at = 0;
    const std::vector<uint8_t> bytes = flips.next(valid, &at);
    try {
      (replay_matches_eager(bytes, mlp) ? correct : wrong) += 1;
      ADD_FAILURE() << "byte " << at << " corrupted and the graph still replayed";
    } catch (const FormatError&) {
      ++refused;
    } catch (const Error& e) {
      ++other_error;
      ADD_FAILURE() << "byte " << at << ": not a FormatError: " << e.what();
    }
  }
  std::printf(
      "%d corruptions of a %zu-byte graph: %d refused at load (FormatError), %d other "
      "errors, %d replayed correctly, %d replayed wrong\n",
      kTrials, valid.size(), refused, other_error, correct, wrong);
  EXPECT_EQ(refused, kTrials);
}

bool is_number(const ArgRef& a) {
  return a.kind() == Arg::Kind::kInt || a.kind() == Arg::Kind::kDouble ||
         a.kind() == Arg::Kind::kBool;
}

/// True when `b` is `a` with only some scalar constants of packed args changed (alpha 1 -> 27649):
/// another valid graph, which only a signature could tell from the real one.
bool only_scalar_constants_differ(const Graph& a, const Graph& b) {
  if (a.inputs != b.inputs || a.outputs != b.outputs || a.nodes.size() != b.nodes.size()) {
    return false;
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    const ArgRefs xs = a.args(x), ys = b.args(y);
    if (x.kind != y.kind || a.op(x) != b.op(y) || a.ids(x.inputs) != b.ids(y.inputs) ||
        a.ids(x.outputs) != b.ids(y.outputs) || xs.size() != ys.size()) {
      return false;
    }
    for (auto xi = xs.begin(), yi = ys.begin(); xi != xs.end(); ++xi, ++yi) {
      if (*xi != *yi && !(is_number(*xi) && (*xi).kind() == (*yi).kind())) return false;
    }
  }
  return true;
}

/// The lines of two dumps that differ: what a corruption changed.
std::string changed_lines(const Graph& a, const Graph& b) {
  std::istringstream x(dump_graph(a)), y(dump_graph(b));
  std::string out, l, m;
  while (std::getline(x, l) && std::getline(y, m)) {
    if (l != m) out += "\n  - " + l + "\n  + " + m;
  }
  return out;
}

// The same sweep with the checksum recomputed after each corruption, as a forger would: every
// mutation reaches the decoder, validation, binding and replay. Each must be refused at load,
// fail with a ca::Error at run time, or replay to eager's gradients; a mutation that still
// replays wrong must be one no loader can tell from a real graph: a scalar constant changed into
// another valid one (today all 8 of this seed are AddmmBackward0's alpha or beta).
TEST(GraphCorruptionSweep, ForgedChecksumNeverCrashesAndWrongAnswersAreValidGraphs) {
  const CapturedMlp mlp = capture_mlp();
  const std::vector<uint8_t> valid = graph_to_bytes(mlp.cap.graph);
  ASSERT_TRUE(replay_matches_eager(test::resealed(valid), mlp)) << "resealing changes nothing";
  ByteFlips flips(valid.size() - test::kTrailerBytes);
  int refused = 0, run_error = 0, correct = 0, wrong = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    size_t at = 0;
    const std::vector<uint8_t> bytes = test::resealed(flips.next(valid, &at));
    std::optional<Graph> graph;
    try {
      graph = graph_from_bytes(bytes.data(), bytes.size());
      Executor probe(*graph);  // load errors count as refused, run errors as run errors
    } catch (const Error&) {
      ++refused;
      continue;
    }
    try {
      if (replay_matches_eager(bytes, mlp)) {
        ++correct;
      } else {
        ++wrong;
        std::printf("byte %zu: replayed wrong:%s\n", at,
                    changed_lines(mlp.cap.graph, *graph).c_str());
        EXPECT_TRUE(only_scalar_constants_differ(mlp.cap.graph, *graph))
            << "byte " << at << ": a wrong replay that is not a changed constant";
      }
    } catch (const Error& e) {
      ++run_error;
      EXPECT_EQ(std::string(e.what()).find("INTERNAL ASSERT"), std::string::npos)
          << "byte " << at << ": torch's internal assert text instead of ours: " << e.what();
    }
  }
  std::printf(
      "%d forged corruptions: %d refused at load, %d clean run-time errors, %d replayed "
      "correctly, %d replayed wrong\n",
      kTrials, refused, run_error, correct, wrong);
  EXPECT_EQ(refused + run_error + correct + wrong, kTrials);
}

}  // namespace
}  // namespace ca
