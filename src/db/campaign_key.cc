#include "db/campaign_key.h"

#include <charconv>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace latte {
namespace {

// The flags of the command texts Latte wrote, in the order it wrote them (the values of an import
// may hold spaces: a value runs up to the next flag).
constexpr std::string_view kProfileFlags[] = {"--backend", "--num_threads", "--precision",
                                              "--warmup_runs", "--num_runs", "--min_secs"};
constexpr std::string_view kImportFlags[] = {"--format", "--device", "--backend", "--backend-version",
                                             "--num_threads", "--precision"};
constexpr std::string_view kGraphContextSuffix = " --graph-context";

// The values of `flags`, in order, from `text` (which starts right after the program's words);
// nullopt when a flag is missing or out of order.
template <std::size_t N>
std::optional<std::vector<std::string>> FlagValues(std::string_view text, const std::string_view (&flags)[N]) {
  std::vector<std::string> values;
  for (std::size_t i = 0; i < N; ++i) {
    const std::string lead = std::string(i == 0 ? "" : " ") + std::string(flags[i]) + " ";
    if (text.substr(0, lead.size()) != lead) return std::nullopt;
    text.remove_prefix(lead.size());
    std::size_t end = text.size();
    if (i + 1 < N) {
      end = text.find(" " + std::string(flags[i + 1]) + " ");
      if (end == std::string_view::npos) return std::nullopt;
    }
    values.emplace_back(text.substr(0, end));
    text.remove_prefix(end);
  }
  return values;
}

template <typename T>
std::optional<T> Number(const std::string& text) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// A stored JSON text (a key's space or settings); discarded when it does not parse.
nlohmann::json ParseJson(const std::string& text) { return nlohmann::json::parse(text, nullptr, false); }

}  // namespace

std::string MeasureSettings(int warmup_runs, int num_runs, double min_secs) {
  return nlohmann::json{{"warmup_runs", warmup_runs}, {"num_runs", num_runs}, {"min_secs", min_secs}}.dump();
}

std::string LabCampaignSettings(const std::string& measure_settings, const std::string& device,
                                const std::string& device_class) {
  nlohmann::json settings = ParseJson(measure_settings);
  if (!settings.is_object()) settings = nlohmann::json::object();
  settings["device"] = device;
  settings["device_class"] = device_class;
  return settings.dump();
}

std::string CampaignKey::Strategy() const {
  const nlohmann::json json = ParseJson(space);
  if (!json.is_object()) return "";
  for (const char* name : {"strategy", "graphs"}) {
    if (json.contains(name) && json[name].is_string()) return json[name].get<std::string>();
  }
  return "";
}

std::optional<std::int64_t> CampaignKey::Seed() const {
  const nlohmann::json json = ParseJson(space);
  if (!json.is_object() || !json.contains("seed") || !json["seed"].is_number_integer()) return std::nullopt;
  return json["seed"].is_number_unsigned() ? static_cast<std::int64_t>(json["seed"].get<std::uint64_t>())
                                           : json["seed"].get<std::int64_t>();
}

std::string CampaignKey::CommandText() const {
  const nlohmann::json s = ParseJson(settings);
  auto get = [&](const char* name) -> nlohmann::json { return s.is_object() && s.contains(name) ? s[name] : nullptr; };
  auto text = [&](const char* name) { return get(name).is_string() ? get(name).get<std::string>() : std::string(); };
  if (kind == kImportCampaign) {
    return fmt::format("import --format {} --device {} --backend {} --backend-version {} --num_threads {} --precision {}",
                       text("format"), text("device"), backend, text("backend_version"), threads, precision);
  }
  const nlohmann::json warmup = get("warmup_runs"), runs = get("num_runs"), min_secs = get("min_secs");
  // A lab campaign's text names its device: campaigns are unique by (command, space) too.
  const std::string lab =
      kind == kLabCampaign ? fmt::format("lab work --device-class {} --device {} ", text("device_class"), text("device"))
                           : std::string("profile ");
  std::string command = fmt::format(
      "latte {}--backend {} --num_threads {} --precision {} --warmup_runs {} --num_runs {} --min_secs {}", lab, backend,
      threads, precision, warmup.is_number() ? warmup.get<int>() : 0, runs.is_number() ? runs.get<int>() : 0,
      min_secs.is_number() ? min_secs.get<double>() : 0.0);
  if (kind == kGraphContextCampaign) command += kGraphContextSuffix;
  return command;
}

std::optional<CampaignKey> ParseCampaignCommand(std::string_view command, std::string_view space) {
  CampaignKey key;
  key.space = std::string(space);
  constexpr std::string_view kProfile = "latte profile ", kImport = "import ";
  if (command.substr(0, kImport.size()) == kImport) {
    auto values = FlagValues(command.substr(kImport.size()), kImportFlags);
    if (!values) return std::nullopt;
    const std::optional<int> threads = Number<int>((*values)[4]);
    if (!threads) return std::nullopt;
    key.kind = kImportCampaign;
    key.backend = (*values)[2];
    key.threads = *threads;
    key.precision = (*values)[5];
    key.settings =
        nlohmann::json{{"format", (*values)[0]}, {"device", (*values)[1]}, {"backend_version", (*values)[3]}}.dump();
    return key;
  }
  if (command.substr(0, kProfile.size()) != kProfile) return std::nullopt;
  command.remove_prefix(kProfile.size());
  key.kind = kProfileCampaign;
  if (command.size() >= kGraphContextSuffix.size() &&
      command.substr(command.size() - kGraphContextSuffix.size()) == kGraphContextSuffix) {
    key.kind = kGraphContextCampaign;
    command.remove_suffix(kGraphContextSuffix.size());
  }
  auto values = FlagValues(command, kProfileFlags);
  if (!values) return std::nullopt;
  const std::optional<int> threads = Number<int>((*values)[1]), warmup = Number<int>((*values)[3]),
                           runs = Number<int>((*values)[4]);
  const std::optional<double> min_secs = Number<double>((*values)[5]);
  if (!threads || !warmup || !runs || !min_secs) return std::nullopt;
  key.backend = (*values)[0];
  key.threads = *threads;
  key.precision = (*values)[2];
  key.settings = MeasureSettings(*warmup, *runs, *min_secs);
  return key;
}

}  // namespace latte
