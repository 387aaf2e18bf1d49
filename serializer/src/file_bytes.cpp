// SPDX-License-Identifier: BSD-3-Clause
#include "file_bytes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <system_error>

#include "ca/error.h"

namespace ca::detail {
namespace fs = std::filesystem;

std::vector<uint8_t> read_file_bytes(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw Error(path + ": no such file");
  if (!fs::is_regular_file(st)) throw Error(path + ": not a regular file");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read size: " + ec.message());
  if (size > max_bytes) {
    throw Error(path + ": file is " + std::to_string(size) + " bytes, more than the limit of " +
                std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<uintmax_t>(in.gcount()) != size) {
    throw Error(path + ": read " + std::to_string(in.gcount()) + " of " + std::to_string(size) +
                " bytes");
  }
  return bytes;
}

namespace {

/// A new, uniquely named file in the target's folder that removes itself unless committed.
/// O_EXCL|O_NOFOLLOW: an existing file or symlink of the same name is never opened or followed.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    const fs::path t(target);
    const std::string dir = t.has_parent_path() ? t.parent_path().string() + "/" : "";
    std::random_device entropy;
    for (int attempt = 0; attempt < kAttempts && fd_ < 0; ++attempt) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".tmp.%d.%08x", static_cast<int>(::getpid()),
                    static_cast<unsigned>(entropy()));
      path_ = dir + "." + t.filename().string() + suffix;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) fail("cannot create a temporary file in its folder");
    }
    if (fd_ < 0) fail("cannot find a free temporary file name");
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }

  void write_all(const uint8_t* data, size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("write failed");
      data += n;
      size -= static_cast<size_t>(n);
    }
  }

  /// fsync, close, rename over the target, fsync the folder so that the rename is durable.
  void commit() {
    if (::fsync(fd_) != 0) fail("fsync failed");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close failed");
    if (std::rename(path_.c_str(), target_.c_str()) != 0) fail("cannot rename its temporary file");
    committed_ = true;
    const fs::path parent = fs::path(target_).parent_path();
    const int dir =
        ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) fail("cannot open its folder to sync it");
    const int synced = ::fsync(dir);
    ::close(dir);
    if (synced != 0) fail("fsync of its folder failed");
  }

 private:
  static constexpr int kAttempts = 100;

  /// Throws for the last failed call; `errno` is read before anything else can change it.
  [[noreturn]] void fail(const char* what) const {
    const std::string why = std::strerror(errno);
    throw Error(target_ + ": " + what + ": " + why);
  }

  std::string target_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void write_file_bytes(const std::string& path, const uint8_t* data, size_t size) {
  TempFile tmp(path);
  tmp.write_all(data, size);
  tmp.commit();
}

}  // namespace ca::detail
