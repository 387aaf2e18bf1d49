// 2,000 random single-byte corruptions of a real captured graph, each run through the full load
// pipeline and a replay: the checksum must refuse every one at load, so that none replays, let
// alone to wrong gradients. The reference is eager autograd on the same model.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <random>
#include <vector>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "ca/graph_io.h"

namespace ca {
namespace {

/// A small MLP's backward, captured, with eager autograd's parameter gradients.
struct CapturedMlp {
  CaptureResult cap;
  std::vector<at::Tensor> params;
  std::vector<at::Tensor> eager_grads;
};

CapturedMlp capture_mlp() {
  torch::manual_seed(9);
  torch::nn::Sequential mlp(torch::nn::Linear(8, 16), torch::nn::Tanh(), torch::nn::Linear(16, 4));
  const at::Tensor x = torch::randn({5, 8});
  const at::Tensor loss = mlp->forward(x).pow(2).sum();
  CapturedMlp m;
  m.cap = capture({loss});
  m.params = mlp->parameters();
  loss.backward();
  for (const at::Tensor& p : m.params) m.eager_grads.push_back(p.grad().clone());
  return m;
}

/// Replays `bytes` from scratch and says whether the parameters got eager's gradients.
bool replay_matches_eager(const std::vector<uint8_t>& bytes, const CapturedMlp& m) {
  Executor ex(graph_from_bytes(bytes.data(), bytes.size()));
  for (const at::Tensor& p : m.params) p.mutable_grad().reset();
  ex.run(m.cap.inputs);
  for (size_t i = 0; i < m.params.size(); ++i) {
    const at::Tensor& got = m.params[i].grad();
    if (!got.defined() || !got.sizes().equals(m.eager_grads[i].sizes()) ||
        !torch::allclose(got, m.eager_grads[i], 1e-5, 1e-6)) {
      return false;
    }
  }
  return true;
}

TEST(GraphCorruptionSweep, EveryCorruptionIsRefusedAtLoad) {
  const CapturedMlp mlp = capture_mlp();
  const std::vector<uint8_t> valid = graph_to_bytes(mlp.cap.graph);
  ASSERT_TRUE(replay_matches_eager(valid, mlp)) << "the uncorrupted graph must replay like eager";

  std::mt19937 rng(20261203);
  std::uniform_int_distribution<size_t> pos(0, valid.size() - 1);
  std::uniform_int_distribution<int> delta(1, 255);
  constexpr int kTrials = 2000;
  int refused = 0, other_error = 0, correct = 0, wrong = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<uint8_t> bytes = valid;
    const size_t at = pos(rng);
    bytes[at] ^= static_cast<uint8_t>(delta(rng));
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

}  // namespace
}  // namespace ca
