// SPDX-License-Identifier: BSD-3-Clause
// Several models trained at once in one process, one thread each (an actor-learner program, a
// hyper-parameter sweep in one process): every thread owns its MLP and optimizer. Two rounds, of
// two threads and then of four. In each, one thread scales an activation's gradient with a tensor
// hook every step, so under ca::enable() its backwards run eagerly while the other threads'
// replay; in the second, another warns from a hook now and then (the warning must reach it, as
// eagerly) and a third uses grad() for a gradient norm it logs. Each thread's report is printed
// after all have joined, in thread order.
#include <c10/util/Exception.h>

#include <string>
#include <thread>

#include "trainers/programs.h"

namespace trainers {
namespace {

constexpr int kSteps = 1200;
constexpr int kEvery = 100;  // steps between the logged losses, warnings and gradient norms

// What each thread of a round does besides training.
enum class Role { kPlain, kHooked, kWarns, kGradNorm };

struct Model {
  torch::nn::Linear l1, l2, l3;
  at::Tensor x, y;
  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> all;
    for (const auto* l : {&l1, &l2, &l3}) {
      for (const at::Tensor& p : (*l)->parameters()) all.push_back(p);
    }
    return all;
  }
};

// Made on the main thread, in order: the default generator's draws are then the same each run.
Model make_model(int t) {
  const int width = 24 + 4 * t;
  return {torch::nn::Linear(12, width), torch::nn::Linear(width, 16), torch::nn::Linear(16, 1),
          torch::randn({16, 12}), torch::randn({16, 1})};
}

// Counts the warnings that reach this thread.
class CountingHandler : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override { ++count; }
  int count = 0;
};

std::string train(int t, Role role, Model& m) {
  CountingHandler warnings;
  const c10::WarningUtils::WarningHandlerGuard guard(&warnings);
  std::string report;
  std::vector<at::Tensor> params = m.parameters();
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (t % 2 == 0) {
    opt = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01).momentum(0.9));
  } else {
    opt = std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-3));
  }
  for (int step = 0; step < kSteps; ++step) {
    opt->zero_grad();
    const at::Tensor h = torch::tanh(m.l1->forward(m.x));
    if (role == Role::kHooked) h.register_hook([](const at::Tensor& g) { return g * 0.5; });
    if (role == Role::kWarns && step % kEvery == 0) {
      h.register_hook([](const at::Tensor& g) {
        TORCH_WARN("activation gradient norm ", g.norm().item<float>());
        return g;
      });
    }
    const at::Tensor loss = torch::mse_loss(m.l3->forward(torch::relu(m.l2->forward(h))), m.y);
    if (role == Role::kGradNorm && step % kEvery == 0) {
      const auto g = torch::autograd::grad({loss}, {params[0]}, {}, /*retain_graph=*/true);
      report += loss_text("grad_norm", step, g[0].norm());
    }
    loss.backward();
    opt->step();
    if (step % kEvery == 0 || step == kSteps - 1) report += loss_text("loss", step, loss);
  }
  return report + "warnings " + std::to_string(warnings.count) + "\n" + hash_text("params", params);
}

// What a round's threads made: backward()/grad() calls, and how many of them had a hook.
struct Calls {
  int all = 0, hooked = 0;
};

// Trains one model a thread, all at once.
Calls round(const std::vector<Role>& roles) {
  std::vector<Model> models;
  for (size_t t = 0; t < roles.size(); ++t) models.push_back(make_model(static_cast<int>(t)));
  std::vector<std::string> reports(roles.size());
  std::vector<std::thread> pool;
  for (size_t t = 0; t < roles.size(); ++t) {
    pool.emplace_back([t, &roles, &models, &reports] {
      reports[t] = train(static_cast<int>(t), roles[t], models[t]);
    });
  }
  for (std::thread& th : pool) th.join();
  Calls calls;
  for (size_t t = 0; t < roles.size(); ++t) {
    std::printf("%zu threads, thread %zu\n%s", roles.size(), t, reports[t].c_str());
    calls.all += kSteps + (roles[t] == Role::kGradNorm ? kSteps / kEvery : 0);
    calls.hooked += roles[t] == Role::kHooked  ? kSteps
                    : roles[t] == Role::kWarns ? kSteps / kEvery
                                               : 0;
  }
  return calls;
}

}  // namespace

int threads() {
  torch::manual_seed(11);
  const Calls two = round({Role::kHooked, Role::kPlain});
  const Calls four = round({Role::kPlain, Role::kHooked, Role::kWarns, Role::kGradNorm});
  // What the counters must add up to: every backward() and grad() of every thread, and every
  // one with a hook run eagerly.
  std::fprintf(stderr, "calls=%d hooked=%d\n", two.all + four.all, two.hooked + four.hooked);
  return 0;
}

}  // namespace trainers
