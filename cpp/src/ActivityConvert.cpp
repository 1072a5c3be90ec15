#include "ActivityConvert.h"

#include "KinetoCompat.h"
#include "Vocabulary.h"
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

// Args, each through the vocabulary: the key's spelling and the type its
// value must have. kineto 2.11's addMetadata writes values unquoted (fmt
// "{}"), addMetadataQuoted between quotes.
using K = MetadataKey;

void putUint(GenericTraceActivity& act, K k, uint64_t v) {
  vocab::expectType(k, ValueType::Uint);
  act.addMetadata(vocab::key(k), v);
}

void putInt(GenericTraceActivity& act, K k, int64_t v) {
  vocab::expectType(k, ValueType::Int);
  act.addMetadata(vocab::key(k), v);
}

void putStr(GenericTraceActivity& act, K k, const std::string& v) {
  vocab::expectType(k, ValueType::Str);
  act.addMetadataQuoted(vocab::key(k), jsonEscape(v));
}

void putFloat(GenericTraceActivity& act, K k, double v) {
  vocab::expectType(k, ValueType::Float);
  act.addMetadata(vocab::key(k), vocab::floatText(v));
}

void putDim3(GenericTraceActivity& act, K k, uint32_t x, uint32_t y, uint32_t z) {
  vocab::expectType(k, ValueType::IntArray);
  act.addMetadata(vocab::key(k), fmt::format("[{}, {}, {}]", x, y, z));
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

int32_t Lanes::stream(int32_t device, uint64_t stream) {
  int32_t id = toI32(stream);
  auto key = std::make_pair(device, id);
  if (!lanes_.count(key)) {
    devices_.emplace(device, std::string());
    lanes_.emplace(key, std::string(stream_lane_name(stream)));
  }
  return id;
}

int32_t Lanes::queue(int32_t device, uint64_t queue) {
  auto it = queueIds_.find({device, queue});
  if (it != queueIds_.end()) {
    return it->second;
  }
  int32_t id = static_cast<int32_t>(queue_lane_base()) + queuesPerDevice_[device]++;
  queueIds_.emplace(std::make_pair(device, queue), id);
  devices_.emplace(device, std::string());
  lanes_.emplace(std::make_pair(device, id), std::string(queue_lane_name(queue)));
  return id;
}

int32_t Lanes::copies(int32_t device) {
  int32_t id = static_cast<int32_t>(copy_lane_id());
  auto key = std::make_pair(device, id);
  if (!lanes_.count(key)) {
    devices_.emplace(device, std::string());
    lanes_.emplace(key, vocab::str(copy_lane_name()));
  }
  return id;
}

std::vector<DeviceLaneInfo> Lanes::devices() const {
  // Only GPUs that ran something in the trace get a process: naming idle
  // agents would add empty rows (and, next to CUPTI, rename CUDA's GPUs).
  std::set<int32_t> active;
  for (const auto& lane : lanes_) {
    active.insert(lane.first.first);
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

std::vector<StreamLaneInfo> Lanes::lanes() const {
  std::vector<StreamLaneInfo> out;
  for (const auto& [key, name] : lanes_) {
    out.push_back(StreamLaneInfo{key.first, key.second, name});
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
    Lanes& lanes,
    uint64_t* dropped) {
  const bool wantKernels = opt.mask.count(ActivityType::CONCURRENT_KERNEL) > 0;
  const bool wantCopies = opt.mask.count(ActivityType::GPU_MEMCPY) > 0;
  const bool wantRuntime = opt.mask.count(ActivityType::CUDA_RUNTIME) > 0;
  const int64_t offset = w.system_clock_offset_ns + opt.extraOffsetNs;

  for (const auto& lane : w.devices) {
    lanes.addDevice(lane.device, std::string(lane.name));
  }

  const auto launches = vocab::launchesOf(w);
  // Flow arrows only where both ends are in the trace.
  std::unordered_set<uint64_t> runtimeCorr;
  if (wantRuntime) {
    for (const auto& r : w.runtime) {
      runtimeCorr.insert(r.correlation);
    }
  }
  auto gpuFlows = [&](uint64_t correlation) {
    auto it = launches.find(correlation);
    return it != launches.end() &&
        ((wantKernels && it->second.kernels > 0) || (wantCopies && it->second.copies > 0));
  };

  std::vector<std::string> names;
  names.reserve(w.kernel_names.size());
  for (const auto& n : w.kernel_names) {
    names.emplace_back(std::string(n));
  }
  auto kernelName = [&](uint32_t index) -> const std::string& {
    static const std::string unknown("<unknown kernel>");
    return index < names.size() ? names[index] : unknown;
  };

  std::vector<Row> rows;
  rows.reserve(
      (wantKernels ? w.kernels.size() : 0) + (wantCopies ? w.copies.size() : 0) +
      (wantRuntime ? w.runtime.size() : 0));
  uint64_t drops = 0;
  const std::string kernelKind = vocab::str(kernel_kind());

  if (wantKernels) {
    for (const auto& k : w.kernels) {
      int64_t start = toKinetoNs(k.start_ns, offset);
      int64_t end = toKinetoNs(k.end_ns, offset);
      if (outside(opt, start, end)) {
        ++drops;
        continue;
      }
      const std::string& name = kernelName(k.name_index);
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(), ActivityType::CONCURRENT_KERNEL, name);
      act->startTime = start;
      act->endTime = end;
      act->id = k.has_correlation ? toI32(k.correlation) : 0;
      act->device = toI32(k.device);
      act->resource = k.has_stream ? lanes.stream(act->device, k.stream)
                                   : lanes.queue(act->device, k.queue);
      act->threadId = act->resource;
      if (k.has_correlation && runtimeCorr.count(k.correlation)) {
        act->flow.id = flowIdFor(k.correlation);
        act->flow.type = libkineto::kLinkAsyncCpuGpu;
        act->flow.start = false;
      }
      putInt(*act, K::Device, k.device);
      if (k.has_stream) {
        putInt(*act, K::Stream, static_cast<int64_t>(k.stream));
      }
      putUint(*act, K::HsaQueue, k.queue);
      if (k.has_correlation) {
        putUint(*act, K::Correlation, k.correlation);
      }
      putUint(*act, K::DispatchId, k.dispatch_id);
      putStr(*act, K::Kind, kernelKind);
      putStr(*act, K::Kernel, name);
      putDim3(*act, K::Grid, k.grid_x, k.grid_y, k.grid_z);
      putDim3(*act, K::Block, k.block_x, k.block_y, k.block_z);
      putUint(*act, K::SharedMemory, k.lds_bytes);
      putUint(*act, K::ScratchMemory, k.scratch_bytes);
      if (k.has_graph) {
        compat::addGraphFields(*act, k.graph_id, k.graph_node_id);
      }
      // Hardware counters, keyed by the counter's SDK name (src/vocabulary.rs).
      for (size_t i = 0; i < k.counter_names.size() && i < k.counter_values.size(); ++i) {
        act->addMetadata(std::string(k.counter_names[i]), vocab::floatText(k.counter_values[i]));
      }
      Row row;
      row.kind = Kind::Kernel;
      row.hasCorrelation = k.has_correlation;
      row.correlation = k.correlation;
      row.hasExternal = k.has_correlation && k.has_external_id;
      row.external = k.external_id;
      row.hasUser = k.has_correlation && k.has_user_external_id;
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
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(), ActivityType::GPU_MEMCPY, vocab::str(copy_event_name(c.direction)));
      act->startTime = start;
      act->endTime = end;
      act->id = c.has_correlation ? toI32(c.correlation) : 0;
      act->device = toI32(c.device);
      act->resource = c.has_stream ? lanes.stream(act->device, c.stream)
                                   : lanes.copies(act->device);
      act->threadId = act->resource;
      if (c.has_correlation && runtimeCorr.count(c.correlation)) {
        act->flow.id = flowIdFor(c.correlation);
        act->flow.type = libkineto::kLinkAsyncCpuGpu;
        act->flow.start = false;
      }
      putInt(*act, K::Device, c.device);
      if (c.has_stream) {
        putInt(*act, K::Stream, static_cast<int64_t>(c.stream));
      }
      // Copies run on no HSA queue the SDK reports: 0, as kineto writes.
      putUint(*act, K::HsaQueue, 0);
      if (c.has_correlation) {
        putUint(*act, K::Correlation, c.correlation);
      }
      putStr(*act, K::Kind, vocab::str(copy_kind(c.direction)));
      putUint(*act, K::Bytes, c.bytes);
      if (end > start) {
        // bytes per ns == GB/s
        putFloat(
            *act,
            K::MemoryBandwidth,
            static_cast<double>(c.bytes) / static_cast<double>(end - start));
      }
      putInt(*act, K::SrcDevice, c.src_device);
      putInt(*act, K::DstDevice, c.dst_device);
      if (c.has_graph) {
        compat::addGraphFields(*act, c.graph_id, c.graph_node_id);
      }
      Row row;
      row.kind = Kind::Copy;
      row.hasCorrelation = c.has_correlation;
      row.correlation = c.correlation;
      row.hasExternal = c.has_correlation && c.has_external_id;
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
      if (gpuFlows(r.correlation)) {
        act->flow.id = flowIdFor(r.correlation);
        act->flow.type = libkineto::kLinkAsyncCpuGpu;
        act->flow.start = true;
      }
      putUint(*act, K::Cid, r.cid);
      putUint(*act, K::Correlation, r.correlation);
      auto launch = launches.find(r.correlation);
      if (launch != launches.end() && launch->second.isKernelLaunch()) {
        const auto& k = w.kernels[launch->second.firstKernel];
        putStr(*act, K::Kernel, kernelName(k.name_index));
        putDim3(*act, K::Grid, k.grid_x, k.grid_y, k.grid_z);
        putDim3(*act, K::Block, k.block_x, k.block_y, k.block_z);
        putUint(*act, K::SharedMemory, k.lds_bytes);
      }
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
