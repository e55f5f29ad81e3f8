// Store insert throughput: measurements per second when inserted in batches of 1, 100 and 10000
// (one transaction each, as the profiler does). Prints figures; asserts nothing about time.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "db/store.h"
#include "ir/kernel_params.h"

namespace {

latte::Kernel Conv(int i) {
  latte::Kernel kernel;
  kernel.op = latte::OpKind::kConv2D;
  latte::ConvKernelParams p;
  p.ih = 8 + i % 97, p.iw = 8 + i / 97 % 89, p.ic = 16, p.oc = 16 + i / 8633;
  p.kh = p.kw = 3;
  p.dh = p.dw = 1;
  p.pt = p.pl = p.pb = p.pr = 1;
  p.bias = 1;
  latte::WriteParams(p, kernel);
  return kernel;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : std::filesystem::temp_directory_path() / "latte-db-insert";
  std::filesystem::remove_all(dir);
  std::printf("%-10s %10s %12s %14s\n", "batch", "rows", "seconds", "rows/second");
  for (int batch : {1, 100, 10000}) {
    const std::string path = (dir / ("batch" + std::to_string(batch) + ".db")).string();
    auto store = latte::Store::Open(path);
    if (!store.ok()) {
      std::fprintf(stderr, "error: %s\n", store.status().message().c_str());
      return 2;
    }
    auto device = store->UpsertDevice({"bench", "bench", "{}"});
    auto backend = store->UpsertBackend({"xnnpack", "bench", 1, "fp32"});
    auto campaign = store->FindOrCreateCampaign({std::string(latte::kProfileCampaign), "xnnpack", 1, "fp32",
                                                 latte::MeasureSettings(1, 50, 1.0), std::to_string(batch)});
    if (!device.ok() || !backend.ok() || !campaign.ok()) return 1;
    const int total = batch == 1 ? 500 : 50000;  // batch 1 pays one fsync a row
    latte::Stats stats;
    stats.n = 50;
    stats.p0 = stats.p10 = stats.p50 = stats.p90 = stats.p99 = stats.p100 = stats.mean = 10;
    auto start = std::chrono::steady_clock::now();
    for (int first = 0; first < total; first += batch) {
      std::vector<latte::MeasurementRecord> records;
      for (int i = first; i < first + batch && i < total; ++i) {
        records.push_back({Conv(i), stats, "measured", campaign->id, ""});
      }
      auto inserted = store->InsertMeasurements(*device, *backend, records);
      if (!inserted.ok()) {
        std::fprintf(stderr, "error: %s\n", inserted.status().message().c_str());
        return 2;
      }
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-10d %10d %12.3f %14.0f\n", batch, total, seconds, total / seconds);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
