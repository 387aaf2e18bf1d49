// SPDX-License-Identifier: BSD-3-Clause
// Joining a process group (from options or torchrun's environment) and starting ranks alike.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <unordered_map>

#include "ca/distributed.h"
#include "distributed/backend_factory.h"

namespace ca {
namespace {

std::string where(const ProcessGroupOptions& o) {
  return "rank " + std::to_string(o.rank) + " of " + std::to_string(o.world_size) +
         " joining the process group at " + o.master_addr + ":" + std::to_string(o.master_port);
}

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// An integer variable in [lo, hi]; `fallback` when unset.
int env_int(const char* name, int fallback, long lo, long hi) {
  const std::optional<std::string> text = env(name);
  if (!text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str() || *end != '\0' || value < lo || value > hi) {
    throw Error(std::string("environment variable ") + name + "='" + *text +
                "': expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "]");
  }
  return static_cast<int>(value);
}

void check(const ProcessGroupOptions& o) {
  if (o.world_size < 1) throw Error("world size must be >= 1, got " + std::to_string(o.world_size));
  if (o.rank < 0 || o.rank >= o.world_size) {
    throw Error("rank " + std::to_string(o.rank) + " is outside [0, " +
                std::to_string(o.world_size) + ")");
  }
  if (o.master_port < 1 || o.master_port > 65535) {
    throw Error("master port " + std::to_string(o.master_port) + " is outside [1, 65535]");
  }
  if (o.timeout.count() <= 0) throw Error("the process group's timeout must be positive");
  if (!o.backend.empty() && o.backend != "gloo" && o.backend != "nccl") {
    throw Error("backend '" + o.backend + "': expected gloo, nccl or empty (by device)");
  }
}

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> init_process_group(const ProcessGroupOptions& o) {
  check(o);
  const bool nccl =
      o.backend == "nccl" || (o.backend.empty() && detail::nccl_built() && at::hasCUDA());
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(o.master_port);
    store_options.isServer = o.rank == 0 && !o.external_store;
    store_options.numWorkers = static_cast<size_t>(o.world_size);
    store_options.timeout = o.timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(o.master_addr, store_options);
    auto group = c10::make_intrusive<c10d::ProcessGroup>(store, o.rank, o.world_size);
    // As torch's default "cpu:gloo,cuda:nccl": each collective goes to its tensors' device's
    // backend, so CPU tensors still work where NCCL is the default. Each backend keys its own
    // part of the store.
    using Type = c10d::ProcessGroup::BackendType;
    c10::intrusive_ptr<c10d::Backend> gloo, nccl_backend;
    if (o.backend != "nccl") {
      gloo = detail::make_gloo(c10::make_intrusive<c10d::PrefixStore>("gloo/", store), o);
      group->setBackend(c10::DeviceType::CPU, Type::GLOO, gloo);
    }
    if (nccl) {
      nccl_backend = detail::make_nccl(c10::make_intrusive<c10d::PrefixStore>("nccl/", store), o);
      group->setBackend(c10::DeviceType::CUDA, Type::NCCL, nccl_backend);
    } else if (at::hasCUDA()) {
      group->setBackend(c10::DeviceType::CUDA, Type::GLOO, gloo);
    }
    group->setDefaultBackend(nccl ? Type::NCCL : Type::GLOO);
    return group;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw CommunicationError(where(o) + " failed (within " + std::to_string(o.timeout.count()) +
                             " ms): " + detail::failure_text(e));
  }
}

c10::intrusive_ptr<c10d::ProcessGroup> init_process_group() {
  ProcessGroupOptions o;
  o.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 20);
  o.rank = env_int("RANK", 0, 0, o.world_size - 1);
  o.local_rank = env_int("LOCAL_RANK", 0, 0, 1 << 16);
  o.master_port = env_int("MASTER_PORT", o.master_port, 1, 65535);
  o.master_addr = env("MASTER_ADDR").value_or(o.master_addr);
  o.backend = env("CA_BACKEND").value_or("");
  o.interface = env("GLOO_SOCKET_IFNAME").value_or("");
  o.external_store = env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
  o.timeout = std::chrono::seconds(env_int("CA_DIST_TIMEOUT_S", 300, 1, 1 << 24));
  if (o.world_size > 1 && (!env("RANK") || !env("MASTER_ADDR") || !env("MASTER_PORT"))) {
    throw Error("WORLD_SIZE=" + std::to_string(o.world_size) +
                " needs RANK, MASTER_ADDR and MASTER_PORT too (torchrun sets all four)");
  }
  return init_process_group(o);
}

int rank(const c10d::ProcessGroup& group) { return group.getRank(); }
int world_size(const c10d::ProcessGroup& group) { return group.getSize(); }
std::string backend_name(const c10d::ProcessGroup& group) { return group.getBackendName(); }

void broadcast_parameters(c10d::ProcessGroup& group, const std::vector<at::Tensor>& tensors) {
  at::NoGradGuard no_grad;
  // One broadcast per dtype and device, of the tensors flattened into one buffer: a model's
  // hundreds of small tensors cost one round trip, not one each.
  std::vector<std::vector<at::Tensor>> groups;
  for (const at::Tensor& t : tensors) {
    auto same = [&](const std::vector<at::Tensor>& g) {
      return g.front().scalar_type() == t.scalar_type() && g.front().device() == t.device();
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) it = groups.insert(groups.end(), std::vector<at::Tensor>{});
    it->push_back(t.detach());
  }
  for (const std::vector<at::Tensor>& g : groups) {
    std::vector<at::Tensor> pieces;
    pieces.reserve(g.size());
    for (const at::Tensor& t : g) pieces.push_back(t.reshape({-1}));
    std::vector<at::Tensor> flat{at::cat(pieces)};
    try {
      group.broadcast(flat)->wait();
    } catch (const std::exception& e) {
      throw CommunicationError(
          "rank " + std::to_string(group.getRank()) + " of " + std::to_string(group.getSize()) +
          ": broadcast of " + std::to_string(g.size()) + " tensors of " +
          c10::toString(g.front().scalar_type()) + " on " + g.front().device().str() +
          " from rank 0 failed: " + detail::failure_text(e));
    }
    int64_t offset = 0;
    for (const at::Tensor& t : g) {
      t.copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

void broadcast_parameters(c10d::ProcessGroup& group, const torch::nn::Module& module) {
  std::vector<at::Tensor> tensors = module.parameters();
  for (const at::Tensor& b : module.buffers()) tensors.push_back(b);
  broadcast_parameters(group, tensors);
}

std::shared_ptr<const DataParallelOptions> data_parallel(
    c10::intrusive_ptr<c10d::ProcessGroup> process_group, std::vector<at::Tensor> parameters,
    DataParallelOptions options) {
  if (!process_group) throw Error("data_parallel: the process group is null");
  if (parameters.empty()) throw Error("data_parallel: no parameters to average");
  if (options.bucket_bytes == 0 || options.first_bucket_bytes == 0) {
    throw Error("data_parallel: bucket sizes must be positive");
  }
  std::unordered_map<const c10::TensorImpl*, size_t> seen;
  for (size_t k = 0; k < parameters.size(); ++k) {
    if (!parameters[k].defined()) {
      throw Error("data_parallel: parameters[" + std::to_string(k) + "] is undefined");
    }
    const auto [it, fresh] = seen.emplace(parameters[k].unsafeGetTensorImpl(), k);
    if (!fresh) {
      throw Error("data_parallel: parameters[" + std::to_string(k) + "] is parameters[" +
                  std::to_string(it->second) + "] again; each parameter must appear once");
    }
  }
  options.process_group = std::move(process_group);
  options.parameters = std::move(parameters);
  return std::make_shared<const DataParallelOptions>(std::move(options));
}

}  // namespace ca
