// SPDX-License-Identifier: BSD-3-Clause
// Data-parallel step time, one process per rank (launch: scripts/train_ddp.sh N --exe ddp_bench,
// or torchrun --no-python). Per model, the backward plus gradient averaging of:
//   eager+allreduce  eager backward, then one all-reduce per bucket (what a libtorch user writes)
//   replay+after     CompiledBackward, buckets all-reduced after the replay (overlap off)
//   replay+overlap   CompiledBackward, each bucket launched as the replay writes its last grad
//   replay alone     CompiledBackward without communication (what overlap can at best reach)
//   allreduce alone  the hand-written all-reduces by themselves, after an untimed backward
// Variants run interleaved in rounds of fixed step counts (every rank runs the same
// collectives; Google Benchmark's adaptive iteration counts would differ between ranks); rank 0
// prints the median round. Then all-reduce time and bandwidth against message size.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench_models.h"
#include "ca/compiled_backward.h"
#include "ca/distributed.h"

namespace {

using Clock = std::chrono::steady_clock;
using Group = c10::intrusive_ptr<c10d::ProcessGroup>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The hand-written version: reverse-order buckets of `bucket_bytes`, flattened, all launched,
// then awaited and copied back as averages.
void allreduce_by_hand(c10d::ProcessGroup& group, const std::vector<at::Tensor>& params,
                       size_t bucket_bytes) {
  std::vector<std::vector<at::Tensor>> grads(1);
  size_t bytes = 0;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    const size_t size = static_cast<size_t>(it->numel()) * it->element_size();
    if (bytes > 0 && bytes + size > bucket_bytes) grads.emplace_back(), bytes = 0;
    grads.back().push_back(it->grad());
    bytes += size;
  }
  std::vector<std::vector<at::Tensor>> flat(grads.size());
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (size_t b = 0; b < grads.size(); ++b) {
    std::vector<at::Tensor> pieces;
    for (const at::Tensor& g : grads[b]) pieces.push_back(g.reshape(-1));
    flat[b] = {torch::cat(pieces)};
    works.push_back(group.allreduce(flat[b]));
  }
  for (size_t b = 0; b < grads.size(); ++b) {
    works[b]->wait();
    flat[b][0].div_(group.getSize());
    int64_t offset = 0;
    for (const at::Tensor& g : grads[b]) {
      g.copy_(flat[b][0].narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
  }
}

struct Variant {
  const char* name;
  std::function<void(const at::Tensor& loss)> backward;
};

void bench_model(const Group& group, ca::bench::BenchModel& model, int steps, int rounds,
                 size_t bucket_bytes) {
  ca::DataParallelOptions dp;
  dp.bucket_bytes = bucket_bytes;
  dp.first_bucket_bytes = std::min(dp.first_bucket_bytes, bucket_bytes);
  ca::CompiledBackwardOptions overlap, after, alone;
  overlap.data_parallel = ca::data_parallel(group, model.parameters, dp);
  dp.overlap = false;
  after.data_parallel = ca::data_parallel(group, model.parameters, dp);
  ca::CompiledBackward cb_overlap(overlap), cb_after(after), cb_alone(alone);
  std::vector<Variant> variants = {
      {"eager+allreduce",
       [&](const at::Tensor& loss) {
         loss.backward();
         allreduce_by_hand(*group, model.parameters, bucket_bytes);
       }},
      {"replay+after", [&](const at::Tensor& loss) { cb_after.backward({loss}); }},
      {"replay+overlap", [&](const at::Tensor& loss) { cb_overlap.backward({loss}); }},
      {"replay alone", [&](const at::Tensor& loss) { cb_alone.backward({loss}); }},
      {"allreduce alone",
       [&](const at::Tensor&) { allreduce_by_hand(*group, model.parameters, bucket_bytes); }},
  };
  std::vector<std::vector<double>> us(variants.size());
  for (int round = -1; round < rounds; ++round) {  // round -1 warms every cache up
    for (size_t v = 0; v < variants.size(); ++v) {
      double total = 0;
      for (int s = 0; s < steps; ++s) {
        for (const at::Tensor& p : model.parameters) p.mutable_grad().reset();
        at::Tensor loss = model.forward();
        if (v == 4) cb_alone.backward({loss});  // gradients to average, untimed
        // Ranks start each timed step together: what is timed is the step, not the other
        // rank's lag from the untimed forward.
        group->barrier()->wait();
        const auto start = Clock::now();
        variants[v].backward(loss);
        total += std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      }
      if (round >= 0) us[v].push_back(total / steps);
    }
  }
  if (group->getRank() != 0) return;
  const double eager = median(us[0]), after_t = median(us[1]), overlap_t = median(us[2]),
               alone_t = median(us[3]);
  std::printf("%-18s bucket %7zu KiB:", model.name.c_str(), bucket_bytes >> 10);
  for (size_t v = 0; v < variants.size(); ++v) {
    std::printf("  %s %.1f us", variants[v].name, median(us[v]));
  }
  const double comm = after_t - alone_t;
  std::printf(
      "\n%-18s ratios: overlap/eager+allreduce %.2f, after/eager+allreduce %.2f; "
      "communication hidden %.0f%% (of %.1f us)\n",
      "", overlap_t / eager, after_t / eager, comm > 0 ? 100.0 * (after_t - overlap_t) / comm : 0.0,
      comm);
}

void bench_bandwidth(c10d::ProcessGroup& group, int reps) {
  if (group.getRank() == 0) std::printf("\nall-reduce of float32, %d ranks:\n", group.getSize());
  for (int64_t bytes = 1 << 10; bytes <= (int64_t{64} << 20); bytes *= 4) {
    std::vector<at::Tensor> t{torch::ones({bytes / 4})};
    group.allreduce(t)->wait();  // warm-up
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
      const auto start = Clock::now();
      group.allreduce(t)->wait();
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    const double m = median(us);
    if (group.getRank() == 0) {
      std::printf("  %9lld bytes: %10.1f us  %8.3f GB/s\n", static_cast<long long>(bytes), m,
                  static_cast<double>(bytes) / m / 1e3);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // One handler for everything main does, CLI11 set-up included.
  try {
    CLI::App app{
        "Data-parallel backward step time: replay with overlapped all-reduce against eager\n"
        "backward followed by hand-written all-reduces. One process per rank; launch with\n"
        "scripts/train_ddp.sh 2 --exe build/bench/ddp_bench [options] or torchrun --no-python."};
    int steps = 40, rounds = 5, threads = 1;
    std::vector<size_t> bucket_kib = {size_t{25} * 1024, 64, 16};
    bool bandwidth = true;
    app.add_option("--steps", steps, "steps per variant per round")->check(CLI::Range(1, 100000));
    app.add_option("--rounds", rounds, "timed rounds (median reported)")
        ->check(CLI::Range(1, 1000));
    app.add_option("--bucket-kib", bucket_kib, "bucket sizes to run, KiB")->expected(1, -1);
    app.add_option("--threads", threads, "intra-op threads per rank")->check(CLI::Range(1, 256));
    app.add_flag("!--no-bandwidth", bandwidth, "skip the all-reduce bandwidth sweep");
    CLI11_PARSE(app, argc, argv);
    at::set_num_threads(threads);
    Group group = ca::init_process_group();
    if (ca::rank(*group) == 0) {
      std::printf("%d ranks, %d intra-op thread(s) each; per-step backward + averaging time\n",
                  ca::world_size(*group), threads);
    }
    for (ca::bench::BenchModel& model : ca::bench::bench_models()) {
      ca::broadcast_parameters(*group, model.parameters);
      for (size_t kib : bucket_kib) bench_model(group, model, steps, rounds, kib << 10);
    }
    if (bandwidth) bench_bandwidth(*group, 20);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
