#include "report/pareto_view.h"

#include <fmt/format.h>

#include "report/html_report.h"
#include "report/svg_plot.h"
#include "report/text_table.h"

namespace latte {
namespace {

std::string Ms(double ms) { return fmt::format("{:.3f}", ms); }
std::string Kb(double kb) { return WithThousands(static_cast<long long>(kb + 0.5)); }
std::string Pct(double predicted, double measured) {
  return measured > 0 ? fmt::format("{:+.1f}%", 100.0 * (predicted - measured) / measured) : "n/a";
}

// "0110" — one digit per op list entry, in op list order (entry 0 first).
std::string Digits(const std::vector<int>& digits) {
  std::string out;
  for (int d : digits) out += d < 10 ? static_cast<char>('0' + d) : '?';
  return out;
}

// An id as JSON: a number when it fits in 64 bits (the on-device profilers' dumps have integers),
// else its decimal text (index mode on a large model has more assignments than that).
nlohmann::json IdJson(const std::string& id) {
  if (id.size() < 20) return std::stoull(id);
  return id;
}

// 1 - cosine: tiny values in scientific notation, 0 exactly as 0.
std::string DriftText(double drift) { return drift == 0 ? "0" : fmt::format("{:.2e}", drift); }

std::string RoleOf(const ParetoResult& r, const std::string& id) {
  for (const ParetoPoint& ref : r.references)
    if (ref.id == id) return "all-" + r.backends[static_cast<std::size_t>(ref.digits.at(0))];
  return "";
}

}  // namespace

std::string ParetoView::Text() const {
  const ParetoResult& r = result_;
  std::string out;
  if (!r.machine_note.empty()) out += "note: " + r.machine_note + "\n";
  out += fmt::format("op list ({} mode, {} entries; digit i of an assignment is entry i's backend):\n",
                     r.ops.mode == OpListMode::kName ? "name" : "index", r.ops.keys.size());
  for (std::size_t i = 0; i < r.ops.keys.size(); ++i) out += fmt::format("  {:>3}  {}\n", i, r.ops.keys[i]);
  out += "backends:";
  for (std::size_t b = 0; b < r.backends.size(); ++b)
    out += fmt::format(" {}={}{}", b, r.backends[b], b == 0 ? " (fallback)" : "");
  out += "\n";
  out += fmt::format("search: {}, {} assignments evaluated in {:.2f} s (node memory measured in {:.2f} s)\n", r.method,
                     r.evaluated.size() + r.incomplete, r.search_secs, r.node_memory_secs);
  const bool drift = r.drift.measured;
  if (drift)
    out += fmt::format(
        "drift: the outputs' 1 - cosine against fp32, estimated as the sum of each op's run int8 alone "
        "({} int8 runs in {:.2f} s); the front minimizes time, memory and drift\n",
        r.drift.runs, r.drift_secs);

  TextTable front({{"id", TextTable::kRight}, {"assignment"}, {"pred ms", TextTable::kRight},
                   {"pred KB", TextTable::kRight}, {"prepared KB", TextTable::kRight},
                   {"activations KB", TextTable::kRight}, {"conversions", TextTable::kRight},
                   {"fallbacks", TextTable::kRight}});
  if (drift) {
    front.AddColumn("int8 nodes", TextTable::kRight);
    front.AddColumn("est drift", TextTable::kRight);
  }
  front.AddColumn("note");
  auto add = [&](const ParetoPoint& p, const std::string& note) {
    std::vector<std::string> row = {
        p.id, Digits(p.digits), Ms(p.cost.time_ms), Kb(p.cost.memory_kb()), Kb(p.cost.prepared_kb),
        Kb(p.cost.activations_kb),
        p.cost.conversions ? fmt::format("{} ({} ms)", p.cost.conversions, Ms(p.cost.conversion_ms)) : "0",
        std::to_string(p.cost.fallbacks)};
    if (drift) {
      row.push_back(std::to_string(p.cost.int8_nodes));
      row.push_back(DriftText(p.drift));
    }
    row.push_back(note);
    front.AddRow(row);
  };
  for (const ParetoPoint& p : r.front) add(p, RoleOf(r, p.id));
  if (!r.references.empty()) front.AddRule();
  for (const ParetoPoint& p : r.references) add(p, RoleOf(r, p.id) + " (reference)");
  out += fmt::format("\npredicted front: {} assignment(s)\n", r.front.size());
  out += front.Render();

  if (r.incomplete > 0 || !r.incomplete_examples.empty()) {
    out += fmt::format("\n{} assignment(s) left out: a kernel their backend's pack cannot predict, another's can\n",
                       r.incomplete);
    for (const std::string& e : r.incomplete_examples) out += "  e.g. " + e + "\n";
  }
  if (!r.never_predicted.empty()) {
    out += fmt::format("\n{} node(s) no pack predicts, NOT in any time (the same for every assignment):\n",
                       r.never_predicted.size());
    std::size_t shown = 0;
    for (const auto& [node, why] : r.never_predicted) {
      if (++shown > 10) {
        out += fmt::format("  ... and {} more (see --format json)\n", r.never_predicted.size() - 10);
        break;
      }
      out += "  " + node + ": " + why + "\n";
    }
  }

  if (!r.verify.empty()) {
    TextTable v({{"id", TextTable::kRight}, {"role"}, {"pred ms", TextTable::kRight}, {"meas ms", TextTable::kRight},
                 {"err", TextTable::kRight}, {"pred KB", TextTable::kRight}, {"meas KB", TextTable::kRight},
                 {"err", TextTable::kRight}, {"peak RSS KB", TextTable::kRight}});
    if (drift) {
      v.AddColumn("int8 nodes", TextTable::kRight);
      v.AddColumn("est drift", TextTable::kRight);
      v.AddColumn("meas drift", TextTable::kRight);
    }
    v.AddColumn("note");
    for (const VerifiedPoint& p : r.verify) {
      std::vector<std::string> row;
      if (!p.ok) {
        row = {p.id, p.role, Ms(p.predicted_time_ms), "-", "-", Kb(p.predicted_memory_kb), "-", "-", "-"};
        if (drift) row.insert(row.end(), {"-", DriftText(p.predicted_drift), "-"});
        row.push_back("did not run: " + p.why);
        v.AddRow(row);
        continue;
      }
      row = {p.id, p.role, Ms(p.predicted_time_ms), Ms(p.measured_time_ms), Pct(p.predicted_time_ms, p.measured_time_ms),
             Kb(p.predicted_memory_kb), Kb(p.measured_memory_kb), Pct(p.predicted_memory_kb, p.measured_memory_kb),
             WithThousands(p.peak_rss_kb)};
      if (drift)
        row.insert(row.end(), {std::to_string(p.int8_nodes), DriftText(p.predicted_drift),
                               p.drift_measured ? DriftText(p.measured_drift) : "0 (fp32)"});
      row.push_back(p.noisy ? "noisy" : "");
      v.AddRow(row);
    }
    out += "\nverified (p50 of the bench protocol; memory: the peak resident set the run adds):\n" + v.Render();
  }
  return out;
}

nlohmann::json ParetoView::Json() const {
  const ParetoResult& r = result_;
  nlohmann::json solutions = nlohmann::json::array(), configs = nlohmann::json::object();
  for (const ParetoPoint& p : r.evaluated) {
    solutions.push_back({{"id", IdJson(p.id)},
                         {"time", p.cost.time_ms},
                         {"memory", p.cost.memory_kb()},
                         {"prepared", p.cost.prepared_kb},
                         {"activations", p.cost.activations_kb},
                         {"conversion_time", p.cost.conversion_ms},
                         {"fallbacks", p.cost.fallbacks},
                         {"int8_nodes", p.cost.int8_nodes},
                         {"drift", p.drift}});
    configs[p.id] = AssignmentText(r.ops, p.digits, r.backends);
  }
  nlohmann::json front = nlohmann::json::array();
  for (const ParetoPoint& p : r.front) front.push_back(IdJson(p.id));
  nlohmann::json references = nlohmann::json::object();
  for (const ParetoPoint& p : r.references) {
    references[RoleOf(r, p.id)] = {
        {"id", IdJson(p.id)}, {"time", p.cost.time_ms}, {"memory", p.cost.memory_kb()}, {"drift", p.drift}};
    configs[p.id] = AssignmentText(r.ops, p.digits, r.backends);
  }
  nlohmann::json verify = nlohmann::json::array();
  for (const VerifiedPoint& p : r.verify) {
    nlohmann::json v = {{"id", IdJson(p.id)},       {"role", p.role}, {"predicted_time", p.predicted_time_ms},
                        {"predicted_memory", p.predicted_memory_kb}, {"predicted_drift", p.predicted_drift},
                        {"ok", p.ok}};
    if (p.ok) {
      v["int8_nodes"] = p.int8_nodes;
      v["measured_drift"] = p.drift_measured ? nlohmann::json(p.measured_drift) : nlohmann::json(0.0);
      v["measured_time"] = p.measured_time_ms;
      v["measured_memory"] = p.measured_memory_kb;
      v["peak_rss_kb"] = p.peak_rss_kb;
      v["noisy"] = p.noisy;
    } else {
      v["why"] = p.why;
    }
    verify.push_back(std::move(v));
  }
  nlohmann::json never = nlohmann::json::array();
  for (const auto& [node, why] : r.never_predicted) never.push_back({{"node", node}, {"why", why}});
  return {{"oplist", r.ops.keys},
          {"mode", r.ops.mode == OpListMode::kName ? "name" : "index"},
          {"backends", r.backends},
          {"search", r.method},
          {"solutions", solutions},
          {"front", front},
          {"configs", configs},
          {"references", references},
          {"verify", verify},
          {"left_out", {{"assignments", r.incomplete}, {"examples", r.incomplete_examples}}},
          {"not_predicted", never},
          {"drift_per_op", r.drift.measured ? nlohmann::json(r.drift.per_entry) : nlohmann::json()},
          {"search_seconds", r.search_secs},
          {"node_memory_seconds", r.node_memory_secs},
          {"device", r.device.Describe()},
          {"machine_note", r.machine_note}};
}

std::string ParetoView::Svg() const {
  const ParetoResult& r = result_;
  ScatterPlot plot;
  plot.title = "Latte: latency/memory Pareto front over " + fmt::format("{}", fmt::join(r.backends, ", "));
  plot.x_label = "latency ms";
  plot.y_label = "memory KB";
  ScatterSeries all{"evaluated (predicted)", "#bbb", {}, {}, {}, false};
  ScatterSeries front{"front (predicted)", "#c33", {}, {}, {}, true};
  ScatterSeries refs{"all on one backend (predicted)", "#36c", {}, {}, {}, false};
  ScatterSeries measured{"verified (measured)", "#2a2", {}, {}, {}, true};
  for (const ParetoPoint& p : r.evaluated) all.x.push_back(p.cost.time_ms), all.y.push_back(p.cost.memory_kb());
  for (const ParetoPoint& p : r.front) {
    front.x.push_back(p.cost.time_ms), front.y.push_back(p.cost.memory_kb());
    front.titles.push_back(fmt::format("id {}: {}{}", p.id, AssignmentText(r.ops, p.digits, r.backends),
                                       r.drift.measured ? " (est drift " + DriftText(p.drift) + ")" : ""));
  }
  for (const ParetoPoint& p : r.references) {
    refs.x.push_back(p.cost.time_ms), refs.y.push_back(p.cost.memory_kb());
    refs.titles.push_back(RoleOf(r, p.id));
  }
  for (const VerifiedPoint& p : r.verify) {
    if (!p.ok || p.role != "front") continue;
    measured.x.push_back(p.measured_time_ms), measured.y.push_back(p.measured_memory_kb);
    measured.titles.push_back(fmt::format("id {} measured", p.id));
  }
  plot.series = {all, front, refs};
  if (!measured.x.empty()) plot.series.push_back(measured);
  return plot.Render();
}

std::string ParetoView::Html(const Graph& user, const std::string& model) const {
  nlohmann::json graph = ReportGraphJson(user, model);
  graph["oplist_of_node"] = result_.ops.key_of_node;  // digit i of an assignment is entry i's backend
  return HtmlReport("pareto", "latte pareto: " + model, Json(), nlohmann::json::array({graph}));
}

}  // namespace latte
