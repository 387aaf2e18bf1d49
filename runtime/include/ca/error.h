#pragma once
/// @file
/// The project's exception types and its internal-invariant check.

#include <stdexcept>
#include <string>

namespace ca {

/// Base of every user-facing error ca-replay throws: bad files, unknown ops, wrong inputs,
/// unsupported graphs. The message names the place (node, input, field), the value and the
/// expectation.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A graph file or buffer that is malformed, truncated, corrupt or semantically invalid.
class FormatError : public Error {
 public:
  using Error::Error;
};

/// A graph written by another format version or captured with another torch version.
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

/// A failure while replaying a node; the message names the node index and op.
class ExecutionError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void check_failed(const char* file, int line, const char* cond,
                               const std::string& msg);
}  // namespace detail

}  // namespace ca

/// Aborts with a message when an internal invariant is broken. Never used for user input.
#define CA_CHECK(cond, msg)                                                    \
  do {                                                                         \
    if (!(cond)) ::ca::detail::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
