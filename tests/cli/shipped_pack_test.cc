// The README's main command: the model and the pack it names exist, and predicting the model
// with the shipped pack covers every node with a source for each number.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "predict/pack.h"
#include "run_latte.h"

namespace latte {
namespace {

using testing::ReadAll;
using testing::RunLatte;
using testing::RunResult;
using testing::TempDir;

struct QuickStart {
  std::string model, pack;
};

// The quick-start line "    scripts/setup && build/latte predict MODEL --pack PACK".
QuickStart ReadQuickStart() {
  std::istringstream readme(ReadAll(std::string(LATTE_SOURCE_DIR) + "/README.md"));
  const std::string prefix = "    scripts/setup && build/latte predict ";
  std::string line;
  while (std::getline(readme, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    QuickStart q;
    std::string flag;
    words >> q.model >> flag >> q.pack;
    EXPECT_EQ(flag, "--pack") << line;
    return q;
  }
  ADD_FAILURE() << "README.md has no quick-start line starting with '" << prefix << "'";
  return {};
}

TEST(ShippedPack, TheReadmeMainCommandPredictsEveryNode) {
  const QuickStart q = ReadQuickStart();
  ASSERT_FALSE(q.pack.empty());
  const std::string root = LATTE_SOURCE_DIR;
  ASSERT_TRUE(std::filesystem::exists(root + "/" + q.pack)) << q.pack;
  ASSERT_TRUE(std::filesystem::exists(root + "/" + q.model)) << q.model << " (scripts/setup fetches it)";

  Expected<Pack> pack = Pack::Load(root + "/" + q.pack);
  ASSERT_TRUE(pack.ok()) << pack.status().message();
  EXPECT_EQ(pack->info.command.rfind("latte calibrate ", 0), 0u) << "the shipped pack is made by latte calibrate";

  TempDir dir;
  RunResult run = RunLatte({"predict", root + "/" + q.model, "--pack", root + "/" + q.pack, "--format", "json"},
                           dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json result = nlohmann::json::parse(run.out);
  EXPECT_GT(result["total_ms"].get<double>(), 0);
  EXPECT_EQ(result["coverage"]["covered_nodes"], result["coverage"]["total_nodes"]) << result["coverage"].dump();
  EXPECT_TRUE(result["coverage"]["uncovered"].empty());
  ASSERT_FALSE(result["layers"].empty());
  double sum = 0;
  for (const auto& layer : result["layers"]) {
    EXPECT_FALSE(layer["source"].get<std::string>().empty());
    EXPECT_GT(layer["predicted_ms"].get<double>(), 0) << layer.dump();
    sum += layer["predicted_ms"].get<double>();
  }
  EXPECT_NEAR(sum, result["total_ms"].get<double>(), 1e-9 * sum + 1e-12);
  const auto& interval = result["interval_ms"];
  EXPECT_LE(interval[0].get<double>(), result["total_ms"].get<double>());
  EXPECT_GE(interval[1].get<double>(), result["total_ms"].get<double>());
}

}  // namespace
}  // namespace latte
