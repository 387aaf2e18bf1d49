// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// ca::CompactString: an immutable-by-assignment string in 16 bytes instead of std::string's 32,
/// holding up to 15 characters inline (every op name but the longest). The IR's per-node names
/// (op, overload, string args) use it so that a million-node graph stays small in memory.

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace ca {

/// Owns a string of up to 2^32 - 1 bytes (may contain NULs; always NUL-terminated). Reads like
/// a const std::string (size, empty, c_str, comparisons, `+`) and converts to std::string and
/// std::string_view implicitly; assign a std::string, a string_view or a C string to change it.
/// Construction from std::string is explicit so that `cond ? name : std_string` stays a
/// std::string. Throws std::length_error past 2^32 - 1 bytes.
class CompactString {
 public:
  CompactString() noexcept { set_inline_size(0); }
  CompactString(const char* s) { assign(std::string_view(s)); }  // NOLINT: implicit, literals
  explicit CompactString(std::string_view s) { assign(s); }
  explicit CompactString(const std::string& s) { assign(std::string_view(s)); }
  CompactString(const CompactString& o) { assign(o.view()); }
  CompactString(CompactString&& o) noexcept;
  ~CompactString() { release(); }

  CompactString& operator=(const CompactString& o);
  CompactString& operator=(CompactString&& o) noexcept;
  CompactString& operator=(std::string_view s);
  CompactString& operator=(const std::string& s) { return *this = std::string_view(s); }
  CompactString& operator=(const char* s) { return *this = std::string_view(s); }

  const char* data() const noexcept { return is_heap() ? heap_ptr() : bytes_; }
  const char* c_str() const noexcept { return data(); }
  size_t size() const noexcept;
  size_t length() const noexcept { return size(); }
  bool empty() const noexcept { return size() == 0; }
  void clear() noexcept;

  std::string_view view() const noexcept { return {data(), size()}; }
  std::string str() const { return std::string(view()); }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: implicit
  operator std::string() const { return str(); }                 // NOLINT: implicit

  friend bool operator==(const CompactString& a, const CompactString& b) {
    return a.view() == b.view();
  }
  friend bool operator!=(const CompactString& a, const CompactString& b) { return !(a == b); }
  friend bool operator<(const CompactString& a, const CompactString& b) {
    return a.view() < b.view();
  }
  friend bool operator==(const CompactString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(std::string_view a, const CompactString& b) { return a == b.view(); }
  friend bool operator!=(const CompactString& a, std::string_view b) { return a.view() != b; }
  friend bool operator!=(std::string_view a, const CompactString& b) { return a != b.view(); }
  friend bool operator==(const CompactString& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const std::string& a, const CompactString& b) { return a == b.view(); }
  friend bool operator!=(const CompactString& a, const std::string& b) { return a.view() != b; }
  friend bool operator!=(const std::string& a, const CompactString& b) { return a != b.view(); }
  friend bool operator==(const CompactString& a, const char* b) { return a.view() == b; }
  friend bool operator==(const char* a, const CompactString& b) { return a == b.view(); }
  friend bool operator!=(const CompactString& a, const char* b) { return a.view() != b; }
  friend bool operator!=(const char* a, const CompactString& b) { return a != b.view(); }

  friend std::string operator+(const CompactString& a, std::string_view b) {
    return a.str().append(b);
  }
  friend std::string operator+(const CompactString& a, const char* b) { return a.str().append(b); }
  friend std::string operator+(const CompactString& a, const std::string& b) {
    return a.str().append(b);
  }
  friend std::string operator+(const std::string& a, const CompactString& b) {
    return std::string(a).append(b.view());
  }
  friend std::string operator+(std::string&& a, const CompactString& b) {
    return std::move(a.append(b.view()));
  }
  friend std::string operator+(const char* a, const CompactString& b) {
    return std::string(a).append(b.view());
  }
  friend std::ostream& operator<<(std::ostream& os, const CompactString& s) {
    return os << s.view();
  }

 private:
  /// Inline: bytes_[15] = 15 - size, so a 15-byte string's terminator is that byte.
  /// Heap: bytes_[0..8) = the pointer, bytes_[8..12) = the size, bytes_[15] = kHeapTag.
  static constexpr size_t kInlineMax = 15;
  static constexpr unsigned char kHeapTag = 0xff;

  bool is_heap() const noexcept { return static_cast<unsigned char>(bytes_[15]) == kHeapTag; }
  const char* heap_ptr() const noexcept;
  void set_inline_size(size_t n) noexcept {
    bytes_[n] = '\0';
    bytes_[15] = static_cast<char>(kInlineMax - n);
  }
  void assign(std::string_view s);
  void release() noexcept;

  alignas(8) char bytes_[16];
};

}  // namespace ca
