// SPDX-License-Identifier: BSD-3-Clause
#include "ca/compact_string.h"

#include <cstring>
#include <memory>
#include <stdexcept>

namespace ca {

CompactString::CompactString(CompactString&& o) noexcept {
  std::memcpy(bytes_, o.bytes_, sizeof bytes_);
  o.set_inline_size(0);
}

CompactString& CompactString::operator=(const CompactString& o) {
  if (this != &o) *this = o.view();
  return *this;
}

CompactString& CompactString::operator=(CompactString&& o) noexcept {
  if (this != &o) {
    release();
    std::memcpy(bytes_, o.bytes_, sizeof bytes_);
    o.set_inline_size(0);
  }
  return *this;
}

CompactString& CompactString::operator=(std::string_view s) {
  // `s` may view this string's own bytes: build the new value before releasing the old.
  CompactString fresh(s);
  return *this = std::move(fresh);
}

size_t CompactString::size() const noexcept {
  if (!is_heap()) return kInlineMax - static_cast<unsigned char>(bytes_[15]);
  uint32_t n;
  std::memcpy(&n, bytes_ + 8, sizeof n);
  return n;
}

void CompactString::clear() noexcept {
  release();
  set_inline_size(0);
}

const char* CompactString::heap_ptr() const noexcept {
  const char* p;
  std::memcpy(&p, bytes_, sizeof p);
  return p;
}

void CompactString::assign(std::string_view s) {
  if (s.size() <= kInlineMax) {
    if (!s.empty()) std::memcpy(bytes_, s.data(), s.size());  // an empty view's data() may be null
    set_inline_size(s.size());
    return;
  }
  if (s.size() > UINT32_MAX) throw std::length_error("CompactString: more than 2^32 - 1 bytes");
  char* p = std::allocator<char>().allocate(s.size() + 1);
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  const auto n = static_cast<uint32_t>(s.size());
  std::memcpy(bytes_, &p, sizeof p);
  std::memcpy(bytes_ + 8, &n, sizeof n);
  bytes_[15] = static_cast<char>(kHeapTag);
}

void CompactString::release() noexcept {
  if (is_heap()) std::allocator<char>().deallocate(const_cast<char*>(heap_ptr()), size() + 1);
  set_inline_size(0);
}

}  // namespace ca
