#include "file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
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

void write_file_bytes(const std::string& path, const uint8_t* data, size_t size) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot open for writing: " + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(path + ": write failed: " + std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename " + tmp + ": " + why);
  }
}

}  // namespace ca::detail
