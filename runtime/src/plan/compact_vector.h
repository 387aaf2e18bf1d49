// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// ca::CompactVector: the std::vector subset the plan uses, in 16 bytes instead of 24, with room
// for a few small elements inline. A plan holds millions of short lists (a step's two input
// ids); with std::vector each costs 24 bytes plus a 32-byte heap block. Internal to the runtime.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace ca {

/// A vector of `T` that owns its elements, sized by a uint32_t. With `N > 0` (only for
/// trivially copyable `T` with `N * sizeof(T) <= 8`) up to N elements live inside the object
/// and need no heap block. `T` may be incomplete where the vector is declared (as with
/// std::vector). Converts to std::vector<T>; iterators are plain pointers, invalidated by any
/// growth. Throws std::length_error past 2^32 - 1 elements and std::out_of_range from at().
template <typename T, size_t N = 0>
class CompactVector {
 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  CompactVector() noexcept = default;
  CompactVector(std::initializer_list<T> init) { append(init.begin(), init.end()); }
  explicit CompactVector(size_t n, const T& value = T()) { resize(n, value); }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  CompactVector(It first, It last) {
    append(first, last);
  }
  CompactVector(const std::vector<T>& v) { append(v.begin(), v.end()); }  // NOLINT: implicit
  CompactVector(std::vector<T>&& v) {                                     // NOLINT: implicit
    append(std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  }
  CompactVector(const CompactVector& o) { append(o.begin(), o.end()); }
  CompactVector(CompactVector&& o) noexcept { steal(o); }
  ~CompactVector() { release(); }

  CompactVector& operator=(const CompactVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  CompactVector& operator=(CompactVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  CompactVector& operator=(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
    return *this;
  }

  /// A std::vector copy, for code written against std::vector.
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT

  template <typename It>
  void assign(It first, It last) {
    clear();
    append(first, last);
  }

  T* data() noexcept { return is_inline() ? inline_data() : heap_; }
  const T* data() const noexcept { return is_inline() ? inline_data() : heap_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return is_inline() ? N : capacity_; }

  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }
  const T* cbegin() const noexcept { return begin(); }
  const T* cend() const noexcept { return end(); }

  T& operator[](size_t i) noexcept { return data()[i]; }
  const T& operator[](size_t i) const noexcept { return data()[i]; }
  T& at(size_t i) { return i < size_ ? data()[i] : throw std::out_of_range("CompactVector::at"); }
  const T& at(size_t i) const {
    return i < size_ ? data()[i] : throw std::out_of_range("CompactVector::at");
  }
  T& front() noexcept { return data()[0]; }
  const T& front() const noexcept { return data()[0]; }
  T& back() noexcept { return data()[size_ - 1]; }
  const T& back() const noexcept { return data()[size_ - 1]; }

  /// Grows the storage to exactly `n` elements when it holds fewer.
  void reserve(size_t n) {
    if (n > capacity()) reallocate(n);
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <typename... A>
  T& emplace_back(A&&... a) {
    if (size_ == capacity()) {
      T tmp(std::forward<A>(a)...);  // `a` may refer into this vector
      reallocate(std::max<size_t>(4, 2 * capacity()));
      return *new (data() + size_++) T(std::move(tmp));
    }
    return *new (data() + size_++) T(std::forward<A>(a)...);
  }
  void pop_back() noexcept { data()[--size_].~T(); }
  void clear() noexcept {
    std::destroy(begin(), end());
    size_ = 0;
  }
  void resize(size_t n) {
    resize_with(n, [](T* p) { new (p) T(); });
  }
  void resize(size_t n, const T& v) {
    resize_with(n, [&v](T* p) { new (p) T(v); });
  }

  friend bool operator==(const CompactVector& a, const CompactVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const CompactVector& a, const CompactVector& b) { return !(a == b); }
  friend bool operator==(const CompactVector& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const std::vector<T>& a, const CompactVector& b) { return b == a; }
  friend bool operator!=(const CompactVector& a, const std::vector<T>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<T>& a, const CompactVector& b) { return !(b == a); }

 private:
  // Inline while capacity_ == 0 and N > 0; otherwise heap_ holds capacity_ elements.
  bool is_inline() const noexcept { return N > 0 && capacity_ == 0; }
  T* inline_data() noexcept { return reinterpret_cast<T*>(inline_); }
  const T* inline_data() const noexcept { return reinterpret_cast<const T*>(inline_); }

  template <typename It>
  void append(It first, It last) {
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>) {
      reserve(size_ + static_cast<size_t>(std::distance(first, last)));
    }
    for (; first != last; ++first) emplace_back(*first);
  }

  template <typename Init>
  void resize_with(size_t n, Init init) {
    if (n < size_) {
      std::destroy(begin() + n, end());
      size_ = static_cast<uint32_t>(n);
      return;
    }
    reserve(n);
    while (size_ < n) init(data() + size_++);
  }

  void reallocate(size_t n) {
    static_assert(N == 0 || (std::is_trivially_copyable_v<T> && N * sizeof(T) <= sizeof(T*)),
                  "inline elements must be trivially copyable and fit in a pointer");
    if (n > UINT32_MAX) throw std::length_error("CompactVector: more than 2^32 - 1 elements");
    T* fresh = std::allocator<T>().allocate(n);
    std::uninitialized_move(begin(), end(), fresh);
    const uint32_t size = size_;
    release();
    heap_ = fresh;
    capacity_ = static_cast<uint32_t>(n);
    size_ = size;
  }

  void release() noexcept {
    clear();
    if (!is_inline() && heap_ != nullptr) std::allocator<T>().deallocate(heap_, capacity_);
    heap_ = nullptr;
    capacity_ = 0;
  }

  void steal(CompactVector& o) noexcept {
    if (o.is_inline()) {
      std::memcpy(inline_, o.inline_, sizeof inline_);
    } else {
      heap_ = o.heap_;
    }
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.heap_ = nullptr;
    o.size_ = 0;
    o.capacity_ = 0;
  }

  union {                // private storage: clang-tidy reads an anonymous union's members as public
    T* heap_ = nullptr;  // NOLINT(readability-identifier-naming)
    alignas(T*) unsigned char inline_[sizeof(T*)];  // NOLINT(readability-identifier-naming)
  };
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace ca
