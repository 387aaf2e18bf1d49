// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Data-parallel training on PyTorch's own distributed engine (c10d): one process per rank, each
/// on its shard of the batch; CompiledBackward all-reduces the parameters' gradients in buckets,
/// each launched as soon as the replay has written its last gradient, and leaves every rank
/// with the gradients averaged over ranks, as torch's DistributedDataParallel does.
///
///   auto pg = ca::init_process_group();  // torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ...
///   ca::broadcast_parameters(*pg, *model);  // every rank starts from rank 0's weights
///   ca::CompiledBackwardOptions options;
///   options.data_parallel = ca::data_parallel(pg, model->parameters());
///   ca::CompiledBackward engine(options);   // or ca::enable(options)

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "ca/error.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace ca {

/// A collective that failed or timed out: a peer that died, stalled past the timeout or never
/// started. The message names this rank, the world size, the collective and torch's reason.
class CommunicationError : public Error {
 public:
  using Error::Error;
};

/// How a CompiledBackward averages gradients over the ranks of a process group.
///
/// Every rank must pass the same parameters in the same order (e.g. `model->parameters()` of
/// the same model). Buckets are laid out in reverse parameter order (the order backward usually
/// produces them), split by dtype and device: the first holds up to `first_bucket_bytes`, the
/// others up to `bucket_bytes`. Buckets are all-reduced in that order on every rank, whatever
/// graph a rank replays, so ranks whose graphs differ (or one that captures while another
/// replays, or falls back to eager backward) still run the same collectives.
///
/// A parameter that gets no gradient on a rank in some step contributes zeros to the average
/// (each rank's count of users travels in the bucket, so no extra collective is needed). One
/// that gets no gradient on any rank keeps its `.grad` as it was (undefined stays undefined),
/// as DDP with `find_unused_parameters=True` does. Parameters that do not require grad are left
/// out. Sparse gradients are refused (CommunicationError).
struct DataParallelOptions {
  /// The group the gradients are averaged over (init_process_group()); must not be null.
  c10::intrusive_ptr<c10d::ProcessGroup> process_group;
  /// The parameters whose gradients are averaged, in the same order on every rank.
  std::vector<at::Tensor> parameters;
  /// Largest bucket (DDP's default, 25 MiB); one parameter larger than this gets its own.
  size_t bucket_bytes = size_t{25} << 20;
  /// The first bucket's limit (DDP's 1 MiB): the gradients backward writes first leave early.
  size_t first_bucket_bytes = size_t{1} << 20;
  /// Launch each bucket while the replay goes on (true), or all after it (false; what a
  /// backward followed by hand-written all-reduces does; for comparison).
  bool overlap = true;
};

/// Makes the options CompiledBackwardOptions::data_parallel takes. Throws Error for a null
/// group or an empty parameter list.
std::shared_ptr<const DataParallelOptions> data_parallel(
    c10::intrusive_ptr<c10d::ProcessGroup> process_group, std::vector<at::Tensor> parameters,
    DataParallelOptions options = {});

/// Where and how to meet the other ranks.
struct ProcessGroupOptions {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";  ///< the host of rank 0's store
  int master_port = 29500;
  /// How long to wait for every rank to join, and for each collective: a peer that never
  /// starts or stalls longer makes the others throw CommunicationError after it.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  /// "" (by device, as torch's default: Gloo for CPU tensors, NCCL for CUDA tensors where
  /// CUDA is visible and this build has NCCL, else Gloo), "gloo" (for every device) or "nccl"
  /// (CUDA tensors only).
  std::string backend;
  /// The CUDA device this rank drives with nccl (torchrun's LOCAL_RANK).
  int local_rank = 0;
  /// Rank 0 joins a store that another process already serves at master_addr:master_port
  /// (torchrun's agent does, and says so with TORCHELASTIC_USE_AGENT_STORE=True) instead of
  /// serving it.
  bool external_store = false;
  /// The network interface Gloo binds to (torch's GLOO_SOCKET_IFNAME); "" = the address this
  /// host's name resolves to, or loopback when master_addr is a loopback address.
  std::string interface;
};

/// Joins (rank 0: creates) the group: a TCPStore on master_addr:master_port and a Gloo or
/// NCCL backend. Throws CommunicationError when the other ranks do not all join within the
/// timeout, Error for options out of range or a backend this build lacks.
c10::intrusive_ptr<c10d::ProcessGroup> init_process_group(const ProcessGroupOptions& options);

/// init_process_group() from the environment torchrun sets: RANK, WORLD_SIZE, MASTER_ADDR,
/// MASTER_PORT and LOCAL_RANK (a single process, world size 1, when none is set); CA_BACKEND
/// picks the backend, CA_DIST_TIMEOUT_S the timeout, GLOO_SOCKET_IFNAME the interface and
/// TORCHELASTIC_USE_AGENT_STORE external_store. Throws
/// Error naming a variable that is missing or malformed.
c10::intrusive_ptr<c10d::ProcessGroup> init_process_group();

/// This rank, the group's size, and its default backend's name ("gloo", "nccl").
int rank(const c10d::ProcessGroup& group);
int world_size(const c10d::ProcessGroup& group);
std::string backend_name(const c10d::ProcessGroup& group);

/// Copies rank 0's values into every rank's `tensors` (in place), so that ranks start
/// identical. Throws CommunicationError as above.
void broadcast_parameters(c10d::ProcessGroup& group, const std::vector<at::Tensor>& tensors);
/// The same for a module's parameters and buffers (BatchNorm's running statistics too).
void broadcast_parameters(c10d::ProcessGroup& group, const torch::nn::Module& module);

}  // namespace ca
