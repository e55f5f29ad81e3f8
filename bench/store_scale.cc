// The store at a lab's size (issue 24's aim: 1,000,000 measurements stored; `fit` reads one
// device's share in <= 10 s). Fills an empty store with ROWS synthetic measurements spread over
// DEVICES devices (each device measured the same conv kernels, in a campaign of its own, with two
// drift reference readings), then times READS times what `latte fit --device KEY` reads before it
// fits: Store::OpenReadOnly, QueryMeasurements with fit's filter (backend and device), the graph
// layers of that configuration and the reference readings of its campaigns, through the store's
// own read path. Prints figures; asserts nothing.
//
// The fill is not what is measured: on a server it goes through COPY (kernels, then measurements)
// after the store made its schema, devices, backend and campaigns; in a SQLite file through
// Store::InsertMeasurements in transactions of 50,000 rows.
//
// Usage: store_scale DB [ROWS=1000000] [DEVICES=5] [READS=3]
//   DB: a SQLite file that does not exist yet, or an empty PostgreSQL database's URL.
#include <libpq-fe.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/device.h"
#include "db/campaign_key.h"
#include "db/server_url.h"
#include "db/store.h"
#include "ir/kernel_params.h"

using namespace latte;

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

long PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

// Kernel i of the synthetic space: distinct 3x3 convs over sizes, channels and strides.
Kernel Conv(int i) {
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  ConvKernelParams p;
  p.ih = 4 + i % 113, p.iw = 4 + i / 113 % 101;
  p.ic = 8 + 8 * (i / 11413 % 8), p.oc = 8 + 8 * (i / 91304 % 64);
  p.kh = p.kw = 3;
  p.dh = p.dw = 1;
  p.pt = p.pl = p.pb = p.pr = 1;
  p.bias = 1;
  WriteParams(p, kernel);
  return kernel;
}

// A measurement's figures, different per kernel and device (the read must parse real numbers).
Stats Figures(int kernel, int device) {
  Stats s;
  s.n = 50;
  s.p50 = 10.0 + kernel * 0.0173 + device * 1.37;
  s.p0 = s.p50 * 0.93, s.p10 = s.p50 * 0.97, s.p90 = s.p50 * 1.04, s.p99 = s.p50 * 1.11, s.p100 = s.p50 * 1.3;
  s.mean = s.p50 * 1.01, s.std = s.p50 * 0.021;
  return s;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}

// COPY of `lines` (tab-separated, newline-ended) into `table(columns)` on a new connection.
Status CopyInto(const std::string& url, const std::string& table, const std::string& columns,
                const std::function<bool(std::string&)>& next_chunk) {
  PGconn* conn = PQconnectdb(url.c_str());
  auto fail = [&](const std::string& what) {
    Status status = IoError(MaskPassword(url) + ": " + what + ": " + PQerrorMessage(conn));
    PQfinish(conn);
    return status;
  };
  if (PQstatus(conn) != CONNECTION_OK) return fail("connect");
  PGresult* result = PQexec(conn, fmt::format("COPY {}({}) FROM STDIN", table, columns).c_str());
  const bool started = PQresultStatus(result) == PGRES_COPY_IN;
  PQclear(result);
  if (!started) return fail("COPY " + table);
  std::string chunk;
  while (next_chunk(chunk)) {
    if (PQputCopyData(conn, chunk.data(), static_cast<int>(chunk.size())) != 1) return fail("COPY data");
    chunk.clear();
  }
  if (PQputCopyEnd(conn, nullptr) != 1) return fail("COPY end");
  result = PQgetResult(conn);
  const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
  PQclear(result);
  if (!ok) return fail("COPY " + table);
  PQfinish(conn);
  return Status::Ok();
}

std::string ParamsJson(const Kernel& kernel) {  // as the store writes a kernel's params
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : kernel.params) params[name] = value;
  return params.dump();
}

std::string Sql(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  PGresult* result = PQexec(conn, sql.c_str());
  std::string text = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) > 0 ? PQgetvalue(result, 0, 0) : "";
  PQclear(result);
  PQfinish(conn);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_scale DB [ROWS=1000000] [DEVICES=5] [READS=3]\n");
    return 2;
  }
  const std::string db = argv[1];
  const int rows = argc > 2 ? std::atoi(argv[2]) : 1000000;
  const int devices = argc > 3 ? std::atoi(argv[3]) : 5;
  const int reads = argc > 4 ? std::atoi(argv[4]) : 3;
  if (rows < devices || devices < 1 || reads < 1) return Fail(InvalidInput("ROWS >= DEVICES >= 1, READS >= 1"));
  const bool server = IsServerUrl(db);
  if (!server && std::filesystem::exists(db)) return Fail(InvalidInput(db + ": exists; give a new file"));
  const int per_device = rows / devices;

  // Schema, devices, backend and campaigns through the store, as workers make them.
  const double fill_start = Now();
  std::vector<std::int64_t> device_ids, campaign_ids;
  std::int64_t backend_id = 0;
  {
    auto store = Store::Open(db);
    if (!store.ok()) return Fail(store.status());
    const DeviceFingerprint here = ReadDeviceFingerprint();
    for (int d = 1; d <= devices; ++d) {
      DeviceInfo device = DeviceInfoFrom(here);  // a real fingerprint's size, under a lab's name
      nlohmann::json fingerprint = nlohmann::json::parse(device.fingerprint_json);
      fingerprint["name"] = fmt::format("bench-dev-{}", d);
      fingerprint["hardware_key"] = device.key;
      device = {fmt::format("bench-dev-{}", d), fmt::format("bench-dev-{}: {}", d, device.description), fingerprint.dump()};
      auto id = store->UpsertDevice(device);
      if (!id.ok()) return Fail(id.status());
      device_ids.push_back(*id);
      auto campaign = store->FindOrCreateCampaign(
          {std::string(kLabCampaign), "xnnpack", 1, "fp32", LabCampaignSettings(MeasureSettings(1, 50, 1.0), device.key, "bench"),
           "{\"store_scale\":" + std::to_string(per_device) + "}"},
          per_device);
      if (!campaign.ok()) return Fail(campaign.status());
      campaign_ids.push_back(campaign->id);
      for (double p50 : {41.5, 42.25}) {
        if (Status s = store->RecordReference({campaign->id, "", p50 + d, Conv(0).Key()}); !s.ok()) return Fail(s);
      }
    }
    auto backend = store->UpsertBackend({"xnnpack", "bench", 1, "fp32"});
    if (!backend.ok()) return Fail(backend.status());
    backend_id = *backend;

    if (!server) {
      constexpr int kBatch = 50000;
      for (int d = 0; d < devices; ++d) {
        for (int first = 0; first < per_device; first += kBatch) {
          std::vector<MeasurementRecord> records;
          for (int i = first; i < first + kBatch && i < per_device; ++i) {
            records.push_back({Conv(i), Figures(i, d), "measured", campaign_ids[static_cast<std::size_t>(d)], ""});
          }
          auto inserted = store->InsertMeasurements(device_ids[static_cast<std::size_t>(d)], backend_id, records);
          if (!inserted.ok()) return Fail(inserted.status());
        }
      }
    }
  }
  if (server) {
    int next = 0;
    Status copied = CopyInto(db, "kernels", "key, kind, params, dtype", [&](std::string& chunk) {
      for (; next < per_device && chunk.size() < (1 << 20); ++next) {
        const Kernel kernel = Conv(next);
        chunk += kernel.Key() + "\t" + kernel.Kind() + "\t" + ParamsJson(kernel) + "\t" +
                 std::string(DataTypeName(kernel.dtype)) + "\n";
      }
      return !chunk.empty();
    });
    if (!copied.ok()) return Fail(copied);
    // Kernel ids by key, in the order the kernels were generated.
    const std::string first_id = Sql(db, "SELECT min(id) FROM kernels");
    const std::int64_t base = std::atoll(first_id.c_str());
    long long row = 0;
    copied = CopyInto(db, "measurements",
                      "device_id, backend_id, kernel_id, campaign_id, n, p0, p10, p50, p90, p100, mean, std, time, "
                      "source, p99",
                      [&](std::string& chunk) {
                        for (; row < static_cast<long long>(per_device) * devices && chunk.size() < (1 << 20); ++row) {
                          const int d = static_cast<int>(row / per_device), i = static_cast<int>(row % per_device);
                          const Stats s = Figures(i, d);
                          chunk += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t2026-11-27T03:00:00.000Z\tmeasured\t{}\n",
                                               device_ids[static_cast<std::size_t>(d)], backend_id, base + i,
                                               campaign_ids[static_cast<std::size_t>(d)], s.n, s.p0, s.p10, s.p50,
                                               s.p90, s.p100, s.mean, s.std, s.p99);
                        }
                        return !chunk.empty();
                      });
    if (!copied.ok()) return Fail(copied);
    Sql(db, "ANALYZE");  // what autovacuum does after a bulk load
  }
  const double fill_secs = Now() - fill_start;
  std::string size;
  if (server) {
    size = Sql(db, "SELECT pg_size_pretty(pg_database_size(current_database()))");
  } else {
    size = fmt::format("{:.0f} MB", static_cast<double>(std::filesystem::file_size(db)) / 1e6);
  }
  std::printf("%s: %d measurements (%d devices x %d kernels) stored in %.1f s = %.0f rows/s (%s)\n",
              MaskPassword(db).c_str(), per_device * devices, devices, per_device, fill_secs,
              per_device * devices / fill_secs, size.c_str());

  // What `latte fit --backend xnnpack --device KEY` reads, for the device in the middle.
  const std::string device = fmt::format("bench-dev-{}", devices / 2 + 1);
  for (int r = 1; r <= reads; ++r) {
    const double start = Now();
    auto store = Store::OpenReadOnly(db);
    if (!store.ok()) return Fail(store.status());
    MeasurementFilter filter;
    filter.backend = "xnnpack";
    filter.device = device;
    std::vector<DamagedMeasurement> damaged;
    auto measurements = store->QueryMeasurements(filter, &damaged);
    if (!measurements.ok()) return Fail(measurements.status());
    const double query_secs = Now() - start;
    auto layers = store->QueryGraphLayers(filter);
    if (!layers.ok()) return Fail(layers.status());
    std::set<std::int64_t> campaigns;
    for (const StoredMeasurement& m : *measurements) campaigns.insert(m.campaign.value_or(0));
    std::size_t references = 0;
    for (std::int64_t id : campaigns) {
      auto readings = store->ListReferences(id);
      if (!readings.ok()) return Fail(readings.status());
      references += readings->size();
    }
    const double secs = Now() - start;
    std::printf("read %d: %s's %zu measurements (%zu damaged), %zu graph layers, %zu reference readings in %.2f s "
                "(measurements %.2f s, %.0f rows/s); peak RSS %ld MB\n",
                r, device.c_str(), measurements->size(), damaged.size(), layers->size(), references, secs, query_secs,
                static_cast<double>(measurements->size()) / query_secs, PeakRssMb());
  }
  return 0;
}
