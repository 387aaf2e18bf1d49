#pragma once
/// @file
/// Tensor-list files: the zip format of Python's `torch.save([t0, t1, ...], "x.pt")`, read
/// and written with libtorch's pickler (no Python). Files written here load with `torch.load`.

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ca {

/// Loads the list or tuple of tensors saved at `path` (CPU tensors, in order).
/// Throws Error naming the path for a missing or unreadable file, a file that is not a
/// torch.save archive, or an archive that holds something else than a list/tuple of tensors
/// (the message says what it holds).
std::vector<at::Tensor> load_tensors(const std::string& path);

/// Saves `tensors` to `path` as a list, readable by `torch.load` and load_tensors.
/// Throws Error naming the path when it cannot be written.
void save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path);

/// load_tensors on `size` bytes at `data` (borrowed for the call).
std::vector<at::Tensor> tensors_from_bytes(const uint8_t* data, size_t size);

/// save_tensors into a new buffer owned by the caller.
std::vector<uint8_t> tensors_to_bytes(const std::vector<at::Tensor>& tensors);

}  // namespace ca
