// SPDX-License-Identifier: BSD-3-Clause
// train_ddp: data-parallel SGD with ca-replay's backward on c10d. Each rank trains on its shard of
// every batch; CompiledBackward (or ca::enable()) averages the gradients over the ranks while it
// replays. Launched like any torch job: torchrun --nproc-per-node N --no-python train_ddp ...,
// or scripts/train_ddp.sh N ... . --reference trains one process on the full batches with eager
// backward: what the ranks must end equal to.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "ca/compiled_backward.h"
#include "ca/distributed.h"
#include "ca/tensor_io.h"
#include "model.h"

namespace {

struct Config {
  std::string model = "mlp";
  std::string device = "cpu";
  int64_t features = 32;
  int steps = 20;
  int64_t batch = 32;
  int64_t dataset = 100;
  bool vary_graph = false;
  std::string engine = "compiled";
  size_t bucket_kib = size_t{25} * 1024;
  bool overlap = true;
  std::string out;
  int log_every = 0;
  std::string fault = "none";
  int fault_rank = 1;
  int fault_step = 3;
};

// The global batch of `step`: the dataset's rows in order, the last batch of an epoch smaller.
std::pair<int64_t, int64_t> batch_rows(const Config& c, int step) {
  const int64_t per_epoch = (c.dataset + c.batch - 1) / c.batch;
  const int64_t begin = (step % per_epoch) * c.batch;
  return {begin, std::min(begin + c.batch, c.dataset)};
}

// Rank `rank`'s loss on its shard, scaled so that the average over the ranks is the full batch's
// mean (shards may differ in size). Ranks take the aux branch on different steps.
torch::Tensor shard_loss(ddp::Net& net, const ddp::Data& d, const Config& c, int step, int rank,
                         int world) {
  const auto [begin, end] = batch_rows(c, step);
  auto x = torch::tensor_split(d.x.slice(0, begin, end), world)[rank];
  auto y = torch::tensor_split(d.y.slice(0, begin, end), world)[rank];
  const double scale = static_cast<double>(world) / static_cast<double>(end - begin);
  auto features = net->forward(x);
  auto loss = (net->head->forward(features) - y).pow(2).sum() * scale;
  if (c.vary_graph && (step + rank) % 3 == 0) {
    loss = loss + net->aux->forward(features).pow(2).sum() * (0.1 * scale);
  }
  return loss;
}

int local_rank() {
  const char* text = std::getenv("LOCAL_RANK");
  return text != nullptr ? std::atoi(text) : 0;
}

std::string out_path(const Config& c, int rank) {
  std::string path = c.out;
  if (auto at = path.find("{rank}"); at != std::string::npos) {
    path.replace(at, 6, std::to_string(rank));
  }
  return path;
}

void inject_fault(const Config& c, int rank, int step) {
  if (c.fault == "none" || rank != c.fault_rank || step != c.fault_step) return;
  std::fprintf(stderr, "train_ddp rank %d: injected fault '%s' at step %d\n", rank, c.fault.c_str(),
               step);
  std::fflush(stderr);
  if (c.fault == "kill") std::raise(SIGKILL);
  std::this_thread::sleep_for(std::chrono::hours(1));  // stall
}

// One process, full batches, eager backward: the sum of the ranks' losses over the world size.
int train_reference(const Config& c, int world) {
  torch::manual_seed(1);  // rank 0's seed: the ranks start from rank 0's weights
  ddp::Net net(c.model, c.features);
  const ddp::Data data = ddp::make_data(c.dataset, c.features);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  for (int step = 0; step < c.steps; ++step) {
    opt.zero_grad();
    torch::Tensor loss = shard_loss(net, data, c, step, 0, world);
    for (int r = 1; r < world; ++r) loss = loss + shard_loss(net, data, c, step, r, world);
    (loss / world).backward();
    opt.step();
  }
  if (!c.out.empty()) ca::save_tensors(net->parameters(), out_path(c, 0));
  std::printf("reference: %d steps on full batches, world size %d emulated\n", c.steps, world);
  return 0;
}

int train_rank(const Config& c) {
  auto group = ca::init_process_group();
  const int rank = ca::rank(*group), world = ca::world_size(*group);
  torch::manual_seed(1 + 7 * rank);  // different on purpose: the broadcast makes them equal
  ddp::Net net(c.model, c.features);
  // cuda: this rank's GPU (torchrun's LOCAL_RANK), where NCCL averages the gradients.
  const torch::Device device =
      c.device == "cuda" ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank()))
                         : torch::Device(torch::kCPU);
  net->to(device);
  ca::broadcast_parameters(*group, *net);
  ddp::Data data = ddp::make_data(c.dataset, c.features);
  data.x = data.x.to(device);
  data.y = data.y.to(device);
  if (rank == 0) {
    std::printf("%d ranks on %s, backend %s\n", world, c.device.c_str(),
                ca::backend_name(*group).c_str());
  }
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));

  ca::DataParallelOptions dp;
  dp.bucket_bytes = c.bucket_kib * 1024;
  dp.first_bucket_bytes = std::min<size_t>(dp.first_bucket_bytes, dp.bucket_bytes);
  dp.overlap = c.overlap;
  ca::CompiledBackwardOptions options;
  options.data_parallel = ca::data_parallel(group, net->parameters(), dp);
  ca::CompiledBackward engine(options);
  std::optional<ca::EnableGuard> enabled;
  if (c.engine == "enabled") enabled.emplace(options);

  std::string captured_at;  // the steps that missed the cache (they differ between ranks)
  auto stats_now = [&] { return enabled ? ca::enabled_stats() : engine.stats(); };
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < c.steps; ++step) {
    const size_t misses = stats_now().misses;
    opt.zero_grad();
    torch::Tensor loss = shard_loss(net, data, c, step, rank, world);
    inject_fault(c, rank, step);
    if (enabled) {
      loss.backward();
    } else {
      engine.backward({loss});
    }
    opt.step();
    if (stats_now().misses != misses) captured_at += " " + std::to_string(step);
    if (rank == 0 && c.log_every > 0 && (step + 1) % c.log_every == 0) {
      std::printf("step %d/%d: rank 0 loss %.6f\n", step + 1, c.steps, loss.item<double>());
      std::fflush(stdout);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ca::CompiledBackwardStats stats = stats_now();
  std::printf(
      "rank %d of %d: %d steps in %.3f s (%.1f steps/s); %zu replays, %zu captures "
      "(at steps%s), %zu eager fallbacks; %zu of %zu gradient buckets all-reduced "
      "while the replay ran\n",
      rank, world, c.steps, seconds, c.steps / seconds, stats.hits, stats.misses,
      captured_at.c_str(), stats.eager_fallbacks, stats.buckets_overlapped, stats.buckets_reduced);
  if (!c.out.empty()) {
    net->to(torch::kCPU);
    ca::save_tensors(net->parameters(), out_path(c, rank));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // One handler for everything main does, CLI11 set-up included.
  try {
    CLI::App app{
        "Data-parallel SGD with ca-replay as the backward engine, on torch's c10d (Gloo on CPU,\n"
        "NCCL on CUDA where built). One process per rank; the rank, world size and rendezvous "
        "come\n"
        "from torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK;\n"
        "CA_DIST_TIMEOUT_S bounds every wait), e.g.\n"
        "  torchrun --nproc-per-node 2 --no-python train_ddp --steps 50\n"
        "  scripts/train_ddp.sh 2 --steps 50\n"
        "Each rank trains on its shard of every batch; gradients are averaged over the ranks.\n"
        "Exit 1 with a message naming the rank and collective when a peer dies or stalls."};
    Config c;
    int reference_world = 0;
    int threads = 1;
    app.add_option("--model", c.model, "mlp (deep, narrow) or transformer (one encoder block)")
        ->check(CLI::IsMember({"mlp", "transformer"}));
    app.add_option("--device", c.device, "cpu, or cuda (the GPU LOCAL_RANK names)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    app.add_option("--steps", c.steps, "SGD steps")->check(CLI::Range(1, 1000000));
    app.add_option("--batch", c.batch, "global batch size (split over the ranks)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--dataset", c.dataset, "samples per epoch (the last batch is smaller)")
        ->check(CLI::Range(1, 1 << 24));
    app.add_flag("--vary-graph", c.vary_graph,
                 "ranks take an auxiliary loss on different steps: graphs differ between ranks "
                 "and steps, and the aux head gets no gradient on some");
    app.add_option("--engine", c.engine, "compiled (ca::CompiledBackward) or enabled (ca::enable)")
        ->check(CLI::IsMember({"compiled", "enabled"}));
    app.add_option("--bucket-kib", c.bucket_kib, "all-reduce bucket size in KiB (DDP: 25600)")
        ->check(CLI::Range(1, 1 << 22));
    app.add_flag(
        "--no-overlap", [&](int64_t) { c.overlap = false; },
        "all-reduce after the replay instead of during it");
    app.add_option("--out", c.out, "save the final parameters (.pt; {rank} is replaced)");
    app.add_option("--log-every", c.log_every, "print rank 0's loss every N steps")
        ->check(CLI::Range(0, 1000000));
    app.add_option("--threads", threads, "intra-op threads per rank")->check(CLI::Range(1, 256));
    app.add_option("--reference", reference_world,
                   "train one process on full batches with eager backward, emulating this world "
                   "size's loss (no process group)")
        ->check(CLI::Range(1, 1024));
    app.add_option("--fault", c.fault, "test only: kill or stall --fault-rank at --fault-step")
        ->check(CLI::IsMember({"none", "kill", "stall"}));
    app.add_option("--fault-rank", c.fault_rank, "test only: the rank that fails");
    app.add_option("--fault-step", c.fault_step, "test only: the step it fails at");
    CLI11_PARSE(app, argc, argv);
    at::set_num_threads(threads);
    return reference_world > 0 ? train_reference(c, reference_world) : train_rank(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_ddp rank %s: error: %s\n",
                 std::getenv("RANK") != nullptr ? std::getenv("RANK") : "0", e.what());
    return 1;
  }
}
