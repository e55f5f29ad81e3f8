// `latte bench MODEL`: whole-model latency under the measurement protocol, like TFLite's
// benchmark_model (and with its flag names).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/file.h"
#include "report/bench_view.h"
#include "report/inspect_view.h"
#include "run/benchmark.h"

namespace latte::cli {

void AddBenchCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string model, backend = "xnnpack", fallback, format = "text", trace, precision = "fp32";
    int num_threads = 1;
    MeasureOptions measure;
    bool op_profiling = false;
    ModelInputFlags inputs;
    std::vector<std::string> calibration_data;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure a model's latency on a backend (like TFLite's benchmark_model)");
  cmd->add_option("model", flags->model, "Model file (.tflite or .onnx)")->required();
  cmd->add_option("--backend", flags->backend, "Backend that runs every node")->capture_default_str();
  cmd->add_option("--fallback", flags->fallback, "Backend for nodes the chosen one cannot run (default: none, an error)");
  cmd->add_option("--num-threads,--num_threads", flags->num_threads, "Threads")->check(IntegerIn(1, kMaxThreads))->capture_default_str();
  AddProtocolFlags(*cmd, flags->measure);
  cmd->add_option("--precision", flags->precision,
                  "Precision: fp32, bf16 (onednn on a CPU with AVX-512 BF16) or int8 (xnnpack, onednn or ort: the model quantized post-training; nodes without an int8 operator stay fp32); outputs compared with fp32")
      ->check(PrecisionIn({Precision::kFp32, Precision::kBf16, Precision::kInt8}, "bench"))
      ->capture_default_str();
  cmd->add_flag("--enable-op-profiling,--enable_op_profiling", flags->op_profiling, "Per-node times: Run Order and Summary by node type");
  cmd->add_option("--format", flags->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->add_option("--trace", flags->trace, "Write a Chrome trace (Perfetto) of an average run to FILE (implies op profiling)");
  AddModelInputFlags(*cmd, flags->inputs);
  AddCalibrationDataFlag(*cmd, flags->calibration_data);
  OnRun(cmd, result, [flags]() -> Status {
    BenchOptions options;
    options.placement.default_backend = flags->backend;
    options.placement.fallback = flags->fallback;
    options.run.num_threads = flags->num_threads;
    LATTE_ASSIGN_OR_RETURN(options.run.precision, ParsePrecision(flags->precision));
    LATTE_ASSIGN_OR_RETURN(options.run.calibration, ReadCalibrationData(flags->calibration_data,
                                                                        options.run.precision == Precision::kInt8, flags->precision));
    options.measure = flags->measure;
    options.op_profiling = flags->op_profiling || !flags->trace.empty();
    // Before measuring.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->trace));
    if (Status s = options.measure.Validate(); !s.ok()) {
      return s;
    }
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    if (!flags->fallback.empty()) {  // otherwise only a node that needs it would find out
      if (Status s = CheckBackendName(registry, "--fallback", flags->fallback); !s.ok()) {
        return s;
      }
    }
    Graph graph;
    LATTE_RETURN_IF_ERROR(ImportForCommand(flags->model, flags->inputs, graph));
    auto result = BenchmarkGraph(graph, options, registry);
    if (!result.ok()) {
      return result.status().WithContext(flags->model);
    }
    std::error_code ec;
    const auto model_bytes = static_cast<long long>(std::filesystem::file_size(flags->model, ec));
    BenchView view(graph, *result, options, flags->model, ec ? 0 : model_bytes);
    if (!flags->trace.empty()) {
      if (Status written = WriteFileAtomically(flags->trace, DumpJson(view.Trace()) + "\n"); !written.ok()) {
        return written.WithContext(flags->trace);
      }
    }
    if (flags->format == "json") std::cout << DumpJson(view.Json()) << "\n";
    else std::cout << view.Text();
    return Status::Ok();
  });
}

}  // namespace latte::cli
