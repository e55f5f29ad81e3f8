// Commands that only read the store (`export`, `fit`) as a user runs them on missing, empty and
// damaged stores: one line naming the file, exit code 2, and the file left as it was.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/run_latte.h"

namespace latte::testing {
namespace {

TEST(ReadOnlyCommands, AMissingStoreIsNotCreated) {
  TempDir dir;
  const std::string db = (dir.path() / "x" / "none.db").string();
  const std::string pack = (dir.path() / "f.json").string();
  RunResult r = RunLatte({"fit", "--backend", "xnnpack", "-o", pack, "--db", db}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + db + ": no such database\n");
  r = RunLatte({"export", "--db", db}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + db + ": no such database\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x"));
  EXPECT_FALSE(std::filesystem::exists(pack));
}

TEST(ReadOnlyCommands, AnEmptyFileIsNotADatabaseAndStaysEmpty) {
  TempDir dir;
  const std::string db = dir.Write("empty.db", "");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", "--db", db},
        std::vector<std::string>{"fit", "--backend", "xnnpack", "-o", (dir.path() / "f.json").string(), "--db", db}}) {
    RunResult r = RunLatte(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.err, "error: " + db + ": not a Latte database (empty file)\n") << args[0];
    EXPECT_EQ(std::filesystem::file_size(db), 0u) << args[0];
  }
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

}  // namespace
}  // namespace latte::testing
