#pragma once
// The measurement store: one SQLite file (WAL, foreign keys, schema version with forward
// migrations), or a PostgreSQL database a lab of machines shares, holding devices, backends,
// kernels, measurements, unsupported kernels, campaigns and the drift reference. Both engines
// run the same SQL through db/sql_connection.h. Every write is one transaction, so nothing stored
// is ever lost to a crash, a kill -9 or a bad import; a retried campaign insert is a no-op, never
// a duplicate.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/stats.h"
#include "core/status.h"
#include "db/campaign_key.h"
#include "db/server_url.h"
#include "ir/cache_reuse.h"
#include "ir/kernel.h"

namespace latte {

namespace sql {
class Connection;
}  // namespace sql

/// The schema version this binary writes (PRAGMA user_version; on a server, the latte_schema
/// table). Older stores are migrated
/// forward when opened for writing (read as they are when opened read-only); newer ones are refused.
inline constexpr int kStoreSchemaVersion = 7;

/// `~/.cache/latte/latte.db` ($XDG_CACHE_HOME/latte/latte.db when that is set).
std::string DefaultStorePath();

struct StoreOptions {
  int busy_timeout_ms = 5000;  // how long a write waits for another process's transaction (a server: its lock)
  /// Tests only: build the schema up to this version instead of kStoreSchemaVersion (to test
  /// migrations from an older file).
  int schema_version = kStoreSchemaVersion;
};

/// A machine. `key` is unique: DeviceFingerprint::Key() for this host, or a name given on the
/// command line for an imported table ("v100").
struct DeviceInfo {
  std::string key;
  std::string description;       // DeviceFingerprint::Describe(), or the name again
  std::string fingerprint_json;  // the whole fingerprint as JSON; "{}" for an imported device
};
/// The DeviceInfo of a fingerprint read from this host.
DeviceInfo DeviceInfoFrom(const DeviceFingerprint& fingerprint);

/// A runtime configuration; (name, version, threads, precision) is unique.
struct BackendInfo {
  std::string name;               // "xnnpack", "tensorrt"
  std::string version;            // "" when unknown (an imported table)
  int threads = 0;                // 0 = unknown
  std::string precision = "fp32";  // fp32 | fp16 | int8
};

/// One measurement to insert. Stats are in microseconds; a statistic the source did not give
/// is NaN (stored as NULL), and n = 0 means the sample count is unknown. Stats::p99 is stored too.
struct MeasurementRecord {
  Kernel kernel;
  Stats stats;
  std::string source = "measured";      // "measured", "import:tensorrt-conv", ...
  std::optional<std::int64_t> campaign;  // id from FindOrCreateCampaign
  std::string time;                     // ISO 8601 UTC; empty = now
};

/// One stored measurement with everything it was measured on.
struct StoredMeasurement {
  std::int64_t id = 0;
  Kernel kernel;
  Stats stats;  // NaN where the source gave no figure (see MeasurementRecord)
  DeviceInfo device;
  BackendInfo backend;
  std::optional<std::int64_t> campaign;
  std::string time;
  std::string source;
};

/// A stored measurement whose figures cannot be times: a statistic that is not a number (text in
/// the column), infinite or negative, a sample count that is not a count, or no p50.
struct DamagedMeasurement {
  std::int64_t id = 0;  // its row in the measurements table
  std::string why;      // "p50 is not a number ('abc')"
};

/// Which measurements to return; an empty field matches everything.
struct MeasurementFilter {
  std::optional<std::string> backend = std::nullopt;    // BackendInfo::name
  std::optional<int> threads = std::nullopt;
  std::optional<std::string> precision = std::nullopt;
  std::optional<std::string> device = std::nullopt;     // DeviceInfo::key
  std::optional<std::string> kind = std::nullopt;       // Kernel::Kind(), e.g. "conv2d+relu"
  std::optional<std::int64_t> campaign = std::nullopt;
};

/// A profiling campaign (or an import): identified by its key.
struct CampaignInfo {
  std::int64_t id = 0;
  std::string command;  // the key as a command line (CampaignKey::CommandText), for people to read
  std::string space;    // JSON of the config space
  std::string created;  // ISO 8601 UTC
  std::int64_t planned = 0;
  std::int64_t done = 0;
  std::string status;   // "running", "done", "stopped", ...
  CampaignKey key;      // kind "" for a campaign whose identity could not be read (never resumed)
};

/// One measurement of the fixed reference kernel during a campaign (drift detection).
struct ReferenceMeasurement {
  std::int64_t campaign = 0;
  std::string time;
  double p50_us = 0;
  std::string kernel_key;
};

/// One layer of a graph measured inside the graph and alone, minutes apart at most (how packs
/// learn what a layer costs in a model beyond its time alone). Times in microseconds.
struct GraphLayerRecord {
  std::string graph;     // which graph of the campaign ("random-net 3")
  int layer = 0;         // index in execution order
  Kernel kernel;
  double in_graph_us = 0;  // the layer's nodes in the graph's per-node profile
  double alone_us = 0;     // the kernel alone under the campaigns' protocol (p50)
  LayerTraffic traffic;    // what it touches (inputs by producing layer)
  /// The whole graph's own layout changes per run (ONNX Runtime's reorders between its blocked and
  /// plain layouts; 0 on a backend without them), the same on each of its layers: what a fit sets
  /// against the bytes ir/nchwc_layout says the graph reorders. NaN: not recorded (before schema 7).
  double graph_layout_us = std::numeric_limits<double>::quiet_NaN();
  std::string time;        // ISO 8601 UTC; empty = now
};

/// A stored GraphLayerRecord with its campaign and configuration.
struct StoredGraphLayer {
  GraphLayerRecord record;
  std::int64_t campaign = 0;
  DeviceInfo device;
  BackendInfo backend;
};

/// The store. Not thread-safe (one per thread); many processes may share one file or server.
class Store {
 public:
  /// Opens or creates PATH (and its parent folders), migrates an older schema, checks integrity.
  /// PATH may name a PostgreSQL database instead (postgresql://..., postgres://... or libpq's
  /// key=value words; db/server_url.h): an empty one gets the schema, as a new file does.
  /// Errors name the file (or the URL, its password masked): "FILE: not a Latte database (...)",
  /// "FILE: database is locked by another process", "FILE: schema version N is newer than this
  /// latte (M)", "URL: cannot connect (...)".
  static Expected<Store> Open(const std::string& path, const StoreOptions& options = {});
  /// Opens an existing store for reading only: never creates, migrates or writes anything (the
  /// connection refuses writes; write methods fail as a Latte bug). A missing PATH is
  /// "FILE: no such database" (kNotFound), an empty file "FILE: not a Latte database (empty file)".
  /// An older schema is read as it is (what it lacks reads as absent: no p99, no graph layers).
  /// `options.schema_version` is ignored.
  static Expected<Store> OpenReadOnly(const std::string& path, const StoreOptions& options = {});

  Store(Store&& other) noexcept;
  Store& operator=(Store&& other) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  /// The file, or the server's URL with its password masked: what errors name.
  const std::string& path() const { return path_; }
  /// The schema version of the open store.
  Expected<int> SchemaVersion() const;

  /// Ids of a device, backend or kernel, inserting it when new.
  Expected<std::int64_t> UpsertDevice(const DeviceInfo& device);
  Expected<std::int64_t> UpsertBackend(const BackendInfo& backend);
  Expected<std::int64_t> UpsertKernel(const Kernel& kernel);

  /// Inserts all of `records` in ONE transaction (all or nothing). A record whose (campaign,
  /// kernel) is already stored is skipped, so retrying after a crash never duplicates. Returns
  /// how many rows were actually inserted.
  Expected<std::size_t> InsertMeasurements(std::int64_t device_id, std::int64_t backend_id,
                                           std::span<const MeasurementRecord> records);
  /// Records that `backend_id` cannot run `kernel` on `device_id`, and why (idempotent per campaign).
  Status RecordUnsupported(std::int64_t device_id, std::int64_t backend_id, const Kernel& kernel, std::string_view why,
                           std::optional<std::int64_t> campaign = std::nullopt);

  /// The campaign with this key, created with status "running" when new: resuming a campaign is
  /// finding its key again.
  Expected<CampaignInfo> FindOrCreateCampaign(const CampaignKey& key, std::int64_t planned = 0);
  /// Keys (Kernel::Key()) already measured or recorded unsupported in the campaign: what a
  /// resumed campaign skips.
  Expected<std::set<std::string>> CampaignDoneKeys(std::int64_t campaign_id) const;
  /// Updates a campaign's counters and status.
  Status UpdateCampaign(std::int64_t campaign_id, std::int64_t done, const std::string& status);
  Expected<std::vector<CampaignInfo>> ListCampaigns() const;

  /// Stores one reading of the reference kernel in a campaign.
  Status RecordReference(const ReferenceMeasurement& reference);
  Expected<std::vector<ReferenceMeasurement>> ListReferences(std::int64_t campaign_id) const;

  /// Stores the layers of one or more graphs in ONE transaction; a (campaign, graph, layer) already
  /// stored is skipped. Returns how many rows were inserted. Fails on a schema before version 3.
  Expected<std::size_t> InsertGraphLayers(std::int64_t device_id, std::int64_t backend_id, std::int64_t campaign_id,
                                          std::span<const GraphLayerRecord> layers);
  /// Graph layers matching `filter` (kind and campaign apply too), by campaign, graph and layer.
  /// Empty on a schema before version 3. A damaged row fails naming the file and the row.
  Expected<std::vector<StoredGraphLayer>> QueryGraphLayers(const MeasurementFilter& filter = {}) const;
  /// The graphs of a campaign with layers stored: what a resumed campaign skips.
  Expected<std::set<std::string>> CampaignGraphs(std::int64_t campaign_id) const;
  /// Measurements matching `filter`, oldest first. A damaged one (see DamagedMeasurement) fails
  /// as "FILE: measurement ID: why", unless `damaged` is given: then it is left out and listed there.
  /// A p50 of 0 is returned as stored (an imported table may hold one): it is a number, if no time.
  Expected<std::vector<StoredMeasurement>> QueryMeasurements(const MeasurementFilter& filter = {},
                                                            std::vector<DamagedMeasurement>* damaged = nullptr) const;
  /// (kernel, why) recorded unsupported, filtered like measurements (kind and campaign apply too).
  Expected<std::vector<std::pair<Kernel, std::string>>> QueryUnsupported(const MeasurementFilter& filter = {}) const;
  Expected<std::vector<DeviceInfo>> ListDevices() const;
  Expected<std::vector<BackendInfo>> ListBackends() const;

  /// Which lock a write transaction takes: the store's one write lock (writers take turns), or on a
  /// server only the rows it touches (the lab's jobs: workers claim and complete them side by side;
  /// a SQLite file has one write lock either way).
  enum class TransactionLock { kStore, kRows };
  /// Runs `body` inside one write transaction (BEGIN [IMMEDIATE] ... COMMIT); any failure rolls
  /// everything back. Nested calls join the outer transaction.
  Status Transaction(const std::function<Status()>& body, TransactionLock lock = TransactionLock::kStore);

  /// True when the store is a PostgreSQL server's database rather than a file.
  bool OnServer() const { return IsServerUrl(path_); }

 private:
  friend class LabQueue;    // db/lab_queue.h: the lab's jobs, written in the store's SQL seam
  friend class RunHistory;  // db/run_history.h: the runs of validate and compare, likewise
  explicit Store(std::unique_ptr<sql::Connection> db);
  static Expected<Store> OpenDatabase(const std::string& target, const StoreOptions& options, bool read_only);
  std::unique_ptr<sql::Connection> db_;
  std::string path_;
  bool read_only_ = false;
  int transaction_depth_ = 0;
  int version_ = 0;  // schema version of the open store: writes adapt to an older schema (tests)
};

}  // namespace latte
