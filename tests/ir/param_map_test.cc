#include "ir/param_map.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace latte {
namespace {

std::vector<std::string> Names(const ParamMap& params) {
  std::vector<std::string> names;
  for (const auto& [name, value] : params) names.push_back(name);
  return names;
}

TEST(ParamMap, IteratesInNameOrderWhateverTheOrderOfInsertion) {
  ParamMap params;
  params["oc"] = 16;
  params["ic"] = 8;
  params["bias"] = 1;
  params["kh"] = 3;
  EXPECT_EQ(Names(params), (std::vector<std::string>{"bias", "ic", "kh", "oc"}));
  EXPECT_EQ(params.size(), 4u);
}

TEST(ParamMap, BehavesAsTheMapItReplaces) {
  ParamMap params{{"w", 4}, {"h", 3}, {"w", 9}};  // a repeated key keeps its first value, as in a std::map
  EXPECT_EQ(params, (std::map<std::string, std::int64_t>{{"h", 3}, {"w", 4}}));
  EXPECT_EQ(params.count("h"), 1u);
  EXPECT_EQ(params.count("c"), 0u);
  EXPECT_EQ(params.find("c"), params.end());
  EXPECT_EQ(params.find("w")->second, 4);
  EXPECT_EQ(params["c"], 0);  // added as 0
  EXPECT_EQ(Names(params), (std::vector<std::string>{"c", "h", "w"}));
  EXPECT_FALSE(params.insert({"h", 7}).second);
  EXPECT_EQ(params.find("h")->second, 3);
  EXPECT_EQ(params.erase("h"), 1u);
  EXPECT_EQ(params.erase("h"), 0u);
  EXPECT_NE(params, (std::map<std::string, std::int64_t>{{"c", 0}, {"w", 5}}));
  EXPECT_EQ(params, (std::map<std::string, std::int64_t>{{"c", 0}, {"w", 4}}));
}

TEST(ParamMap, KeysSpellTheParamsInNameOrder) {
  Kernel kernel;
  kernel.op = OpKind::kRelu;
  kernel.params["w"] = 6;
  kernel.params["c"] = 8;
  kernel.params["n"] = 1;
  kernel.params["h"] = 5;
  EXPECT_EQ(kernel.Key(), "relu|c=8,h=5,n=1,w=6|float32");
  EXPECT_EQ(kernel.Param("h"), 5);
  EXPECT_EQ(kernel.Param("x", -1), -1);
}

}  // namespace
}  // namespace latte
