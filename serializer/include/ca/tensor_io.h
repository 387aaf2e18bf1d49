// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Tensor-list files: the zip format of Python's `torch.save([t0, t1, ...], "x.pt")`, read
/// and written with libtorch's pickler (no Python). Files written here load with `torch.load`.
/// Loading is hostile-input safe: the pickle's nesting, strings and memo are bounded before it
/// is unpickled, and every tensor is checked against the data record it was built on.

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ca {

/// Loads the list or tuple of tensors saved at `path` (CPU tensors, in order, whatever device
/// the file names). Throws Error naming the path for a missing or unreadable file, and
/// FormatError naming the path for what tensors_from_bytes refuses.
std::vector<at::Tensor> load_tensors(const std::string& path);

/// Saves `tensors` to `path` as a list, readable by `torch.load` and load_tensors, through a new
/// temporary file in the same folder, fsync and rename (never a half-written `path`).
/// Throws Error naming the path when it cannot be written.
void save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path);

/// load_tensors on `size` bytes at `data` (borrowed for the call; the tensors own copies).
/// Throws FormatError for bytes that are not a torch.save archive, an archive that holds
/// something else than a list/tuple of tensors (the message says what it holds), a pickle nested
/// deeper than 64 levels or otherwise malformed, or a tensor (named by its index, with the
/// numbers) that is not a dense tensor, whose storage declares more bytes than its data record
/// holds, or whose sizes, strides and offset reach outside its storage.
std::vector<at::Tensor> tensors_from_bytes(const uint8_t* data, size_t size);

/// save_tensors into a new buffer owned by the caller.
std::vector<uint8_t> tensors_to_bytes(const std::vector<at::Tensor>& tensors);

}  // namespace ca
