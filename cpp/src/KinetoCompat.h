// Version gates for the kineto headers we compile against.
//
// kineto's public structs changed shape after torch 2.11 (see
// docs/kineto-notes.md): DeviceInfo/ResourceInfo lost their constructors
// (aggregates, with ResourceInfo's members ordered {id, sortIndex, deviceId,
// name, ...} unlike the 2.11 constructor's (deviceId, id, sortIndex, name)),
// and typed metadata fields arrived in MetadataFieldCatalog.h. Everything
// that depends on those differences goes through this header, so a brace
// initialiser can never silently swap fields.
#pragma once

#include <IActivityProfiler.h>
#include <GenericTraceActivity.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#if __has_include(<MetadataFieldCatalog.h>)
#include <MetadataFieldCatalog.h>
#define KINETO_ROCM_HAVE_TYPED_METADATA 1
#else
#define KINETO_ROCM_HAVE_TYPED_METADATA 0
#endif

namespace kineto_rocm::compat {

// The metadata keys, spelled as kineto's catalog spells them
// (CudaMetadataFields::kGraphId / kGraphNodeId). PyTorch reads
// `"graph node id":\s*(\d+)`; the values must stay bare integers.
inline constexpr const char* kGraphIdKey = "graph id";
inline constexpr const char* kGraphNodeIdKey = "graph node id";

inline void addGraphFields(
    libkineto::GenericTraceActivity& act,
    uint64_t graphId,
    uint64_t graphNodeId) {
#if KINETO_ROCM_HAVE_TYPED_METADATA
  act.addMetadata(libkineto::CudaMetadataFields::kGraphId, graphId);
  act.addMetadata(libkineto::CudaMetadataFields::kGraphNodeId, graphNodeId);
#else
  // torch 2.11: string keys only; addMetadata formats with fmt "{}" and the
  // chrome trace writer emits the value unquoted.
  act.addMetadata(kGraphIdKey, graphId);
  act.addMetadata(kGraphNodeIdKey, graphNodeId);
#endif
}

template <typename T = libkineto::ResourceInfo>
T makeResourceInfo(
    int64_t deviceId,
    int64_t id,
    int64_t sortIndex,
    const std::string& name) {
  if constexpr (std::is_aggregate_v<T>) {
    // kineto after 2.11: {id, sortIndex, deviceId, name, ...}
    return T{id, sortIndex, deviceId, name};
  } else {
    // kineto 2.11: ResourceInfo(deviceId, id, sortIndex, name)
    return T(deviceId, id, sortIndex, name);
  }
}

template <typename T = libkineto::DeviceInfo>
std::unique_ptr<T> makeDeviceInfo(
    int64_t id,
    int64_t sortIndex,
    const std::string& name,
    const std::string& label) {
  if constexpr (std::is_aggregate_v<T>) {
    return std::unique_ptr<T>(new T{id, sortIndex, name, label});
  } else {
    return std::make_unique<T>(id, sortIndex, name, label);
  }
}

} // namespace kineto_rocm::compat
