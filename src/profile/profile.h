#pragma once
// `latte profile` as a library call: sample the config space, open the store, find or create
// the campaign (its identity is the command and the space, so the same command resumes it),
// and run the campaign with a store writer and a progress report.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "db/campaign_key.h"
#include "profile/campaign.h"
#include "profile/space.h"

namespace latte {

class BackendRegistry;

struct ProfileOptions {
  SamplerConfig sampler;
  CampaignOptions campaign;
  std::string db;                 // store file
  std::size_t batch_size = 16;    // measurements per store transaction
  double flush_secs = 2;          // at most this long between store transactions
  bool tty = false;               // progress as a redrawn bar (a terminal) or plain lines
  std::size_t progress_every = 25;
  double progress_secs = 10;
};

struct ProfileResult {
  std::int64_t campaign_id = 0;
  std::string command;             // the campaign's identity, with `space`
  std::string space;
  std::vector<std::string> notes;  // the sampler's
  CampaignSummary summary;
  std::size_t stored = 0;          // measurement rows written by this run
  /// Kernels this run found unsupported, with why (all of them; the summary prints the first few).
  std::vector<std::pair<std::string, std::string>> unsupported;
};

/// The store used when no --db is given (db/store.h's default; here so the CLI need not include it).
std::string DefaultProfileDb();

/// The key a campaign of this `kind` (db/campaign_key.h) over `space` is stored and resumed by:
/// backend, threads, precision and the measurement settings (the budget does not matter).
CampaignKey CampaignKeyOf(const CampaignOptions& options, std::string_view kind, std::string space);


/// Runs a whole profile. Progress goes to `log`. Errors name the file (model, store) involved.
Expected<ProfileResult> RunProfile(const ProfileOptions& options, const BackendRegistry& registry, std::ostream& log);

}  // namespace latte
