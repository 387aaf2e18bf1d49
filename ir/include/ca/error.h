// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// The project's exception types. Every user-facing error derives from ca::Error.

#include <stdexcept>
#include <string>

#include "ca/escape.h"

namespace ca {

/// Base of every user-facing error ca-replay throws: bad files, unknown ops, wrong inputs,
/// unsupported graphs. The message names the place (node, input, field), the value and the
/// expectation. Layers that add context (the file's path, the failing node) prefix it with
/// add_context() and rethrow the same object, so an error keeps its type on the way up: catch
/// InputError to catch every input mismatch, wherever it was found. Messages and contexts are
/// escaped (escape_text): they often quote names read from a file.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message)
      : std::runtime_error("ca::Error"), message_(escape_text(message)) {}

  /// The full message: every context prefix, then the original text.
  const char* what() const noexcept override { return message_.c_str(); }

  /// Prefixes `context` (e.g. "bwd.fb: " or "nodes[17] (functional MulBackward0): ") to the
  /// message. Use as `catch (ca::Error& e) { e.add_context(...); throw; }`.
  void add_context(const std::string& context) { message_.insert(0, escape_text(context)); }

 private:
  std::string message_;
};

/// A graph file or buffer that is malformed, truncated, corrupt or semantically invalid.
class FormatError : public Error {
 public:
  using Error::Error;
};

/// A graph written by another format version, or captured with a torch whose op schemas differ
/// from the runtime's.
class VersionError : public Error {
 public:
  using Error::Error;
};

/// An op name with no functional form in the registry.
class OpNotFoundError : public Error {
 public:
  using Error::Error;
};

/// Replay inputs that do not match the graph (count, dtype, shape, device).
class InputError : public Error {
 public:
  using Error::Error;
};

/// An autograd graph that cannot be captured (Python-only nodes, hooks, ...).
class CaptureError : public Error {
 public:
  using Error::Error;
};

/// A failure inside an op while replaying a node; the message names the node index, the op and
/// its inputs.
class ExecutionError : public Error {
 public:
  using Error::Error;
};

}  // namespace ca
