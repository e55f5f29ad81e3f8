#pragma once
// What `latte lab submit`, `latte lab work` and `latte lab status` print, as text or JSON.

#include <string>

#include <nlohmann/json.hpp>

#include "db/lab_queue.h"
#include "profile/lab.h"

namespace latte {

/// `db` is the store as shown (its password masked).
std::string LabSubmitText(const LabSubmitReport& report, const std::string& db);
nlohmann::json LabSubmitJson(const LabSubmitReport& report, const std::string& db);

std::string LabWorkText(const LabWorkResult& result, const std::string& db);
nlohmann::json LabWorkJson(const LabWorkResult& result, const std::string& db);

/// Per campaign (submission): jobs done, claimed, failed and left, kernels measured and the rate;
/// per device and campaign: its share.
std::string LabStatusText(const LabStatus& status, const std::string& db);
nlohmann::json LabStatusJson(const LabStatus& status, const std::string& db);

}  // namespace latte
