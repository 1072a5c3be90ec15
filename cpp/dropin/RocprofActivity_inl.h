// kineto-rocm's drop-in for kineto's libkineto/src/RocprofActivity_inl.h:
// how kineto's GpuActivity and RuntimeActivity (declared, unmodified, in
// kineto's RocprofActivity.h) name a row and write its metadata.
//
// Every field goes through kineto's typed metadata: RocmMetadataFields where
// kineto's catalog has the key, CudaMetadataFields::kGraphId/kGraphNodeId
// for the graph fields (as kineto's CUPTI rows do), and kineto-rocm's one
// vocabulary (src/vocabulary.rs, through the bridge) for the keys kineto has
// no field for ("dispatch id", "scratch memory", "src device", "dst
// device"). A row of ours says what kineto-rocm knows through
// RocprofActivityApi::rowInfo(); rows kineto-rocm did not make (kineto's
// own test builds some) get kineto's base fields. Nothing here calls the HIP
// runtime: kernel names come with the rows.
#pragma once

#include "RocprofActivity.h"
#include "RocprofActivityApi.h"

#include <fmt/format.h>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "Demangle.h"
#include "TypedMetadataJson.h"
#include "Vocabulary.h"
#include "output_base.h"

namespace KINETO_NAMESPACE {

using namespace libkineto;

namespace kineto_rocm_metadata {

namespace kr = ::kineto_rocm;

// Keys kineto's catalog lacks, spelled by kineto-rocm's vocabulary.
inline MetadataField<uint64_t> dispatchId() {
  return {kr::vocab::keyView(kr::MetadataKey::DispatchId)};
}
inline MetadataField<uint64_t> scratchMemory() {
  return {kr::vocab::keyView(kr::MetadataKey::ScratchMemory)};
}
inline MetadataField<int64_t> srcDevice() {
  return {kr::vocab::keyView(kr::MetadataKey::SrcDevice)};
}
inline MetadataField<int64_t> dstDevice() {
  return {kr::vocab::keyView(kr::MetadataKey::DstDevice)};
}

inline std::vector<int64_t> dim3(const uint32_t (&v)[3]) {
  return {v[0], v[1], v[2]};
}

inline kr::CopyDirection directionOfOperation(uint32_t op) {
  switch (op) {
    case ROCPROFILER_MEMORY_COPY_HOST_TO_HOST:
      return kr::CopyDirection::HostToHost;
    case ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE:
      return kr::CopyDirection::HostToDevice;
    case ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST:
      return kr::CopyDirection::DeviceToHost;
    case ROCPROFILER_MEMORY_COPY_DEVICE_TO_DEVICE:
      return kr::CopyDirection::DeviceToDevice;
    default:
      return kr::CopyDirection::Unknown;
  }
}

inline kr::CopyDirection directionOf(const rocprofAsyncRow& row, const KinetoRocmRowInfo* info) {
  return info != nullptr ? static_cast<kr::CopyDirection>(info->copyDirection)
                         : directionOfOperation(row.op);
}

inline void visitGraph(ITypedMetadataVisitor& visitor, const KinetoRocmRowInfo& info) {
  if (info.hasGraph) {
    visitor.visit(CudaMetadataFields::kGraphId, info.graphId);
    visitor.visit(CudaMetadataFields::kGraphNodeId, info.graphNodeId);
  }
}

// HIP runtime calls kineto draws a launch flow from, for rows kineto-rocm
// did not make (ours know what each call launched).
inline bool launchesWork(uint32_t cid) {
  switch (cid) {
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipLaunchKernel:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipExtLaunchKernel:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipLaunchCooperativeKernel:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipHccModuleLaunchKernel:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipModuleLaunchKernel:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipExtModuleLaunchKernel:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipMalloc:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipFree:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipMemcpy:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipMemcpyAsync:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipMemcpyWithStream:
    case ROCPROFILER_HIP_RUNTIME_API_ID_hipGraphLaunch:
      return true;
    default:
      return false;
  }
}

} // namespace kineto_rocm_metadata

// GPU activities

inline const std::string GpuActivity::name() const {
  namespace m = kineto_rocm_metadata;
  const auto* info = RocprofActivityApi::rowInfo(&raw());
  if (type_ == ActivityType::GPU_MEMCPY) {
    return m::kr::vocab::str(m::kr::copy_event_name(m::directionOf(raw(), info)));
  }
  if (!raw().kernelName.empty()) {
    return demangle(raw().kernelName);
  }
  return demangle(RocprofLogger::opString(
      static_cast<rocprofiler_buffer_tracing_kind_t>(raw().domain), raw().op));
}

inline void GpuActivity::log(ActivityLogger& logger) const {
  logger.handleActivity(*this);
}

inline const std::string GpuActivity::metadataJson() const {
  libkineto::internal::JsonTypedMetadataVisitor visitor;
  visitTypedMetadata(visitor);
  return std::move(visitor).json();
}

inline void GpuActivity::visitTypedMetadata(ITypedMetadataVisitor& visitor) const {
  namespace m = kineto_rocm_metadata;
  const auto& row = raw();
  const auto* info = RocprofActivityApi::rowInfo(&row);
  visitor.visit(RocmMetadataFields::kDevice, static_cast<int64_t>(row.device));
  if (info == nullptr || info->hasStream) {
    visitor.visit(
        RocmMetadataFields::kStream,
        info != nullptr ? static_cast<int64_t>(info->stream) : resourceId());
  }
  visitor.visit(RocmMetadataFields::kHsaQueue, static_cast<uint64_t>(row.queue));
  if (info == nullptr || info->hasCorrelation) {
    visitor.visit(
        RocmMetadataFields::kCorrelation, info != nullptr ? info->correlation : row.id);
  }
  if (type_ == ActivityType::GPU_MEMCPY) {
    visitor.visit(
        RocmMetadataFields::kKind,
        m::kr::vocab::str(m::kr::copy_kind(m::directionOf(row, info))));
    if (info == nullptr) {
      return;
    }
    visitor.visit(RocmMetadataFields::kBytes, info->bytes);
    if (row.end > row.begin) {
      // bytes per ns == GB/s
      visitor.visit(
          RocmMetadataFields::kMemoryBandwidthGbps,
          static_cast<double>(info->bytes) / static_cast<double>(row.end - row.begin));
    }
    visitor.visit(m::srcDevice(), info->srcDevice);
    visitor.visit(m::dstDevice(), info->dstDevice);
    m::visitGraph(visitor, *info);
    return;
  }
  visitor.visit(RocmMetadataFields::kKind, m::kr::vocab::str(m::kr::kernel_kind()));
  if (info == nullptr) {
    return;
  }
  visitor.visit(m::dispatchId(), info->dispatchId);
  visitor.visit(RocmMetadataFields::kKernel, name());
  visitor.visit(RocmMetadataFields::kGrid, m::dim3(info->grid));
  visitor.visit(RocmMetadataFields::kBlock, m::dim3(info->block));
  visitor.visit(RocmMetadataFields::kSharedMemory, info->sharedMemory);
  visitor.visit(m::scratchMemory(), info->scratchMemory);
  m::visitGraph(visitor, *info);
  // Hardware counters, keyed by the counter's SDK name (src/vocabulary.rs).
  for (const auto& [counter, value] : info->counters) {
    visitor.visit(MetadataField<double>{counter}, value);
  }
}

// Runtime activities

template <class T>
inline bool RuntimeActivity<T>::flowStart() const {
  const auto* info = RocprofActivityApi::rowInfo(&raw());
  return info != nullptr ? info->launchedGpuWork
                         : kineto_rocm_metadata::launchesWork(raw().cid);
}

template <class T>
inline void RuntimeActivity<T>::log(ActivityLogger& logger) const {
  logger.handleActivity(*this);
}

template <class T>
inline const std::string RuntimeActivity<T>::metadataJson() const {
  libkineto::internal::JsonTypedMetadataVisitor visitor;
  visitTypedMetadata(visitor);
  return std::move(visitor).json();
}

template <class T>
inline void RuntimeActivity<T>::visitTypedMetadata(ITypedMetadataVisitor& visitor) const {
  namespace m = kineto_rocm_metadata;
  visitor.visit(RocmMetadataFields::kCid, static_cast<uint64_t>(raw().cid));
  visitor.visit(RocmMetadataFields::kCorrelation, static_cast<uint64_t>(raw().id));
  if constexpr (std::is_same_v<T, rocprofKernelRow>) {
    // A kernel launch: what it launched.
    const auto* info = RocprofActivityApi::rowInfo(&raw());
    if (info != nullptr && !info->launchedKernel.empty()) {
      visitor.visit(RocmMetadataFields::kKernel, demangle(info->launchedKernel));
    }
    visitor.visit(
        RocmMetadataFields::kGrid,
        std::vector<int64_t>{raw().gridX, raw().gridY, raw().gridZ});
    visitor.visit(
        RocmMetadataFields::kBlock,
        std::vector<int64_t>{raw().workgroupX, raw().workgroupY, raw().workgroupZ});
    visitor.visit(
        RocmMetadataFields::kSharedMemory, static_cast<uint64_t>(raw().groupSegmentSize));
  }
}

} // namespace KINETO_NAMESPACE
