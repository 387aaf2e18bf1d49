// SPDX-License-Identifier: BSD-3-Clause
#include "cli_args.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "ca/error.h"
#include "ca/graph.h"
#include "ca/version.h"

namespace ca::cli {
namespace {

double parse_double(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || v < 0) {
    throw Error(flag + ": expected a non-negative number, got '" + text + "'");
  }
  return v;
}

int parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1 || v > 1000000) {
    throw Error(flag + ": expected a count in [1, 1000000], got '" + text + "'");
  }
  return static_cast<int>(v);
}

/// Largest --max-graph-mb: 64 GiB, far past any graph; keeps the byte count from overflowing.
constexpr long kMaxGraphMbFlag = long{1} << 16;

size_t parse_megabytes(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1 || v > kMaxGraphMbFlag) {
    throw Error(flag + ": expected a size in MiB in [1, " + std::to_string(kMaxGraphMbFlag) +
                "], got '" + text + "'");
  }
  return static_cast<size_t>(v);
}

int64_t parse_elements(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1 || v > (1LL << 62)) {
    throw Error(flag + ": expected an element count in [1, 2^62], got '" + text + "'");
  }
  return static_cast<int64_t>(v);
}

}  // namespace

LoadOptions load_options(const Options& o) {
  LoadOptions options;
  options.max_graph_bytes = o.max_graph_mb << 20;
  return options;
}

ExecutorOptions executor_options(const Options& o) {
  ExecutorOptions options;
  options.allow_version_mismatch = o.allow_version_mismatch;
  options.cuda_graph = o.cuda_graph;
  options.max_tensor_elements = o.max_tensor_elements;
  if (!o.device.empty()) {
    try {
      options.device = c10::Device(o.device);
    } catch (const c10::Error&) {
      throw Error("--device: expected cpu, cuda or cuda:N, got '" + o.device + "'");
    }
    // As the executor reads it: "cuda" is cuda:0.
    if (options.device->is_cuda() && !options.device->has_index()) options.device->set_index(0);
  }
  return options;
}

std::string usage() {
  return R"(replay: replay a captured PyTorch backward graph without Python.

Usage:
  replay --graph bwd.fb --inputs batch.pt [--out grads.pt] [--check expected.pt
         [--rtol R] [--atol A]] [--bench N] [--profile] [--trace trace.json] [--json]
  replay --verify bwd.fb       check a graph file; print a one-line summary or the error
  replay --dump bwd.fb         print the graph, one node per line
  replay --dot bwd.fb          print the graph as Graphviz (render: | dot -Tsvg > bwd.svg):
                               inputs as ellipses, nodes as boxes coloured by kind, values as
                               edges (dashed: read from packed args), elided nodes greyed
  replay --encode graph.json --out bwd.fb
                               write a graph file from FlatBuffers' JSON form of the schema
                               (FILE or - for stdin; what the Python exporter ca_export emits),
                               checked as a graph file is, then structurally validated
  replay --list-ops [--json]   print every resolved built-in op; with --json, every op's
                               packed-args schema as one JSON object on stdout (the table the
                               Python exporter ca_export types packed args with)

Options:
  --graph FILE        graph written by a ca-replay capture or exporter (FlatBuffers .fb)
  --inputs FILE       graph inputs, a torch.save'd list of tensors (.pt)
  --out FILE          write the gradients (graph outputs, then parameter grads) as a .pt list
  --check FILE        compare the gradients with a .pt list (e.g. eager autograd's); exit 1 on
                      any mismatch
  --rtol R, --atol A  tolerances for --check: |got - want| <= atol + rtol * |want|
                      (defaults 1e-6 and 1e-7)
  --bench N           after one warm-up, time N replays; print min/median/max and per-node cost
  --profile           print the time spent per op name, largest first
  --trace FILE        replay once more under torch's profiler and write its Chrome trace to
                      FILE (open in Perfetto or chrome://tracing): one event per replayed node,
                      named as eager's engine names it ("autograd::engine::evaluate_function:
                      MulBackward0"), with the ATen ops it ran inside
  --json              print the summary as JSON on stdout (human text goes to stderr)
  --max-graph-mb N    refuse graph files larger than N MiB (default )" +
         std::to_string(kMaxGraphBytes >> 20) + R"()
  --max-tensor-elements N
                      fail a replay whose steps would produce a tensor (a view counts in
                      full) of more than N elements (default 2^36): a crafted graph's sizes
                      could otherwise make one step run for hours
  --allow-version-mismatch
                      replay a graph captured with another torch version (at your own risk)
  --device D          replay on D (cpu, cuda, cuda:N): inputs are moved there at bind, CPU
                      scalars by upstream's rule; with --verify, print where each CPU scalar
                      goes and why (a plan only, when no CUDA device is visible)
  --cuda-graph        replay the whole backward as one CUDA graph (needs --device cuda[:N])
  --verbose           print the device placement after loading
  --help              this text
  --version           print ca-replay's version, the torch it was built with and the graph
                      format it reads and writes

Exit status: 0 on success, 1 on a --check mismatch, 2 on any error (message on stderr).
)";
}

std::string version_text() {
  return std::string("replay (ca-replay) ") + kVersion + "\ntorch " + runtime_torch_version() +
         " (built against)\ngraph format " + std::to_string(kFormatVersion) +
         " (reads and writes)\n";
}

Options parse_args(int argc, char** argv) {
  Options o;
  using Setter = std::function<void(const std::string&)>;
  const std::map<std::string, Setter> with_value = {
      {"--graph", [&](const std::string& v) { o.graph = v; }},
      {"--inputs", [&](const std::string& v) { o.inputs = v; }},
      {"--out", [&](const std::string& v) { o.out = v; }},
      {"--check", [&](const std::string& v) { o.check = v; }},
      {"--verify", [&](const std::string& v) { o.verify = v; }},
      {"--dump", [&](const std::string& v) { o.dump = v; }},
      {"--dot", [&](const std::string& v) { o.dot = v; }},
      {"--encode", [&](const std::string& v) { o.encode = v; }},
      {"--trace", [&](const std::string& v) { o.trace = v; }},
      {"--rtol", [&](const std::string& v) { o.rtol = parse_double("--rtol", v); }},
      {"--atol", [&](const std::string& v) { o.atol = parse_double("--atol", v); }},
      {"--bench", [&](const std::string& v) { o.bench = parse_count("--bench", v); }},
      {"--device", [&](const std::string& v) { o.device = v; }},
      {"--max-graph-mb",
       [&](const std::string& v) { o.max_graph_mb = parse_megabytes("--max-graph-mb", v); }},
      {"--max-tensor-elements",
       [&](const std::string& v) {
         o.max_tensor_elements = parse_elements("--max-tensor-elements", v);
       }},
  };
  const std::map<std::string, bool*> flags = {
      {"--profile", &o.profile},   {"--json", &o.json},
      {"--list-ops", &o.list_ops}, {"--allow-version-mismatch", &o.allow_version_mismatch},
      {"--help", &o.help},         {"-h", &o.help},
      {"--version", &o.version},   {"--cuda-graph", &o.cuda_graph},
      {"--verbose", &o.verbose},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (auto f = flags.find(arg); f != flags.end()) {
      *f->second = true;
    } else if (auto s = with_value.find(arg); s != with_value.end()) {
      if (i + 1 >= argc) throw Error(arg + ": missing value");
      s->second(argv[++i]);
    } else {
      throw Error("unknown argument '" + arg + "' (see replay --help)");
    }
  }
  return o;
}

}  // namespace ca::cli
