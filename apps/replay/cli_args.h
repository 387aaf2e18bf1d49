#pragma once
// Command-line parsing for `replay`: every flag it knows, with its help text.

#include <optional>
#include <string>
#include <vector>

namespace ca::cli {

/// What the user asked for.
struct Options {
  std::string graph;                    // --graph FILE
  std::string inputs;                   // --inputs FILE
  std::string out;                      // --out FILE
  std::string check;                    // --check FILE
  std::string verify;                   // --verify FILE
  std::string dump;                     // --dump FILE
  double rtol = 1e-6;                   // --rtol R
  double atol = 1e-7;                   // --atol A
  int bench = 0;                        // --bench N
  bool profile = false;                 // --profile
  bool json = false;                    // --json
  bool list_ops = false;                // --list-ops
  bool allow_version_mismatch = false;  // --allow-version-mismatch
  bool help = false;                    // --help
};

/// Parses argv; throws ca::Error with a message naming the bad flag or value.
Options parse_args(int argc, char** argv);

/// The text `replay --help` prints.
std::string usage();

}  // namespace ca::cli
