// The trace vocabulary, read from the Rust core's one table
// (src/vocabulary.rs, through the cxx bridge): args keys and their value
// types, kinds, copy names, lane names. Header-only, so kineto's ROCm
// drop-in (cpp/dropin) and the child profiler's converter share it.
#pragma once

#include "kineto-rocm/src/bridge.rs.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kineto_rocm::vocab {

inline constexpr size_t kKeyCount = static_cast<size_t>(MetadataKey::ThreadTrace) + 1;

// Keys as std::string, built once (kineto's addMetadata takes std::string).
inline const std::array<std::string, kKeyCount>& keyNames() {
  static const std::array<std::string, kKeyCount> names = [] {
    std::array<std::string, kKeyCount> out;
    for (size_t i = 0; i < kKeyCount; ++i) {
      out[i] = std::string(metadata_key_name(static_cast<MetadataKey>(i)));
    }
    return out;
  }();
  return names;
}

inline const std::string& key(MetadataKey k) {
  return keyNames()[static_cast<size_t>(k)];
}

// The key's spelling as a view that lives for the process (the bytes are a
// Rust &'static str): what kineto's MetadataField<T>{name} needs.
inline std::string_view keyView(MetadataKey k) {
  rust::Str name = metadata_key_name(k);
  return std::string_view(name.data(), name.size());
}

// Throws std::logic_error when a writer would put a value of another type
// than the catalog's under `k`: the two writers must agree on types too.
inline void expectType(MetadataKey k, ValueType t) {
  static const std::array<ValueType, kKeyCount> types = [] {
    std::array<ValueType, kKeyCount> out{};
    for (size_t i = 0; i < kKeyCount; ++i) {
      out[i] = metadata_key_type(static_cast<MetadataKey>(i));
    }
    return out;
  }();
  if (types[static_cast<size_t>(k)] != t) {
    throw std::logic_error("kineto-rocm: value of the wrong type for key '" + key(k) + "'");
  }
}

inline std::string str(rust::Str s) {
  return std::string(s.data(), s.size());
}

// A float that JSON readers see as a float: always with a fraction or an
// exponent (fmt writes 4096.0 as "4096").
inline std::string floatText(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) {
    s += ".0";
  }
  return s;
}

// What one correlation id launched in a window: flow arrows, and the
// kernel-launch args of a runtime call that launched exactly one kernel.
// Work whose launching call is unknown (has_correlation false) is left out.
struct Launch {
  uint32_t kernels = 0;
  uint32_t copies = 0;
  size_t firstKernel = 0;

  bool isKernelLaunch() const {
    return kernels == 1 && copies == 0;
  }
};

inline std::unordered_map<uint64_t, Launch> launchesOf(const WindowActivities& w) {
  std::unordered_map<uint64_t, Launch> out;
  for (size_t i = 0; i < w.kernels.size(); ++i) {
    const auto& k = w.kernels[i];
    if (!k.has_correlation) {
      continue;
    }
    Launch& l = out[k.correlation];
    // A blit shown as a memset or copy is not a kernel launch.
    if (k.blit != BlitKind::None) {
      ++l.copies;
      continue;
    }
    if (l.kernels++ == 0) {
      l.firstKernel = i;
    }
  }
  for (const auto& c : w.copies) {
    if (c.has_correlation) {
      ++out[c.correlation].copies;
    }
  }
  return out;
}

} // namespace kineto_rocm::vocab
