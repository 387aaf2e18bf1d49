// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Small helpers shared by the C++ tests.

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace ca::test {

/// Passes when `text` contains `part`; the failure message shows both.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

/// Runs `f` and returns the message of the E it throws; fails the test (naming `what`) when it
/// throws nothing.
template <class E>
std::string error_of(const std::function<void()>& f, const std::string& what = "call") {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << what << " succeeded, expected an error";
  return "";
}

/// A path in gtest's temp folder, unique to this process and `name`.
inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ca_test_" + std::to_string(::getpid()) + "_" + name;
}

}  // namespace ca::test
