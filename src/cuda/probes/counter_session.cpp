// SPDX-License-Identifier: Apache-2.0
#include "counter_session.hpp"

#include "driver_api.hpp"
#include "roofline/common/error.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

// The call sequence and the GH100 metric names were checked on an H200 (docs/benchmarks.md records
// the runs); NVIDIA/nvbench's cupti_profiler_host.cxx uses the same user-range/user-replay loop.

namespace roofline::cuda::detail {

namespace {

// ------------------------------------------------------------------------------------------
// metrics

constexpr const char *time_metric = "gpu__time_duration.sum"; // nanoseconds
// DRAM bytes: the name most chips use, then GB20x's (GDDR7), which has only the _op_ form.
constexpr const char *dram_read_metrics[] = {"dram__bytes_read.sum", "dram__bytes_op_read.sum"};
constexpr const char *dram_write_metrics[] = {"dram__bytes_write.sum", "dram__bytes_op_write.sum"};
constexpr const char *l2_metric = "lts__t_bytes.sum";
constexpr const char *clock_metric =
    "sm__cycles_elapsed.avg.per_second"; // a rate: averaged, not summed
constexpr const char *fadd_metric = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
constexpr const char *fmul_metric = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
constexpr const char *ffma_metric = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
constexpr const char *dadd_metric = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
constexpr const char *dmul_metric = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
constexpr const char *dfma_metric = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";

constexpr std::string_view tensor_prefix = "sm__ops_path_tensor_";

/// Tensor-path op counters of one operand family. Names differ per chip, and some chips also have a
/// total next to its per-accumulator parts (GH100 has src_fp16 but not src_fp16_dst_fp32, GA100 the
/// reverse): of `alternatives`, the first the chip has any member of is used, so nothing is counted
/// twice. Checked with cuptiProfilerHostGetBaseMetrics for TU102, GA100, GA102, AD102, GH100, GB100
/// and GB202; only GH100 was also measured. int1 (bit ops) is left out on purpose.
struct tensor_family {
  std::vector<precision> precisions; ///< requests that select it; empty: only "every family"
  std::vector<std::vector<const char *>> alternatives;
};

const std::vector<tensor_family> &tensor_families() {
  static const std::vector<tensor_family> families = {
      {{precision::fp16}, {{"src_fp16"}, {"src_fp16_dst_fp16", "src_fp16_dst_fp32"}}},
      {{precision::fp16, precision::bf16, precision::tf32},
       {{"src_fp16_bf16_tf32_dst_fp32"}}}, // Turing
      {{precision::bf16}, {{"src_bf16_dst_fp32"}}},
      {{precision::tf32}, {{"src_tf32_dst_fp32"}}},
      {{precision::fp8}, {{"src_fp8"}, {"src_fp8_dst_fp16", "src_fp8_dst_fp32"}}},
      {{precision::fp8}, {{"src_fp4_fp6_fp8_dst_fp16", "src_fp4_fp6_fp8_dst_fp32"}}}, // GB100
      {{}, {{"src_fp4_dst_fp32", "src_fp4_fp6_dst_fp16", "src_fp4_fp6_dst_fp32"}}},   // Blackwell
      {{precision::int8}, {{"src_int8"}}},
      {{}, {{"src_int4"}}},
      {{precision::fp64}, {{"src_fp64"}}},
  };
  return families;
}

std::string tensor_metric(const char *family_member) {
  return std::string(tensor_prefix) + family_member + ".sum";
}

bool is_tensor_metric(const std::string &name) {
  return name.compare(0, tensor_prefix.size(), tensor_prefix) == 0;
}

std::vector<const char *> pointers(const std::vector<std::string> &names) {
  std::vector<const char *> p;
  p.reserve(names.size());
  for (const std::string &name : names)
    p.push_back(name.c_str());
  return p;
}

// --------------------------------------------------------------------------- CUPTI object owners

/// cuptiProfilerInitialize/DeInitialize are process-wide: counted, so that one session's end does
/// not pull the profiler from under another's.
class profiler_reference {
public:
  profiler_reference() {
    const std::lock_guard<std::mutex> lock(mutex());
    if (users() == 0) {
      CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
      p.pPriv = nullptr;
      ROOFLINE_CUDA_CHECK(cuptiProfilerInitialize(&p));
    }
    ++users();
  }
  ~profiler_reference() {
    const std::lock_guard<std::mutex> lock(mutex());
    if (--users() == 0) {
      CUpti_Profiler_DeInitialize_Params p{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
      p.pPriv = nullptr;
      cuptiProfilerDeInitialize(&p); // in a destructor: nothing to report a failure to
    }
  }
  profiler_reference(const profiler_reference &) = delete;
  profiler_reference &operator=(const profiler_reference &) = delete;

private:
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
  static int &users() {
    static int n = 0;
    return n;
  }
};

/// A CUPTI profiler host object: metric names → config image, and counter data → values.
class host_object {
public:
  host_object(const std::string &chip, const std::vector<std::uint8_t> &availability) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    ROOFLINE_CUDA_CHECK(cuptiProfilerHostInitialize(&p));
    m_object = p.pHostObject;
  }
  ~host_object() {
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.pHostObject = m_object;
    cuptiProfilerHostDeinitialize(&p);
  }
  host_object(const host_object &) = delete;
  host_object &operator=(const host_object &) = delete;

  /// Whether the chip has the metric, rollup included ("dram__bytes_read.sum"). Unlike a failed
  /// ConfigAddMetrics, a failed lookup leaves the object usable (checked with CUPTI 13.0, GH100).
  bool has_metric(const std::string &name) const {
    CUpti_Profiler_Host_GetMetricProperties_Params p{
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.pHostObject = m_object;
    p.pMetricName = name.c_str();
    return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
  }

  /// Adds every metric in one call (the pass count depends on it: 7 metrics added one per call
  /// needed 7 passes on an H200) and returns the config image; nullopt when CUPTI refuses, after
  /// which this object is unusable (one bad name poisons it).
  std::optional<std::vector<std::uint8_t>> configure(const std::vector<std::string> &names) {
    std::vector<const char *> p_names = pointers(names);
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pPriv = nullptr;
    add.pHostObject = m_object;
    add.ppMetricNames = p_names.data();
    add.numMetrics = p_names.size();
    if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS)
      return std::nullopt;
    CUpti_Profiler_Host_GetConfigImageSize_Params size{
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pPriv = nullptr;
    size.pHostObject = m_object;
    if (cuptiProfilerHostGetConfigImageSize(&size) != CUPTI_SUCCESS || size.configImageSize == 0)
      return std::nullopt;
    std::vector<std::uint8_t> image(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params get{
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    get.pPriv = nullptr;
    get.pHostObject = m_object;
    get.configImageSize = image.size();
    get.pConfigImage = image.data();
    if (cuptiProfilerHostGetConfigImage(&get) != CUPTI_SUCCESS)
      return std::nullopt;
    return image;
  }

  /// The metrics' values in one range of decoded counter data.
  std::vector<double> evaluate(std::vector<std::uint8_t> &counter_data, std::size_t range,
                               const std::vector<const char *> &names) const {
    std::vector<double> values(names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params p{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.pHostObject = m_object;
    p.pCounterDataImage = counter_data.data();
    p.counterDataImageSize = counter_data.size();
    p.rangeIndex = range;
    p.ppMetricNames = const_cast<const char **>(names.data());
    p.numMetrics = names.size();
    p.pMetricValues = values.data();
    ROOFLINE_CUDA_CHECK(cuptiProfilerHostEvaluateToGpuValues(&p));
    return values;
  }

private:
  CUpti_Profiler_Host_Object *m_object = nullptr;
};

/// The range profiler enabled on one context.
class range_profiler {
public:
  explicit range_profiler(CUcontext context) {
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.ctx = context;
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerEnable(&p)); // INSUFFICIENT_PRIVILEGES shows here
    m_object = p.pRangeProfilerObject;
  }
  ~range_profiler() {
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.pRangeProfilerObject = m_object;
    cuptiRangeProfilerDisable(&p);
  }
  range_profiler(const range_profiler &) = delete;
  range_profiler &operator=(const range_profiler &) = delete;

  CUpti_RangeProfiler_Object *get() const noexcept { return m_object; }

private:
  CUpti_RangeProfiler_Object *m_object = nullptr;
};

// ------------------------------------------------------------------------------------ set-up steps

/// `device`'s primary context, made current on this thread (as cudaSetDevice does).
CUcontext context_on(int device) {
  int count = 0;
  ROOFLINE_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    throw cuda_error("CUDA", cudaErrorInvalidDevice,
                     "counter_session: no CUDA device " + std::to_string(device) + " (" +
                         std::to_string(count) + " visible)");
  ROOFLINE_CUDA_CHECK(cudaSetDevice(device));
  ROOFLINE_CUDA_CHECK(cudaFree(nullptr)); // creates the primary context if need be
  const CUcontext context = current_context();
  if (context == nullptr)
    throw cuda_error("CUDA", cudaErrorDeviceUninitialized,
                     "counter_session: no CUDA context on device " + std::to_string(device));
  return context;
}

void require_supported(int device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.pPriv = nullptr;
  p.cuDevice = device_handle(device);
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  ROOFLINE_CUDA_CHECK(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED &&
      p.isSupported != CUPTI_PROFILER_CONFIGURATION_DISABLED)
    return;
  std::string why;
  const auto reason = [&why](CUpti_Profiler_Support_Level level, const char *what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ||
        level == CUPTI_PROFILER_CONFIGURATION_DISABLED)
      why += std::string(why.empty() ? "" : ", ") + what +
             (level == CUPTI_PROFILER_CONFIGURATION_DISABLED ? " (disabled)" : "");
  };
  reason(p.architecture, "architecture (the range profiler needs compute capability 7.5 or newer)");
  reason(p.sli, "SLI");
  reason(p.vGpu, "vGPU");
  reason(p.confidentialCompute, "confidential computing");
  reason(p.cmp, "crypto-mining processor");
  reason(p.wsl, "WSL");
  throw cuda_error("CUPTI", CUPTI_ERROR_NOT_SUPPORTED,
                   "CUPTI range profiler not supported on device " + std::to_string(device) +
                       (why.empty() ? std::string() : ": " + why));
}

std::string chip_name(int device) {
  CUpti_Device_GetChipName_Params p{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  p.pPriv = nullptr;
  p.deviceIndex = static_cast<std::size_t>(device);
  ROOFLINE_CUDA_CHECK(cuptiDeviceGetChipName(&p));
  if (p.pChipName == nullptr)
    throw cuda_error("CUPTI", CUPTI_ERROR_UNKNOWN,
                     "CUPTI gave no chip name for device " + std::to_string(device));
  return p.pChipName;
}

/// Which counters this context may read now (MIG, vGPU and other clients can take some away).
/// Must be read before the range profiler is enabled on the context.
std::vector<std::uint8_t> counter_availability(CUcontext context) {
  CUpti_Profiler_GetCounterAvailability_Params p{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  p.pPriv = nullptr;
  p.ctx = context;
  p.pCounterAvailabilityImage = nullptr;
  ROOFLINE_CUDA_CHECK(cuptiProfilerGetCounterAvailability(&p));
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  ROOFLINE_CUDA_CHECK(cuptiProfilerGetCounterAvailability(&p));
  image.resize(p.counterAvailabilityImageSize);
  return image;
}

/// The metrics to ask for, in a fixed order, keeping only the names `host` knows.
std::vector<std::string> candidate_metrics(const host_object &host,
                                           const std::vector<precision> &tensor_precisions) {
  std::vector<std::string> names;
  for (const auto *alternatives : {&dram_read_metrics, &dram_write_metrics})
    for (const char *name : *alternatives)
      if (host.has_metric(name)) {
        names.emplace_back(name);
        break;
      }
  for (const char *name : {time_metric, l2_metric, clock_metric, fadd_metric, fmul_metric,
                           ffma_metric, dadd_metric, dmul_metric, dfma_metric})
    if (host.has_metric(name))
      names.emplace_back(name);
  for (const tensor_family &family : tensor_families()) {
    const bool wanted =
        tensor_precisions.empty() ||
        std::any_of(family.precisions.begin(), family.precisions.end(), [&](precision p) {
          return std::find(tensor_precisions.begin(), tensor_precisions.end(), p) !=
                 tensor_precisions.end();
        });
    if (!wanted)
      continue;
    for (const auto &alternative : family.alternatives) {
      std::vector<std::string> present;
      for (const char *member : alternative)
        if (host.has_metric(tensor_metric(member)))
          present.push_back(tensor_metric(member));
      if (!present.empty()) {
        for (std::string &name : present)
          if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(std::move(name));
        break;
      }
    }
  }
  return names;
}

} // namespace

// ------------------------------------------------------------------------------------------
// session

struct counter_session::impl {
  int device;
  CUcontext context;
  profiler_reference profiler; // before every other CUPTI object, gone after them
  std::string chip;
  std::vector<std::uint8_t> availability;
  std::unique_ptr<host_object> host;
  std::vector<std::string> metrics;
  std::vector<const char *> metric_pointers; // into `metrics`
  std::vector<std::uint8_t> config;
  int passes = 0;
  std::unique_ptr<range_profiler> target;
  std::vector<std::uint8_t> counter_data;

  // One range per measure() call; the counter data image is re-initialized for each.
  static constexpr std::size_t max_ranges = 1;

  impl(int device_, const std::vector<precision> &tensor_precisions)
      : device(device_), context(context_on(device_)) {
    require_supported(device);
    chip = chip_name(device);
    availability = counter_availability(context);

    // Names are checked one by one first: a single unknown name in ConfigAddMetrics poisons the
    // host object for every later call, valid names included.
    host = std::make_unique<host_object>(chip, availability);
    metrics = candidate_metrics(*host, tensor_precisions);
    if (metrics.empty())
      throw cuda_error("CUPTI", CUPTI_ERROR_NOT_SUPPORTED,
                       "CUPTI knows none of our metrics on chip " + chip);
    std::optional<std::vector<std::uint8_t>> image = host->configure(metrics);
    if (!image) {
      // A name the chip knows that this context cannot count (see counter_availability): find the
      // culprits on throwaway host objects, then configure a fresh one without them.
      std::vector<std::string> usable;
      for (const std::string &name : metrics)
        if (host_object(chip, availability).configure({name}))
          usable.push_back(name);
      metrics = std::move(usable);
      host = std::make_unique<host_object>(chip, availability);
      image = metrics.empty() ? std::nullopt : host->configure(metrics);
      if (!image)
        throw cuda_error("CUPTI", CUPTI_ERROR_NOT_SUPPORTED,
                         "CUPTI could not build a counter configuration on chip " + chip);
    }
    config = std::move(*image);
    metric_pointers = pointers(metrics);

    CUpti_Profiler_Host_GetNumOfPasses_Params p{
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    p.pPriv = nullptr;
    p.configImageSize = config.size();
    p.pConfigImage = config.data();
    ROOFLINE_CUDA_CHECK(cuptiProfilerHostGetNumOfPasses(&p));
    passes = static_cast<int>(p.numOfPasses);

    target = std::make_unique<range_profiler>(context);
    CUpti_RangeProfiler_GetCounterDataSize_Params size{
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pPriv = nullptr;
    size.pRangeProfilerObject = target->get();
    size.pMetricNames = metric_pointers.data();
    size.numMetrics = metric_pointers.size();
    size.maxNumOfRanges = max_ranges;
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data.assign(size.counterDataSize, 0);
  }

  ~impl() {
    // Order matters: the range profiler before the host object, both before
    // cuptiProfilerDeInitialize.
    target.reset();
    host.reset();
  }

  void prepare_counter_data() {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pPriv = nullptr;
    init.pRangeProfilerObject = target->get();
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));

    CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pPriv = nullptr;
    set.pRangeProfilerObject = target->get();
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = max_ranges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerSetConfig(&set));
  }

  /// One replay pass: start, push, the work, pop, stop. Returns whether CUPTI has every pass.
  bool run_pass(const std::function<void()> &launch) {
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pPriv = nullptr;
    start.pRangeProfilerObject = target->get();
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerStart(&start));

    CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
    push.pPriv = nullptr;
    push.pRangeProfilerObject = target->get();
    push.pRangeName = "roofline";
    CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
    pop.pPriv = nullptr;
    pop.pRangeProfilerObject = target->get();
    CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pPriv = nullptr;
    stop.pRangeProfilerObject = target->get();

    try {
      ROOFLINE_CUDA_CHECK(cuptiRangeProfilerPushRange(&push));
      try {
        launch();
      } catch (...) {
        cuptiRangeProfilerPopRange(&pop); // leave CUPTI balanced for the next measure()
        throw;
      }
      ROOFLINE_CUDA_CHECK(cuptiRangeProfilerPopRange(&pop));
    } catch (...) {
      cuptiRangeProfilerStop(&stop);
      throw;
    }
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerStop(&stop));
    return stop.isAllPassSubmitted != 0;
  }

  /// Decodes the passes and adds up the ranges (one expected): counts are summed, the clock rate is
  /// averaged weighted by each range's duration.
  std::map<std::string, double> decode() {
    CUpti_RangeProfiler_DecodeData_Params d{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    d.pPriv = nullptr;
    d.pRangeProfilerObject = target->get();
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerDecodeData(&d)); // synchronizes the context
    if (d.numOfRangeDropped != 0)
      throw roofline::error("CUPTI dropped " + std::to_string(d.numOfRangeDropped) +
                            " profiled range(s): the work opened ranges of its own");

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pPriv = nullptr;
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    ROOFLINE_CUDA_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
    if (info.numTotalRanges == 0)
      throw roofline::error("CUPTI returned no profiled range");

    std::map<std::string, double> totals;
    double weighted_clock = 0, clock_sum = 0;
    for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
      const std::vector<double> values = host->evaluate(counter_data, range, metric_pointers);
      double duration = 0, clock = 0;
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        if (metrics[i] == clock_metric)
          clock = values[i];
        else
          totals[metrics[i]] += values[i];
        if (metrics[i] == time_metric)
          duration = values[i];
      }
      weighted_clock += clock * duration;
      clock_sum += clock;
    }
    const double duration = totals.count(time_metric) != 0 ? totals[time_metric] : 0;
    totals[clock_metric] = duration > 0 ? weighted_clock / duration
                                        : clock_sum / static_cast<double>(info.numTotalRanges);
    return totals;
  }
};

counter_session::counter_session(int device, const std::vector<precision> &tensor_precisions)
    : m_impl(std::make_unique<impl>(device, tensor_precisions)) {}

counter_session::~counter_session() = default;

counter_values counter_session::measure(const std::function<void()> &launch, cudaStream_t stream,
                                        const std::function<void()> &before_each_run) {
  impl &s = *m_impl;
  if (current_context() != s.context)
    throw roofline::error("counter_session::measure: the profiled context (device " +
                          std::to_string(s.device) + ") is not current on this thread");

  counter_values v;
  // Names and kernel time first, on a run of their own: tracing then adds nothing to the counted
  // passes.
  if (before_each_run)
    before_each_run();
  v.kernels = trace_kernels(launch, stream, s.context);

  s.prepare_counter_data();
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream)); // earlier work stays out of the range
  // CUPTI says when it has every pass; the bound only guards against a loop that never ends.
  const int pass_limit = 2 * std::max(s.passes, 1) + 2;
  bool complete = false;
  while (!complete) {
    if (v.passes == pass_limit)
      throw roofline::error("CUPTI still wanted replay passes after " + std::to_string(pass_limit) +
                            " (it announced " + std::to_string(s.passes) + ")");
    if (before_each_run) {
      before_each_run();
      ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream)); // its traffic stays out of the range
    }
    complete = s.run_pass(launch);
    ++v.passes;
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  const std::map<std::string, double> totals = s.decode();
  const auto value = [&totals](const char *name) {
    const auto it = totals.find(name);
    return it == totals.end() ? 0.0 : it->second;
  };
  v.duration_s = value(time_metric) * 1e-9;
  for (const char *name : dram_read_metrics)
    v.dram_read_bytes += value(name); // only one of them is collected
  for (const char *name : dram_write_metrics)
    v.dram_write_bytes += value(name);
  v.l2_bytes = value(l2_metric);
  v.sm_clock_hz = value(clock_metric);
  v.fp32_flops = value(fadd_metric) + value(fmul_metric) + 2 * value(ffma_metric);
  v.fp64_flops = value(dadd_metric) + value(dmul_metric) + 2 * value(dfma_metric);
  for (const auto &[name, total] : totals)
    if (is_tensor_metric(name))
      v.tensor_flops += total; // already FLOPs: the op counters count an FMA as 2
  return v;
}

int counter_session::passes() const {
  return m_impl->passes;
}

const std::vector<std::string> &counter_session::metrics() const {
  return m_impl->metrics;
}

const std::string &counter_session::chip() const {
  return m_impl->chip;
}

} // namespace roofline::cuda::detail
