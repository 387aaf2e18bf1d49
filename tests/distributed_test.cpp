// SPDX-License-Identifier: BSD-3-Clause
// Data-parallel pieces in one process: the bucket layout, a world of one (averaging is then the
// identity, so every .grad must be eager's bitwise, through replay and through eager fallback),
// parameters without a gradient, and the errors of the set-up calls. Several ranks are tested
// as separate processes (tests/python/test_data_parallel.py).
#include "ca/distributed.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ca/compiled_backward.h"
#include "distributed/grad_buckets.h"

namespace ca {
namespace {

// A port nothing listens on now (the kernel's choice), for a store of our own.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool bound = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!bound)
    throw std::runtime_error("no free loopback port: " + std::string(std::strerror(errno)));
  return ntohs(addr.sin_port);
}

c10::intrusive_ptr<c10d::ProcessGroup> world_of_one() {
  ProcessGroupOptions o;
  o.master_port = free_port();
  o.timeout = std::chrono::seconds(30);
  return init_process_group(o);
}

TEST(GradBuckets, ReverseOrderFirstBucketSmallSplitByDtype) {
  std::vector<at::Tensor> params = {
      torch::zeros({64}, torch::requires_grad()),                            // 256 B
      torch::zeros({64}, torch::dtype(torch::kDouble).requires_grad(true)),  // 512 B
      torch::zeros({64}, torch::dtype(torch::kDouble).requires_grad(true)),
      torch::zeros({8}),  // no gradient: left out
      torch::zeros({64}, torch::dtype(torch::kDouble).requires_grad(true)),
      torch::zeros({64}, torch::dtype(torch::kDouble).requires_grad(true))};
  const auto buckets = detail::layout_buckets(params, 600, 1100);
  ASSERT_EQ(buckets.size(), 4U);
  EXPECT_EQ(buckets[0].params, (std::vector<size_t>{5}));     // first: 512 of 600 bytes
  EXPECT_EQ(buckets[1].params, (std::vector<size_t>{4, 2}));  // then 1024 of 1100
  EXPECT_EQ(buckets[2].params, (std::vector<size_t>{1}));
  EXPECT_EQ(buckets[3].params, (std::vector<size_t>{0}));  // dtype change
  EXPECT_EQ(buckets[1].offsets, (std::vector<int64_t>{0, 64}));
  EXPECT_EQ(buckets[1].buffer.numel(), 128 + 2);  // gradients, then one count per parameter
  EXPECT_EQ(buckets[3].buffer.scalar_type(), torch::kFloat);
}

TEST(DataParallel, WorldOfOneIsEagerBitwiseUnusedGradsStayAsTheyWere) {
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(8, 8), torch::nn::Tanh(), torch::nn::Linear(8, 2));
  torch::nn::Linear unused(8, 1);
  std::vector<at::Tensor> params = net->parameters();
  for (const at::Tensor& p : unused->parameters()) params.push_back(p);
  unused->bias.mutable_grad() = torch::full({1}, 3.0);  // stale: no rank writes it

  DataParallelOptions small;
  small.first_bucket_bytes = small.bucket_bytes = 128;  // several buckets, launched mid-replay
  CompiledBackwardOptions options;
  options.data_parallel = data_parallel(world_of_one(), params, small);
  CompiledBackward cb(options);
  for (int step = 0; step < 3; ++step) {
    auto x = torch::randn({4, 8});
    for (const at::Tensor& p : net->parameters()) p.mutable_grad().reset();
    net->forward(x).pow(2).sum().backward();
    std::vector<at::Tensor> eager;
    for (const at::Tensor& p : net->parameters()) eager.push_back(p.grad().clone());
    for (const at::Tensor& p : net->parameters()) p.mutable_grad().reset();
    cb.backward({net->forward(x).pow(2).sum()});
    for (size_t k = 0; k < eager.size(); ++k) {
      EXPECT_TRUE(torch::equal(net->parameters()[k].grad(), eager[k])) << "step " << step;
    }
    EXPECT_FALSE(unused->weight.grad().defined());
    EXPECT_TRUE(torch::equal(unused->bias.grad(), torch::full({1}, 3.0)));
  }
  EXPECT_EQ(cb.stats().hits, 2U);
  // Every bucket left from inside the replay, as its last gradient was written.
  EXPECT_EQ(cb.stats().buckets_reduced, 3U * 3);
  EXPECT_EQ(cb.stats().buckets_overlapped, cb.stats().buckets_reduced);

  small.overlap = false;
  options.data_parallel = data_parallel(world_of_one(), params, small);
  CompiledBackward after(options);
  after.backward({net->forward(torch::randn({4, 8})).pow(2).sum()});
  EXPECT_EQ(after.stats().buckets_reduced, 3U);
  EXPECT_EQ(after.stats().buckets_overlapped, 0U);
}

TEST(DataParallel, EagerFallbackIsAveragedToo) {
  auto w = torch::randn({4}, torch::requires_grad());
  CompiledBackwardOptions options;
  options.data_parallel = data_parallel(world_of_one(), {w});
  CompiledBackward cb(options);
  auto y = (w * 2).sum();
  cb.backward({y}, {}, BackwardOptions{/*retain_graph=*/false, /*create_graph=*/true});
  EXPECT_EQ(cb.stats().eager_fallbacks, 1U);
  EXPECT_EQ(cb.stats().buckets_reduced, 1U);
  EXPECT_EQ(cb.stats().buckets_overlapped, 0U);  // eager backward: all after it
  EXPECT_TRUE(torch::equal(w.grad(), torch::full({4}, 2.0)));
}

// Two ranks as two threads, each on its own data. The last layer's weight has a hook, so its
// AccumulateGrad runs as itself (opaque) inside the replay, and its bucket (the first to leave:
// buckets go in reverse parameter order) must wait for that live write, as for any other.
TEST(DataParallel, AHookedParameterIsAveragedLikeTheOthers) {
  torch::manual_seed(4);
  const std::vector<at::Tensor> init = {torch::randn({6, 4}), torch::randn({6}),
                                        torch::randn({2, 6})};
  const std::vector<at::Tensor> data = {torch::randn({5, 4}), torch::randn({5, 4})};
  auto model = [&] {
    std::vector<at::Tensor> p(init.size());
    for (size_t k = 0; k < init.size(); ++k) p[k] = init[k].clone().requires_grad_();
    p[2].register_hook([](const at::Tensor& g) { return g * 3; });
    return p;
  };
  auto loss_of = [](const std::vector<at::Tensor>& p, const at::Tensor& x) {
    return torch::linear(torch::linear(x, p[0], p[1]).tanh(), p[2]).pow(2).sum();
  };
  std::vector<at::Tensor> expected;  // the mean of each rank's eager gradient
  {
    const std::vector<at::Tensor> a = model(), b = model();
    loss_of(a, data[0]).backward();
    loss_of(b, data[1]).backward();
    for (size_t k = 0; k < a.size(); ++k) expected.push_back((a[k].grad() + b[k].grad()) / 2);
  }
  const int port = free_port();
  std::vector<std::vector<at::Tensor>> got(2);
  std::vector<CompiledBackwardStats> stats(2);
  std::vector<std::string> failures(2);
  auto rank = [&](int r) {
    try {
      ProcessGroupOptions o;
      o.rank = r;
      o.world_size = 2;
      o.master_port = port;
      o.timeout = std::chrono::seconds(30);
      const std::vector<at::Tensor> p = model();
      DataParallelOptions small;
      small.first_bucket_bytes = small.bucket_bytes = 64;  // one parameter a bucket
      CompiledBackwardOptions options;
      options.data_parallel = data_parallel(init_process_group(o), p, small);
      CompiledBackward cb(options);
      for (int step = 0; step < 2; ++step) {  // a capture, then a replay from the cache
        for (const at::Tensor& t : p) t.mutable_grad().reset();
        cb.backward({loss_of(p, data[static_cast<size_t>(r)])});
      }
      for (const at::Tensor& t : p) got[static_cast<size_t>(r)].push_back(t.grad());
      stats[static_cast<size_t>(r)] = cb.stats();
    } catch (const std::exception& e) {
      failures[static_cast<size_t>(r)] = e.what();
    }
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(failures[r], "") << "rank " << r;
    EXPECT_EQ(stats[r].opaque_calls, 2U) << "rank " << r;
    EXPECT_EQ(stats[r].eager_fallbacks, 0U) << "rank " << r;
    ASSERT_EQ(got[r].size(), expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
      EXPECT_TRUE(torch::allclose(got[r][k], expected[k], 1e-6, 1e-6))
          << "rank " << r << ", parameter " << k;
    }
  }
}

TEST(DataParallel, SparseGradientIsRefusedNamingTheParameter) {
  torch::nn::Embedding emb(torch::nn::EmbeddingOptions(10, 4).sparse(true));
  CompiledBackwardOptions options;
  options.data_parallel = data_parallel(world_of_one(), emb->parameters());
  CompiledBackward cb(options);
  try {
    cb.backward({emb->forward(torch::tensor({1, 2})).sum()});
    FAIL() << "a sparse gradient was averaged";
  } catch (const CommunicationError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 0 has a sparse gradient"), std::string::npos)
        << e.what();
  }
}

TEST(DataParallel, SetUpErrorsNameTheProblem) {
  const at::Tensor w = torch::zeros({1}, torch::requires_grad());
  EXPECT_THROW(data_parallel(nullptr, {w}), Error);
  try {
    data_parallel(world_of_one(), {w, w});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameters[1] is parameters[0] again"),
              std::string::npos);
  }
  ProcessGroupOptions bad;
  bad.world_size = 2;
  bad.rank = 2;
  try {
    init_process_group(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 is outside [0, 2)"), std::string::npos);
  }
  ::setenv("WORLD_SIZE", "two", 1);
  try {
    init_process_group();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WORLD_SIZE='two'"), std::string::npos) << e.what();
  }
  ::setenv("WORLD_SIZE", "2", 1);
  ::unsetenv("RANK");
  EXPECT_THROW(init_process_group(), Error);  // torchrun sets RANK with WORLD_SIZE
  ::unsetenv("WORLD_SIZE");
}

}  // namespace
}  // namespace ca
