// SPDX-License-Identifier: BSD-3-Clause
#include "ca/op_registry.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "arg_convert.h"
#include "ca/custom_function.h"
#include "ca/error.h"
#include "ca/version.h"
#include "registry/harvest.h"
#include "registry/op_entry.h"

namespace ca {

struct OpRegistry::Impl {
  mutable std::shared_mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<detail::OpEntry>> entries;
  HarvestReport report;
};

namespace {

// Custom functions registered before the registry exists (static initialization) wait here.
struct PendingCustomOps {
  std::mutex mutex;
  std::vector<detail::OpEntry> entries;
  bool registry_built = false;
};

PendingCustomOps& pending_custom_ops() {
  static PendingCustomOps pending;
  return pending;
}

}  // namespace

OpRegistry::OpRegistry() : impl_(std::make_unique<Impl>()) {}
OpRegistry::~OpRegistry() = default;

const OpRegistry& OpRegistry::global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();  // never destroyed: entries hold functions from libtorch
    r->impl_->report = detail::harvest_all(
        [r](detail::OpEntry e) { detail::RegistryAccess::add(*r, std::move(e)); });
    PendingCustomOps& pending = pending_custom_ops();
    std::lock_guard lock(pending.mutex);
    for (detail::OpEntry& e : pending.entries) detail::RegistryAccess::add(*r, std::move(e));
    pending.entries.clear();
    pending.registry_built = true;
    return r;
  }();
  return *registry;
}

bool OpRegistry::contains(const std::string& name) const {
  return detail::RegistryAccess::find(*this, name) != nullptr;
}

OpInfo OpRegistry::info(const std::string& name) const {
  const detail::OpEntry* e = detail::RegistryAccess::find(*this, name);
  if (e == nullptr) {
    throw OpNotFoundError("op '" + name +
                          "' is not in the registry: not a built-in autograd node of torch " +
                          runtime_torch_version() +
                          " and not registered as a custom function (CA_REGISTER_FUNCTION)");
  }
  OpInfo info{e->name, {}, {}, e->is_custom_function, e->needs_input_grad_count};
  for (size_t i = 0; i < e->schema.size(); ++i) {
    info.arg_types.push_back(e->schema[i]->str());
    info.types.push_back(
        detail::arg_type_of(e->schema[i], name + " schema[" + std::to_string(i) + "]"));
  }
  return info;
}

std::vector<std::string> OpRegistry::names() const {
  std::shared_lock lock(impl_->mutex);
  std::vector<std::string> out;
  out.reserve(impl_->entries.size());
  for (const auto& [name, _] : impl_->entries) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

const HarvestReport& OpRegistry::harvest_report() const { return impl_->report; }

namespace detail {

const OpEntry* RegistryAccess::find(const OpRegistry& registry, const std::string& name) {
  std::shared_lock lock(registry.impl_->mutex);
  auto it = registry.impl_->entries.find(name);
  return it == registry.impl_->entries.end() ? nullptr : it->second.get();
}

bool RegistryAccess::add(const OpRegistry& registry, OpEntry entry) {
  std::unique_lock lock(registry.impl_->mutex);
  auto& slot = registry.impl_->entries[entry.name];
  if (slot) return false;  // entries never change once added: readers hold their addresses
  slot = std::make_unique<OpEntry>(std::move(entry));
  return true;
}

const OpEntry* find_op(const std::string& name) {
  return RegistryAccess::find(OpRegistry::global(), name);
}

bool register_custom_op(OpEntry entry) {
  PendingCustomOps& pending = pending_custom_ops();
  {
    std::lock_guard lock(pending.mutex);
    if (!pending.registry_built) {
      const bool seen = std::any_of(pending.entries.begin(), pending.entries.end(),
                                    [&](const OpEntry& e) { return e.name == entry.name; });
      if (!seen) pending.entries.push_back(std::move(entry));
      return !seen;
    }
  }
  return RegistryAccess::add(OpRegistry::global(), std::move(entry));
}

bool register_custom_function(const std::string& name, torch::autograd::functional_apply_t fn) {
  return register_custom_op({name, std::move(fn), {}, /*is_custom_function=*/true, -1});
}

}  // namespace detail
}  // namespace ca
