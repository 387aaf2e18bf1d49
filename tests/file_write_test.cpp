// SPDX-License-Identifier: BSD-3-Clause
// Files the project writes (save_graph, save_tensors, so replay --out too) go through a unique
// temporary file in the target's folder, fsync and rename: an existing file or symlink is never
// reused or followed, and a failure leaves neither a temporary nor a changed target behind.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "ca/tensor_io.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {
namespace fs = std::filesystem;

/// A fresh, empty folder for one test, removed with everything in it afterwards.
class FileWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = test::temp_path("write_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  /// The names in the folder.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename());
    return names;
  }

  std::string dir_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// Both writers, so every test covers graphs and tensor files.
void save_both(const std::string& graph_path, const std::string& tensors_path) {
  save_graph(test::sample_graph(), graph_path);
  save_tensors({at::arange(6).reshape({2, 3})}, tensors_path);
}

TEST_F(FileWriteTest, OnlyTheTargetsAreLeft) {
  save_both(path("g.fb"), path("t.pt"));
  EXPECT_EQ(entries(), (std::set<std::string>{"g.fb", "t.pt"}));
  EXPECT_EQ(load_graph(path("g.fb")), test::sample_graph());
  EXPECT_TRUE(load_tensors(path("t.pt"))[0].equal(at::arange(6).reshape({2, 3})));
}

TEST_F(FileWriteTest, ExistingTmpFileIsLeftUntouched) {
  write_text(path("g.fb.tmp"), "keep me");
  write_text(path("t.pt.tmp"), "keep me too");
  save_both(path("g.fb"), path("t.pt"));
  EXPECT_EQ(read_text(path("g.fb.tmp")), "keep me");
  EXPECT_EQ(read_text(path("t.pt.tmp")), "keep me too");
  EXPECT_EQ(load_graph(path("g.fb")), test::sample_graph());
}

TEST_F(FileWriteTest, SymlinkNamedLikeTheOldTempIsNotFollowed) {
  write_text(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("g.fb.tmp"));
  fs::create_symlink(path("victim"), path("t.pt.tmp"));
  save_both(path("g.fb"), path("t.pt"));
  EXPECT_EQ(read_text(path("victim")), "precious");
  EXPECT_TRUE(fs::is_symlink(path("g.fb.tmp")));
  EXPECT_TRUE(fs::is_symlink(path("t.pt.tmp")));
  EXPECT_EQ(load_graph(path("g.fb")), test::sample_graph());
}

TEST_F(FileWriteTest, SymlinkTargetIsReplacedNotWrittenThrough) {
  write_text(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("g.fb"));
  save_graph(test::sample_graph(), path("g.fb"));
  EXPECT_EQ(read_text(path("victim")), "precious");
  EXPECT_FALSE(fs::is_symlink(path("g.fb")));
  EXPECT_EQ(load_graph(path("g.fb")), test::sample_graph());
}

TEST_F(FileWriteTest, MissingFolderIsAClearErrorAndLeavesNothing) {
  const std::string target = path("missing/g.fb");
  const std::string msg =
      test::error_of<Error>([&] { save_graph(test::tiny_graph(), target); }, "saving");
  EXPECT_TRUE(test::contains(msg, target + ": cannot create a temporary file in its folder"));
  EXPECT_TRUE(test::contains(msg, "No such file or directory"));
  EXPECT_TRUE(entries().empty());
}

TEST_F(FileWriteTest, FailedRenameRemovesTheTemporary) {
  fs::create_directory(path("g.fb"));  // rename() cannot replace a folder with a file
  write_text(path("g.fb/inside"), "x");
  const std::string msg = test::error_of<Error>(
      [&] { save_graph(test::tiny_graph(), path("g.fb")); }, "saving over a folder");
  EXPECT_TRUE(test::contains(msg, path("g.fb") + ": cannot rename"));
  EXPECT_EQ(entries(), (std::set<std::string>{"g.fb"}));
  EXPECT_EQ(read_text(path("g.fb/inside")), "x");
}

TEST_F(FileWriteTest, ModeFollowsTheUmaskLikeAPlainFile) {
  write_text(path("plain"), "x");
  save_graph(test::tiny_graph(), path("g.fb"));
  struct stat plain {
  }, saved{};
  ASSERT_EQ(::stat(path("plain").c_str(), &plain), 0);
  ASSERT_EQ(::stat(path("g.fb").c_str(), &saved), 0);
  EXPECT_EQ(saved.st_mode & 0777, plain.st_mode & 0777);
}

TEST_F(FileWriteTest, RelativePathInTheWorkingFolder) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  save_graph(test::tiny_graph(), "g.fb");
  fs::current_path(cwd);
  EXPECT_EQ(entries(), (std::set<std::string>{"g.fb"}));
  EXPECT_EQ(load_graph(path("g.fb")), test::tiny_graph());
}

}  // namespace
}  // namespace ca
