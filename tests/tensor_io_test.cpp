// SPDX-License-Identifier: BSD-3-Clause
// .pt tensor lists: C++ <-> Python torch.save/torch.load interop, and clear errors.
#include "ca/tensor_io.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "ca/error.h"
#include "test_util.h"

#ifndef CA_TEST_PYTHON
#define CA_TEST_PYTHON "/opt/ca-replay/venv/bin/python"
#endif

namespace ca {
namespace {

/// The same tensors as `tensors()` in kScript: float32, float64, int64, bool, 0-dim,
/// non-contiguous and empty.
std::vector<at::Tensor> expected_tensors() {
  const int64_t big = int64_t{1} << 62;
  return {
      at::arange(6, at::kFloat).reshape({2, 3}) / 3,
      at::linspace(-1, 1, 5, at::kDouble),
      at::tensor(std::vector<int64_t>{-big, 0, big + 1}, at::kLong),
      at::tensor(std::vector<int64_t>{1, 0, 1}).to(at::kBool),
      at::scalar_tensor(3.5, at::kFloat),
      at::arange(12, at::kFloat).reshape({3, 4}).t(),
      at::zeros({0, 3}),
  };
}

const char* const kScript = R"(import sys, torch
mode, path = sys.argv[1], sys.argv[2]
def tensors():
    return [
        torch.arange(6, dtype=torch.float32).reshape(2, 3) / 3,
        torch.linspace(-1, 1, 5, dtype=torch.float64),
        torch.tensor([-(2**62), 0, 2**62 + 1], dtype=torch.int64),
        torch.tensor([True, False, True]),
        torch.tensor(3.5),
        torch.arange(12, dtype=torch.float32).reshape(3, 4).t(),
        torch.zeros(0, 3),
    ]
if mode == "save":
    torch.save(tensors(), path)
elif mode == "save_one":  # pickled with APPEND, not APPENDS
    torch.save(tensors()[:1], path)
elif mode == "save_tuple":
    torch.save(tuple(tensors()), path)
elif mode == "save_dict":
    torch.save({"a": torch.ones(2)}, path)
elif mode == "save_mixed":
    torch.save([torch.ones(2), 3], path)
elif mode == "check":
    got, want = torch.load(path), tensors()
    if not isinstance(got, list) or len(got) != len(want):
        sys.exit("got %r" % type(got))
    for i, (g, w) in enumerate(zip(got, want)):
        if g.dtype != w.dtype or g.shape != w.shape or not torch.equal(g, w):
            sys.exit("tensor %d differs: %r vs %r" % (i, g, w))
)";

class TensorIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env = std::getenv("CA_TEST_PYTHON");
    python_ = env ? env : CA_TEST_PYTHON;
    if (std::system(("\"" + python_ + "\" -c 'import torch' >/dev/null 2>&1").c_str()) != 0) {
      GTEST_SKIP() << "no Python with torch at " << python_
                   << " (set CA_TEST_PYTHON, cmake -DCA_TEST_PYTHON=...)";
    }
    script_ = test::temp_path("tensor_io.py");
    std::ofstream(script_) << kScript;
  }
  void TearDown() override {
    for (const std::string& p : cleanup_) std::remove(p.c_str());
    if (!script_.empty()) std::remove(script_.c_str());
  }
  /// Runs kScript in `mode` on `path`; returns its exit status.
  int python(const std::string& mode, const std::string& path) {
    cleanup_.push_back(path);
    return std::system(("\"" + python_ + "\" " + script_ + " " + mode + " " + path).c_str());
  }
  std::string python_, script_;
  std::vector<std::string> cleanup_;
};

void expect_same(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].scalar_type(), want[i].scalar_type()) << i;
    EXPECT_EQ(got[i].sizes(), want[i].sizes()) << i;
    EXPECT_TRUE(at::equal(got[i], want[i])) << i << ": " << got[i] << " vs " << want[i];
  }
}

std::string load_error(const std::string& path) {
  return test::error_of<Error>([&] { load_tensors(path); }, "loading " + path);
}

TEST_F(TensorIo, PythonSaveLoadsInCpp) {
  const std::string path = test::temp_path("from_python.pt");
  ASSERT_EQ(python("save", path), 0);
  const std::vector<at::Tensor> got = load_tensors(path);
  expect_same(got, expected_tensors());
  EXPECT_EQ(got[4].dim(), 0);
  EXPECT_EQ(got[5].strides(), expected_tensors()[5].strides());  // views keep their strides
}

TEST_F(TensorIo, PythonOneTensorListLoadsInCpp) {
  const std::string path = test::temp_path("one.pt");
  ASSERT_EQ(python("save_one", path), 0);
  expect_same(load_tensors(path), {expected_tensors()[0]});
}

TEST_F(TensorIo, PythonTupleLoadsInCpp) {
  const std::string path = test::temp_path("tuple.pt");
  ASSERT_EQ(python("save_tuple", path), 0);
  expect_same(load_tensors(path), expected_tensors());
}

TEST_F(TensorIo, CppSaveLoadsInPython) {
  const std::string path = test::temp_path("from_cpp.pt");
  save_tensors(expected_tensors(), path);
  EXPECT_EQ(python("check", path), 0);
}

TEST_F(TensorIo, DictIsRefusedSayingWhatItHolds) {
  const std::string path = test::temp_path("dict.pt");
  ASSERT_EQ(python("save_dict", path), 0);
  const std::string msg = load_error(path);
  EXPECT_TRUE(test::contains(msg, path + ": holds a dict"));
  EXPECT_TRUE(test::contains(msg, "expected a list or tuple of tensors"));
}

TEST_F(TensorIo, MixedListIsRefusedNamingTheItem) {
  const std::string path = test::temp_path("mixed.pt");
  ASSERT_EQ(python("save_mixed", path), 0);
  EXPECT_TRUE(test::contains(load_error(path), "holds a list whose item 1 is an int"));
}

TEST(TensorIoCpp, BytesRoundTrip) {
  const std::vector<uint8_t> bytes = tensors_to_bytes(expected_tensors());
  expect_same(tensors_from_bytes(bytes.data(), bytes.size()), expected_tensors());
  const std::vector<uint8_t> none = tensors_to_bytes({});
  EXPECT_TRUE(tensors_from_bytes(none.data(), none.size()).empty());
}

TEST(TensorIoCpp, FileRoundTrip) {
  const std::string path = test::temp_path("cpp_only.pt");
  save_tensors(expected_tensors(), path);
  expect_same(load_tensors(path), expected_tensors());
  std::remove(path.c_str());
}

TEST(TensorIoCpp, MissingFileNamesPath) {
  const std::string path = test::temp_path("missing.pt");
  EXPECT_TRUE(test::contains(load_error(path), path + ": no such file"));
}

TEST(TensorIoCpp, NonPtFilesAreRefused) {
  const std::string path = test::temp_path("text.pt");
  std::ofstream(path) << "hello, not a tensor file\n";
  EXPECT_TRUE(test::contains(load_error(path), "not a torch.save .pt archive"));
  std::ofstream(path, std::ios::trunc).close();
  EXPECT_TRUE(test::contains(load_error(path), "empty"));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << std::string("PK\x03\x04garbage", 11);
  EXPECT_TRUE(test::contains(load_error(path), "cannot read the .pt archive"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ca
