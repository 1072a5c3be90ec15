// The one way the C++ face calls anything that can fail: nothing escapes
// into kineto or PyTorch. A C++ exception (a rust::Error from the core
// included: a panic there arrives as an internal error) is written as one
// line, "kineto-rocm: <where> failed: <what>", and the call does nothing.
#pragma once

#include <atomic>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

namespace kineto_rocm {

// One write per line so concurrent writers do not interleave.
inline void logLine(const std::string& line) noexcept {
  try {
    std::string out = line + "\n";
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
  } catch (...) {
  }
}

// Runs `f`; returns false (after logging, unless `logged` was already set)
// when it threw.
template <typename F>
bool guardImpl(const char* where, std::atomic<bool>* logged, F&& f) noexcept {
  std::string what;
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    try {
      what = e.what();
    } catch (...) {
    }
  } catch (...) {
    what = "unknown exception";
  }
  if (logged == nullptr || !logged->exchange(true)) {
    try {
      logLine(std::string("kineto-rocm: ") + where + " failed: " + what);
    } catch (...) {
    }
  }
  return false;
}

template <typename F>
bool guard(const char* where, F&& f) noexcept {
  return guardImpl(where, nullptr, std::forward<F>(f));
}

// For calls made per CPU op: a failure would repeat each time, so only the
// first is logged.
template <typename F>
bool guardOnce(const char* where, std::atomic<bool>& logged, F&& f) noexcept {
  return guardImpl(where, &logged, std::forward<F>(f));
}

} // namespace kineto_rocm
