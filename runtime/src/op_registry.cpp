#include "ca/op_registry.h"

#include <algorithm>
#include <mutex>

#include "ca/error.h"
#include "ca/graph.h"
#include "ca/version.h"
#include "harvest/harvest.h"

namespace ca {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();  // never destroyed: entries hold functions from libtorch
    r->report_ = detail::harvest_all([r](OpEntry e) { r->add(std::move(e)); });
    return r;
  }();
  return *registry;
}

const OpEntry* OpRegistry::find(const std::string& name) const {
  std::shared_lock lock(mutex_);
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.get();
}

const OpEntry& OpRegistry::get(const std::string& name) const {
  if (const OpEntry* entry = find(name)) return *entry;
  throw OpNotFoundError(
      "op '" + name + "' is not in the registry: not a built-in autograd node of torch " +
      runtime_torch_version() + " and not registered as a custom function (CA_REGISTER_FUNCTION)");
}

bool OpRegistry::add(OpEntry entry) {
  std::unique_lock lock(mutex_);
  auto& slot = entries_[entry.name];
  if (slot) return false;  // entries never change once added: readers hold their addresses
  slot = std::make_unique<OpEntry>(std::move(entry));
  return true;
}

std::vector<std::string> OpRegistry::names() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, _] : entries_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ca
