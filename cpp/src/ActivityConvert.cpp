#include "ActivityConvert.h"

#include "KinetoCompat.h"
#include "kineto_rocm/RocmActivityApi.h"

#include <ThreadUtil.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <unordered_set>

namespace kineto_rocm::convert {

using libkineto::ActivityType;
using libkineto::GenericTraceActivity;

namespace {

// kineto's activity ids, devices and resources are int32: ids beyond that
// keep their low 31 bits (the full value stays in the metadata).
int32_t toI32(uint64_t v) {
  return v > static_cast<uint64_t>(INT32_MAX)
      ? static_cast<int32_t>(v & 0x7fffffffu)
      : static_cast<int32_t>(v);
}

int64_t toKinetoNs(uint64_t sdkNs, int64_t offsetNs) {
  return static_cast<int64_t>(sdkNs) + offsetNs;
}

const char* copySource(const std::string& dir) {
  if (dir == "HtoD" || dir == "HtoH") {
    return "Host";
  }
  if (dir == "DtoH" || dir == "DtoD") {
    return "Device";
  }
  return "?";
}

const char* copyDest(const std::string& dir) {
  if (dir == "DtoH" || dir == "HtoH") {
    return "Host";
  }
  if (dir == "HtoD" || dir == "DtoD") {
    return "Device";
  }
  return "?";
}

std::string dim3(uint32_t x, uint32_t y, uint32_t z) {
  return fmt::format("[{}, {}, {}]", x, y, z);
}

// Only work that ended before the capture started is dropped. Work that
// starts after kineto's capture end stays: the core puts device work in the
// window its launch was issued in, so a kernel queued behind a backlog before
// stopTrace and run after it belongs to this trace.
bool outside(const Options& opt, int64_t /*start*/, int64_t end) {
  if (opt.windowStart == 0 && opt.windowEnd == 0) {
    return false;
  }
  return end < opt.windowStart;
}

} // namespace

bool anyCollected(const std::set<ActivityType>& types) {
  return types.count(ActivityType::CONCURRENT_KERNEL) ||
      types.count(ActivityType::GPU_MEMCPY) ||
      types.count(ActivityType::GPU_MEMSET) ||
      types.count(ActivityType::CUDA_RUNTIME);
}

const libkineto::TraceSpan& traceSpan() {
  static const libkineto::TraceSpan* span =
      new libkineto::TraceSpan(0, 0, "kineto-rocm");
  return *span;
}

uint32_t flowIdFor(uint64_t correlation) {
  return 0x40000000u | static_cast<uint32_t>(correlation & 0x3fffffffu);
}

std::string jsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

void Lanes::addDevice(uint32_t device, const std::string& name) {
  auto& slot = devices_[toI32(device)];
  if (slot.empty()) {
    slot = name;
  }
}

void Lanes::addStream(int32_t device, int32_t stream) {
  devices_.emplace(device, std::string());
  streams_.emplace(device, stream);
}

std::vector<DeviceLaneInfo> Lanes::devices() const {
  // Only GPUs that ran something in the trace get a process: naming idle
  // agents would add empty rows (and, next to CUPTI, rename CUDA's GPUs).
  std::set<int32_t> active;
  for (const auto& s : streams_) {
    active.insert(s.first);
  }
  std::vector<DeviceLaneInfo> out;
  for (const auto& [dev, name] : devices_) {
    if (!active.count(dev)) {
      continue;
    }
    DeviceLaneInfo lane;
    lane.device = dev;
    lane.name = name.empty() ? fmt::format("GPU {}", dev) : name;
    out.push_back(std::move(lane));
  }
  return out;
}

std::vector<StreamLaneInfo> Lanes::streams() const {
  std::vector<StreamLaneInfo> out;
  for (const auto& [dev, stream] : streams_) {
    out.push_back(StreamLaneInfo{dev, stream});
  }
  return out;
}

void UserSpans::insertOrExtend(
    const libkineto::ITraceActivity& user,
    const GenericTraceActivity& gpu) {
  auto key = std::make_tuple(gpu.device, gpu.resource, user.correlationId());
  auto it = spans_.find(key);
  if (it == spans_.end()) {
    GenericTraceActivity span(
        traceSpan(), ActivityType::GPU_USER_ANNOTATION, user.name());
    span.startTime = gpu.startTime;
    span.endTime = gpu.endTime;
    span.device = gpu.device;
    span.resource = gpu.resource;
    span.threadId = gpu.resource;
    span.id = static_cast<int32_t>(user.correlationId());
    spans_.emplace(key, std::move(span));
    return;
  }
  it->second.startTime = std::min(it->second.startTime, gpu.startTime);
  it->second.endTime = std::max(it->second.endTime, gpu.endTime);
}

int UserSpans::log(libkineto::ActivityLogger& logger) const {
  for (const auto& entry : spans_) {
    logger.handleGenericActivity(entry.second);
  }
  return static_cast<int>(spans_.size());
}

std::vector<Row> buildRows(
    const WindowActivities& w,
    const Options& opt,
    Lanes* lanes,
    uint64_t* dropped) {
  const bool wantKernels = opt.mask.count(ActivityType::CONCURRENT_KERNEL) > 0;
  const bool wantCopies = opt.mask.count(ActivityType::GPU_MEMCPY) > 0;
  const bool wantRuntime = opt.mask.count(ActivityType::CUDA_RUNTIME) > 0;
  const int64_t offset = w.system_clock_offset_ns + opt.extraOffsetNs;

  for (const auto& lane : w.devices) {
    if (lanes) {
      lanes->addDevice(lane.device, std::string(lane.name));
    }
  }

  // Flow arrows only where both ends are in the trace.
  std::unordered_set<uint64_t> runtimeCorr;
  std::unordered_set<uint64_t> gpuCorr;
  if (wantRuntime) {
    for (const auto& r : w.runtime) {
      runtimeCorr.insert(r.correlation);
    }
  }
  if (wantKernels) {
    for (const auto& k : w.kernels) {
      gpuCorr.insert(k.correlation);
    }
  }
  if (wantCopies) {
    for (const auto& c : w.copies) {
      gpuCorr.insert(c.correlation);
    }
  }

  std::vector<std::string> names;
  names.reserve(w.kernel_names.size());
  for (const auto& n : w.kernel_names) {
    names.emplace_back(std::string(n));
  }

  std::vector<Row> rows;
  rows.reserve(
      (wantKernels ? w.kernels.size() : 0) + (wantCopies ? w.copies.size() : 0) +
      (wantRuntime ? w.runtime.size() : 0));
  uint64_t drops = 0;

  if (wantKernels) {
    for (const auto& k : w.kernels) {
      int64_t start = toKinetoNs(k.start_ns, offset);
      int64_t end = toKinetoNs(k.end_ns, offset);
      if (outside(opt, start, end)) {
        ++drops;
        continue;
      }
      const std::string& name = k.name_index < names.size()
          ? names[k.name_index]
          : std::string("<unknown kernel>");
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(), ActivityType::CONCURRENT_KERNEL, name);
      act->startTime = start;
      act->endTime = end;
      act->id = toI32(k.correlation);
      act->device = toI32(k.device);
      act->resource = toI32(k.stream);
      act->threadId = act->resource;
      if (runtimeCorr.count(k.correlation)) {
        act->flow.id = flowIdFor(k.correlation);
        act->flow.type = libkineto::kLinkAsyncCpuGpu;
        act->flow.start = false;
      }
      act->addMetadata("device", k.device);
      act->addMetadata("stream", k.stream);
      act->addMetadata("hsa_queue", k.queue);
      act->addMetadata("correlation", k.correlation);
      act->addMetadataQuoted("kind", "Dispatch Kernel");
      act->addMetadataQuoted("kernel", jsonEscape(name));
      act->addMetadata("grid", dim3(k.grid_x, k.grid_y, k.grid_z));
      act->addMetadata("block", dim3(k.block_x, k.block_y, k.block_z));
      act->addMetadata("shared memory", k.lds_bytes);
      act->addMetadata("private memory", k.scratch_bytes);
      act->addMetadata("dispatch id", k.dispatch_id);
      if (k.has_graph) {
        compat::addGraphFields(*act, k.graph_id, k.graph_node_id);
      }
      if (lanes) {
        lanes->addStream(act->device, act->resource);
      }
      Row row;
      row.kind = Kind::Kernel;
      row.correlation = k.correlation;
      row.hasExternal = k.has_external_id;
      row.external = k.external_id;
      row.hasUser = k.has_user_external_id;
      row.user = k.user_external_id;
      row.act = std::move(act);
      rows.push_back(std::move(row));
    }
  }

  if (wantCopies) {
    for (const auto& c : w.copies) {
      int64_t start = toKinetoNs(c.start_ns, offset);
      int64_t end = toKinetoNs(c.end_ns, offset);
      if (outside(opt, start, end)) {
        ++drops;
        continue;
      }
      std::string dir(c.direction);
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(),
          ActivityType::GPU_MEMCPY,
          fmt::format("Memcpy {} ({} -> {})", dir, copySource(dir), copyDest(dir)));
      act->startTime = start;
      act->endTime = end;
      act->id = toI32(c.correlation);
      act->device = toI32(c.device);
      act->resource = toI32(c.stream);
      act->threadId = act->resource;
      if (runtimeCorr.count(c.correlation)) {
        act->flow.id = flowIdFor(c.correlation);
        act->flow.type = libkineto::kLinkAsyncCpuGpu;
        act->flow.start = false;
      }
      act->addMetadata("device", c.device);
      act->addMetadata("stream", c.stream);
      act->addMetadata("correlation", c.correlation);
      act->addMetadataQuoted("kind", jsonEscape(dir));
      act->addMetadata("bytes", c.bytes);
      if (end > start) {
        // bytes per ns == GB/s
        act->addMetadata(
            "memory bandwidth (GB/s)",
            static_cast<double>(c.bytes) / static_cast<double>(end - start));
      }
      act->addMetadata("src device", c.src_device);
      act->addMetadata("dst device", c.dst_device);
      if (c.has_graph) {
        compat::addGraphFields(*act, c.graph_id, c.graph_node_id);
      }
      if (lanes) {
        lanes->addStream(act->device, act->resource);
      }
      Row row;
      row.kind = Kind::Copy;
      row.correlation = c.correlation;
      row.hasExternal = c.has_external_id;
      row.external = c.external_id;
      row.act = std::move(act);
      rows.push_back(std::move(row));
    }
  }

  if (wantRuntime) {
    const int32_t pid = libkineto::processId();
    for (const auto& r : w.runtime) {
      int64_t start = toKinetoNs(r.start_ns, offset);
      int64_t end = toKinetoNs(r.end_ns, offset);
      if (outside(opt, start, end)) {
        ++drops;
        continue;
      }
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(), ActivityType::CUDA_RUNTIME, std::string(r.name));
      act->startTime = start;
      act->endTime = end;
      act->id = toI32(r.correlation);
      act->device = pid;
      act->resource = toI32(r.thread_id);
      act->threadId = act->resource;
      if (gpuCorr.count(r.correlation)) {
        act->flow.id = flowIdFor(r.correlation);
        act->flow.type = libkineto::kLinkAsyncCpuGpu;
        act->flow.start = true;
      }
      act->addMetadata("correlation", r.correlation);
      Row row;
      row.kind = Kind::Runtime;
      row.correlation = r.correlation;
      row.hasExternal = r.has_external_id;
      row.external = r.external_id;
      row.act = std::move(act);
      rows.push_back(std::move(row));
    }
  }

  if (dropped) {
    *dropped += drops;
  }
  return rows;
}

} // namespace kineto_rocm::convert
