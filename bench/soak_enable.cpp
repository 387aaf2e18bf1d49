// SPDX-License-Identifier: BSD-3-Clause
// soak_enable [--steps N] [--shape-every K] [--report-every R]: a long training loop under
// ca::enable() whose batch size changes every K steps (cycling through more sizes than the cache
// holds, so graphs are evicted and captured again). Prints resident memory every R steps, the
// least-squares slope of RSS after warm-up (one pass through every batch size, by which the cache
// is full, or half the run if that is shorter), the cache's size against its
// bound, and checks that hits + misses + fallbacks equals the number of backward calls. Exits 1
// when the counters do not add up or the cache outgrows its bound. Not a timed test.
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "ca/compiled_backward.h"

namespace {

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

// Least-squares slope of y over x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(y.size());
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx == 0 ? 0 : sxy / sxx;
}

long arg(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atol(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const long steps = arg(argc, argv, "--steps", 20000);
  const long shape_every = arg(argc, argv, "--shape-every", 1000);
  const long report_every = arg(argc, argv, "--report-every", 1000);
  const std::vector<int64_t> batches = {8, 12, 16, 20, 24, 28, 32, 36, 40, 44};  // > cache size
  torch::set_num_threads(1);
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(16, 64), torch::nn::ReLU(), torch::nn::Linear(64, 64),
                            torch::nn::Tanh(), torch::nn::Linear(64, 1));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(1e-3).momentum(0.9));
  ca::CompiledBackwardOptions options;
  const size_t bound = options.cache_size;
  ca::EnableGuard on(options);
  const long warm_up = std::min<long>(static_cast<long>(batches.size()) * shape_every, steps / 2);
  std::vector<double> xs, ys;
  size_t max_cached = 0;
  for (long step = 0; step < steps; ++step) {
    const int64_t batch = batches[static_cast<size_t>(step / shape_every) % batches.size()];
    const at::Tensor x = torch::randn({batch, 16});
    opt.zero_grad();
    const at::Tensor loss = torch::mse_loss(net->forward(x), x.narrow(1, 0, 1));
    loss.backward();
    opt.step();
    const ca::CompiledBackwardStats s = ca::enabled_stats();
    max_cached = std::max(max_cached, s.cached_graphs);
    if ((step + 1) % report_every == 0) {
      const double rss = rss_mib();
      std::printf(
          "step %6ld batch %3lld rss %8.2f MiB hits %zu misses %zu fallbacks %zu cached %zu\n",
          step + 1, static_cast<long long>(batch), rss, s.hits, s.misses, s.eager_fallbacks,
          s.cached_graphs);
      if (step + 1 > warm_up) xs.push_back(static_cast<double>(step + 1)), ys.push_back(rss);
    }
  }
  const ca::CompiledBackwardStats s = ca::enabled_stats();
  const size_t calls = s.hits + s.misses + s.eager_fallbacks;
  const double kib_per_1000 = xs.size() > 1 ? slope(xs, ys) * 1024 * 1000 : 0;
  std::printf(
      "rss after warm-up (step %ld): %.2f to %.2f MiB, slope %.2f KiB per 1000 steps (%zu "
      "samples)\n",
      warm_up, ys.empty() ? 0 : ys.front(), ys.empty() ? 0 : ys.back(), kib_per_1000, xs.size());
  std::printf("cache: at most %zu graphs held, bound %zu\n", max_cached, bound);
  std::printf("counters: hits %zu + misses %zu + fallbacks %zu = %zu of %ld backward calls\n",
              s.hits, s.misses, s.eager_fallbacks, calls, steps);
  const bool ok = calls == static_cast<size_t>(steps) && max_cached <= bound;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
