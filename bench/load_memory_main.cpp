// SPDX-License-Identifier: BSD-3-Clause
// load_memory FILE: loads a graph file with a counting operator new and reports the file size,
// the heap peak during the load (file buffer included, as `replay --verify` pays it), the heap
// the loaded ca::Graph keeps, their ratios to the file size, and the load time.
#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "ca/graph_io.h"
#include "heap_counter.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Measure {
  size_t peak = 0;  ///< heap peak above the baseline during the load
  size_t kept = 0;  ///< heap the returned graph holds
  double seconds = 0;
  size_t nodes = 0;
};

Measure measure(const std::string& path) {
  ca::bench::start_counting();
  const auto start = Clock::now();
  Measure m;
  {
    const ca::Graph g = ca::load_graph(path);
    m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const ca::bench::HeapCounts heap = ca::bench::stop_counting();
    m.peak = static_cast<size_t>(heap.peak);
    m.kept = static_cast<size_t>(heap.live);
    m.nodes = g.nodes.size();
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: load_memory FILE\n", stderr);
    return 2;
  }
  try {
    const std::string path = argv[1];
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw std::runtime_error(path + ": cannot open");
    std::fseek(f, 0, SEEK_END);
    const double file = static_cast<double>(std::ftell(f));
    std::fclose(f);
    measure(path);  // warm up: lazily initialized statics are not the loader's cost
    const Measure m = measure(path);
    const double n = static_cast<double>(m.nodes);
    std::printf(
        "file %s: %.0f bytes, %zu nodes, %.1f file bytes/node\n"
        "load peak %.0f bytes (%.1f/node), %.2fx the file\n"
        "graph kept %.0f bytes (%.1f/node), %.2fx the file\n"
        "load time %.3f s (sizeof Node %zu, Arg %zu, ArgType %zu)\n",
        path.c_str(), file, m.nodes, file / n, double(m.peak), double(m.peak) / n,
        double(m.peak) / file, double(m.kept), double(m.kept) / n, double(m.kept) / file, m.seconds,
        sizeof(ca::Node), sizeof(ca::Arg), sizeof(ca::ArgType));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "load_memory: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
