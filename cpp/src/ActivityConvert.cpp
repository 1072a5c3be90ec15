#include "ActivityConvert.h"

#include "KinetoCompat.h"
#include "Vocabulary.h"
#include "kineto_rocm/RocmActivityApi.h"

#include <ThreadUtil.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
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
      types.count(ActivityType::CUDA_RUNTIME) ||
      types.count(ActivityType::CUDA_SYNC) ||
      types.count(ActivityType::CUDA_PROFILER_RANGE);
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

int32_t Lanes::branch(int32_t device, uint64_t stream, uint64_t queue) {
  auto key = std::make_tuple(device, stream, queue);
  auto it = branchIds_.find(key);
  if (it != branchIds_.end()) {
    return it->second;
  }
  int32_t id = static_cast<int32_t>(branch_lane_base()) + branchesPerDevice_[device]++;
  branchIds_.emplace(key, id);
  devices_.emplace(device, std::string());
  lanes_.emplace(std::make_pair(device, id), std::string(branch_lane_name(stream, queue)));
  return id;
}

int32_t Lanes::syncs(int32_t device) {
  int32_t id = static_cast<int32_t>(sync_lane_id());
  auto key = std::make_pair(device, id);
  if (!lanes_.count(key)) {
    devices_.emplace(device, std::string());
    lanes_.emplace(key, vocab::str(sync_lane_name()));
  }
  return id;
}

int32_t Lanes::overhead(int32_t pid) {
  int32_t id = static_cast<int32_t>(overhead_tid());
  auto key = std::make_pair(pid, id);
  if (!lanes_.count(key)) {
    cpuPids_.insert(pid);
    lanes_.emplace(key, vocab::str(overhead_lane_name()));
  }
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
    if (!cpuPids_.count(lane.first.first)) {
      active.insert(lane.first.first);
    }
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

namespace {

// A kernel record's row: its activity and the links it takes (correlation,
// External id, user span).
Row kernelRow(const KernelActivity& k, Kind kind, std::unique_ptr<GenericTraceActivity> act) {
  Row row;
  row.kind = kind;
  row.hasCorrelation = k.has_correlation;
  row.correlation = k.correlation;
  row.hasExternal = k.has_correlation && k.has_external_id;
  row.external = k.external_id;
  row.hasUser = k.has_correlation && k.has_user_external_id;
  row.user = k.user_external_id;
  row.act = std::move(act);
  return row;
}

// Hardware counters, keyed by the counter's SDK name (src/vocabulary.rs).
void putCounters(GenericTraceActivity& act, const KernelActivity& k) {
  for (size_t i = 0; i < k.counter_names.size() && i < k.counter_values.size(); ++i) {
    act.addMetadata(std::string(k.counter_names[i]), vocab::floatText(k.counter_values[i]));
  }
}

} // namespace

std::vector<Row> buildRows(
    const WindowActivities& w,
    const Options& opt,
    Lanes& lanes,
    uint64_t* dropped) {
  const bool wantKernels = opt.mask.count(ActivityType::CONCURRENT_KERNEL) > 0;
  const bool wantCopies = opt.mask.count(ActivityType::GPU_MEMCPY) > 0;
  const bool wantMemsets = opt.mask.count(ActivityType::GPU_MEMSET) > 0;
  const bool wantRuntime = opt.mask.count(ActivityType::CUDA_RUNTIME) > 0;
  const bool wantSyncs = opt.mask.count(ActivityType::CUDA_SYNC) > 0;
  const bool wantEvents = wantSyncs || opt.mask.count(ActivityType::CUDA_EVENT) > 0;
  const bool wantUser = opt.mask.count(ActivityType::USER_ANNOTATION) > 0;
  const bool wantGpuUser = opt.mask.count(ActivityType::GPU_USER_ANNOTATION) > 0;
  const bool wantOverhead = opt.mask.count(ActivityType::OVERHEAD) > 0;
  auto wantKernelRow = [&](const KernelActivity& k) {
    switch (k.blit) {
      case BlitKind::Memset:
        return wantMemsets;
      case BlitKind::Copy:
        return wantCopies;
      default:
        return wantKernels;
    }
  };
  const int64_t offset = w.system_clock_offset_ns + opt.extraOffsetNs;
  auto laneOf = [&](const KernelActivity& k) {
    int32_t device = toI32(k.device);
    return !k.has_stream ? lanes.queue(device, k.queue)
        : k.has_branch   ? lanes.branch(device, k.stream, k.queue)
                         : lanes.stream(device, k.stream);
  };

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
        ((wantKernels && it->second.kernels > 0) ||
         ((wantCopies || wantMemsets) && it->second.copies > 0));
  };

  std::vector<std::string> names;
  names.reserve(w.kernel_names.size());
  for (const auto& n : w.kernel_names) {
    names.emplace_back(std::string(n));
  }
  std::vector<std::string> symbols;
  symbols.reserve(w.kernel_symbols.size());
  for (const auto& n : w.kernel_symbols) {
    symbols.emplace_back(std::string(n));
  }
  auto kernelName = [&](uint32_t index) -> const std::string& {
    static const std::string unknown("<unknown kernel>");
    return index < names.size() ? names[index] : unknown;
  };
  auto kernelSymbol = [&](uint32_t index) -> const std::string& {
    return index < symbols.size() ? symbols[index] : kernelName(index);
  };
  // Where each kernel, copy and host function went (device, lane, start,
  // end), for dependency arrows; device -1: not written.
  struct Placed {
    int32_t device = -1;
    int32_t lane = 0;
    uint64_t start = 0;
    uint64_t end = 0;
  };
  std::vector<Placed> placedKernels(w.kernels.size());
  std::vector<Placed> placedCopies(w.copies.size());
  std::vector<Placed> placedHostFns(w.host_functions.size());

  std::vector<Row> rows;
  rows.reserve(
      (wantKernels ? w.kernels.size() : 0) + (wantCopies ? w.copies.size() : 0) +
      (wantRuntime ? w.runtime.size() : 0));
  uint64_t drops = 0;
  const std::string kernelKind = vocab::str(kernel_kind());

  for (size_t ki = 0; ki < w.kernels.size(); ++ki) {
    const auto& k = w.kernels[ki];
    if (!wantKernelRow(k)) {
      continue;
    }
    int64_t start = toKinetoNs(k.start_ns, offset);
    int64_t end = toKinetoNs(k.end_ns, offset);
    if (outside(opt, start, end)) {
      ++drops;
      continue;
    }
    const std::string& name = kernelName(k.name_index);
    const std::string& symbol = kernelSymbol(k.name_index);
    ActivityType type = ActivityType::CONCURRENT_KERNEL;
    std::string eventName = name;
    if (k.blit == BlitKind::Memset) {
      type = ActivityType::GPU_MEMSET;
      eventName = vocab::str(memset_name());
    } else if (k.blit == BlitKind::Copy) {
      type = ActivityType::GPU_MEMCPY;
      eventName = vocab::str(copy_event_name(k.blit_direction));
    }
    auto act = std::make_unique<GenericTraceActivity>(traceSpan(), type, eventName);
    act->startTime = start;
    act->endTime = end;
    act->id = k.has_correlation ? toI32(k.correlation) : 0;
    act->device = toI32(k.device);
    act->resource = laneOf(k);
    act->threadId = act->resource;
    placedKernels[ki] = Placed{act->device, act->resource, k.start_ns, k.end_ns};
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
    if (k.blit == BlitKind::Memset) {
      putStr(*act, K::Kind, vocab::str(memset_kind()));
      putStr(*act, K::Kernel, symbol);
      putUint(*act, K::Bytes, k.blit_bytes);
      putUint(*act, K::Value, k.blit_value);
      if (end > start) {
        putFloat(*act, K::MemoryBandwidth,
                 static_cast<double>(k.blit_bytes) / static_cast<double>(end - start));
      }
    } else if (k.blit == BlitKind::Copy) {
      putStr(*act, K::Kind, vocab::str(copy_kind(k.blit_direction)));
      putStr(*act, K::Kernel, symbol);
      putUint(*act, K::Bytes, k.blit_bytes);
      if (end > start) {
        putFloat(*act, K::MemoryBandwidth,
                 static_cast<double>(k.blit_bytes) / static_cast<double>(end - start));
      }
      int64_t d = k.device;
      int64_t src = -1, dst = -1;
      if (k.blit_direction == CopyDirection::HostToDevice) {
        dst = d;
      } else if (k.blit_direction == CopyDirection::DeviceToHost) {
        src = d;
      } else if (k.blit_direction == CopyDirection::DeviceToDevice) {
        src = d;
        dst = d;
      }
      putInt(*act, K::SrcDevice, src);
      putInt(*act, K::DstDevice, dst);
    } else {
      putStr(*act, K::Kind, kernelKind);
      putStr(*act, K::Kernel, name);
      putDim3(*act, K::Grid, k.grid_x, k.grid_y, k.grid_z);
      putDim3(*act, K::Block, k.block_x, k.block_y, k.block_z);
      putUint(*act, K::SharedMemory, k.lds_bytes);
      putUint(*act, K::ScratchMemory, k.scratch_bytes);
      if (symbol != name) {
        putStr(*act, K::MangledName, symbol);
      }
    }
    if (k.has_graph) {
      compat::addGraphFields(*act, k.graph_id, k.graph_node_id);
    }
    if (k.has_replay_pass) {
      putUint(*act, K::ReplayPass, k.replay_pass);
    }
    if (!k.thread_trace.empty()) {
      putStr(*act, K::ThreadTrace, std::string(k.thread_trace));
    }
    putCounters(*act, k);
    rows.push_back(kernelRow(k, k.blit == BlitKind::None ? Kind::Kernel : Kind::Copy,
                             std::move(act)));
  }

  // Hardware counters the way CUPTI's range profiler hands them to kineto:
  // one cuda_profiler_range per counted kernel, its counters as args
  // (PyTorch asks for these types when its experimental config names
  // profiler_metrics).
  if (opt.mask.count(ActivityType::CUDA_PROFILER_RANGE) > 0) {
    for (const auto& k : w.kernels) {
      if (k.counter_names.empty()) {
        continue;
      }
      int64_t start = toKinetoNs(k.start_ns, offset);
      int64_t end = toKinetoNs(k.end_ns, offset);
      if (outside(opt, start, end)) {
        continue;
      }
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(), ActivityType::CUDA_PROFILER_RANGE, kernelName(k.name_index));
      act->startTime = start;
      act->endTime = end;
      act->id = k.has_correlation ? toI32(k.correlation) : 0;
      act->device = toI32(k.device);
      act->resource = laneOf(k);
      act->threadId = act->resource;
      putInt(*act, K::Device, k.device);
      if (k.has_correlation) {
        putUint(*act, K::Correlation, k.correlation);
      }
      putUint(*act, K::DispatchId, k.dispatch_id);
      if (k.has_graph) {
        compat::addGraphFields(*act, k.graph_id, k.graph_node_id);
      }
      if (k.has_replay_pass) {
        putUint(*act, K::ReplayPass, k.replay_pass);
      }
      putCounters(*act, k);
      rows.push_back(kernelRow(k, Kind::Kernel, std::move(act)));
    }
  }

  if (wantCopies) {
    for (size_t ci = 0; ci < w.copies.size(); ++ci) {
      const auto& c = w.copies[ci];
      int64_t start = toKinetoNs(c.start_ns, offset);
      int64_t end = toKinetoNs(c.end_ns, offset);
      if (outside(opt, start, end)) {
        ++drops;
        continue;
      }
      const bool peer = c.src_device >= 0 && c.dst_device >= 0 && c.src_device != c.dst_device;
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(),
          ActivityType::GPU_MEMCPY,
          peer ? vocab::str(peer_copy_name()) : vocab::str(copy_event_name(c.direction)));
      act->startTime = start;
      act->endTime = end;
      act->id = c.has_correlation ? toI32(c.correlation) : 0;
      act->device = toI32(c.device);
      act->resource = c.has_stream ? lanes.stream(act->device, c.stream)
                                   : lanes.copies(act->device);
      act->threadId = act->resource;
      placedCopies[ci] = Placed{act->device, act->resource, c.start_ns, c.end_ns};
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
      putStr(*act, K::Kind, peer ? vocab::str(peer_copy_kind()) : vocab::str(copy_kind(c.direction)));
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

  const int32_t pid = libkineto::processId();
  // Activities of the CPU process, on a thread's lane.
  auto cpuActivity = [&](ActivityType type, const std::string& name, uint64_t startNs,
                         uint64_t endNs, int32_t tid) {
    auto act = std::make_unique<GenericTraceActivity>(traceSpan(), type, name);
    act->startTime = toKinetoNs(startNs, offset);
    act->endTime = toKinetoNs(endNs, offset);
    act->id = 0; // kineto writes a nonzero id as "External id"
    act->device = pid;
    act->resource = tid;
    act->threadId = tid;
    return act;
  };
  auto pushOther = [&](std::unique_ptr<GenericTraceActivity> act, bool hasExternal,
                       uint64_t external) {
    if (outside(opt, act->startTime, act->endTime)) {
      ++drops;
      return;
    }
    Row row;
    row.kind = Kind::Other;
    row.hasCorrelation = false;
    row.hasExternal = hasExternal;
    row.external = external;
    row.act = std::move(act);
    rows.push_back(std::move(row));
  };

  if (wantSyncs) {
    for (const auto& sy : w.syncs) {
      const std::string name = vocab::str(sync_name(sy.kind));
      std::unique_ptr<GenericTraceActivity> act;
      if (sy.has_device) {
        act = std::make_unique<GenericTraceActivity>(traceSpan(), ActivityType::CUDA_SYNC, name);
        act->startTime = toKinetoNs(sy.start_ns, offset);
        act->endTime = toKinetoNs(sy.end_ns, offset);
        act->id = 0;
        act->device = toI32(sy.device);
        act->resource = sy.has_stream ? lanes.stream(act->device, sy.stream)
                                      : lanes.syncs(act->device);
        act->threadId = act->resource;
      } else {
        act = cpuActivity(ActivityType::CUDA_SYNC, name, sy.start_ns, sy.end_ns,
                          toI32(sy.thread_id));
      }
      putStr(*act, K::CudaSyncKind, name);
      putUint(*act, K::Correlation, sy.correlation);
      if (sy.has_device) {
        putInt(*act, K::Device, sy.device);
      }
      if (sy.has_stream) {
        putInt(*act, K::Stream, static_cast<int64_t>(sy.stream));
      }
      if (sy.kind == SyncKind::Event || sy.kind == SyncKind::StreamWaitEvent) {
        putInt(*act, K::WaitOnStream, sy.wait_on_stream);
        putInt(*act, K::WaitOnEventRecordCorrelation, sy.wait_on_record_correlation);
        putUint(*act, K::WaitOnEventId, sy.has_event ? sy.event : 0);
      }
      pushOther(std::move(act), sy.has_external_id, sy.external_id);
    }
  }

  if (wantEvents) {
    for (const auto& e : w.events) {
      const std::string name = vocab::str(event_record_name());
      std::unique_ptr<GenericTraceActivity> act;
      if (e.has_lane) {
        act = std::make_unique<GenericTraceActivity>(traceSpan(), ActivityType::CUDA_EVENT, name);
        act->startTime = toKinetoNs(e.ts_ns, offset);
        act->endTime = act->startTime;
        act->id = 0;
        act->device = toI32(e.device);
        act->resource = lanes.stream(act->device, e.stream);
        act->threadId = act->resource;
      } else {
        act = cpuActivity(ActivityType::CUDA_EVENT, name, e.ts_ns, e.ts_ns, toI32(e.thread_id));
      }
      putUint(*act, K::EventId, e.event);
      putUint(*act, K::Correlation, e.correlation);
      if (e.has_lane) {
        putInt(*act, K::Device, e.device);
        putInt(*act, K::Stream, static_cast<int64_t>(e.stream));
      }
      putStr(*act, K::Timing, vocab::str(timing_event()));
      if (e.has_graph) {
        compat::addGraphFields(*act, e.graph_id, e.graph_node_id);
      }
      pushOther(std::move(act), e.has_external_id, e.external_id);
    }
  }

  for (size_t hi = 0; hi < w.host_functions.size(); ++hi) {
    const auto& h = w.host_functions[hi];
    const std::string name = vocab::str(host_fn_name());
    auto act = std::make_unique<GenericTraceActivity>(traceSpan(), ActivityType::CUDA_SYNC, name);
    act->startTime = toKinetoNs(h.start_ns, offset);
    act->endTime = toKinetoNs(h.end_ns, offset);
    act->id = 0;
    act->device = toI32(h.device);
    act->resource = h.has_branch ? lanes.branch(act->device, h.stream, h.branch_queue)
                                 : lanes.stream(act->device, h.stream);
    act->threadId = act->resource;
    placedHostFns[hi] = Placed{act->device, act->resource, h.start_ns, h.end_ns};
    if (!wantSyncs) {
      continue;
    }
    putStr(*act, K::CudaSyncKind, name);
    putInt(*act, K::Device, h.device);
    putInt(*act, K::Stream, static_cast<int64_t>(h.stream));
    putUint(*act, K::Correlation, h.correlation);
    putUint(*act, K::HostFunction, h.function);
    putStr(*act, K::Timing, vocab::str(timing_bounds()));
    if (h.has_graph) {
      compat::addGraphFields(*act, h.graph_id, h.graph_node_id);
    }
    pushOther(std::move(act), h.has_external_id, h.external_id);
  }

  if (wantUser) {
    for (const auto& a : w.annotations) {
      pushOther(
          cpuActivity(ActivityType::USER_ANNOTATION, std::string(a.name), a.start_ns, a.end_ns,
                      toI32(a.thread_id)),
          false, 0);
    }
  }

  if (wantGpuUser) {
    for (const auto& g : w.gpu_annotations) {
      auto act = std::make_unique<GenericTraceActivity>(
          traceSpan(), ActivityType::GPU_USER_ANNOTATION, std::string(g.name));
      act->startTime = toKinetoNs(g.start_ns, offset);
      act->endTime = toKinetoNs(g.end_ns, offset);
      act->id = 0;
      act->device = toI32(g.device);
      act->resource = g.has_branch ? lanes.branch(act->device, g.stream, g.branch_queue)
                                   : lanes.stream(act->device, g.stream);
      act->threadId = act->resource;
      pushOther(std::move(act), false, 0);
    }
  }

  // Dependency arrows: a zero-length carrier at each end (a kineto
  // activity carries one flow), linked by a fwdbwd flow.
  if (wantKernels) {
    auto placed = [&](GpuList list, uint64_t index) -> const Placed* {
      const std::vector<Placed>* v = list == GpuList::Kernel ? &placedKernels
          : list == GpuList::Copy                           ? &placedCopies
                                                             : &placedHostFns;
      if (index >= v->size() || (*v)[index].device < 0) {
        return nullptr;
      }
      return &(*v)[index];
    };
    static std::atomic<uint32_t> nextFlow{0x20000000u};
    for (const auto& d : w.dependencies) {
      const Placed* from = placed(d.from_list, d.from_index);
      const Placed* to = placed(d.to_list, d.to_index);
      if (!from || !to) {
        continue;
      }
      uint32_t id = nextFlow.fetch_add(1);
      for (int end = 0; end < 2; ++end) {
        const Placed& p = end == 0 ? *from : *to;
        uint64_t ts = dependency_carrier_ns(p.start, p.end, end == 0);
        auto act = std::make_unique<GenericTraceActivity>(
            traceSpan(), ActivityType::GPU_USER_ANNOTATION, vocab::str(dependency_name()));
        act->startTime = toKinetoNs(ts, offset);
        act->endTime = act->startTime;
        act->id = 0;
        act->device = p.device;
        act->resource = p.lane;
        act->threadId = p.lane;
        act->flow.id = id;
        act->flow.type = libkineto::kLinkFwdBwd;
        act->flow.start = end == 0;
        pushOther(std::move(act), false, 0);
      }
    }
  }

  if (wantOverhead) {
    for (const auto& o : w.overheads) {
      auto act = cpuActivity(ActivityType::OVERHEAD, vocab::str(o.name), o.start_ns, o.end_ns,
                             lanes.overhead(pid));
      putUint(*act, K::OverheadCount, o.count);
      pushOther(std::move(act), false, 0);
    }
  }

  if (dropped) {
    *dropped += drops;
  }
  return rows;
}

} // namespace kineto_rocm::convert
