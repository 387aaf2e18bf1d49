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
