// Where loading a pack spends its time: reading the file, gunzip, then parsing the JSON, building
// the predictors from it (Pack::FromJson) and freeing the parsed JSON two ways: nlohmann's parser
// (one DOM node per number: how packs were read before) and ParsePackJson (the trees' number arrays
// packed: how Pack::Load reads them); and the whole Pack::Load. Medians of N runs (default 5) on
// one core. Prints figures; asserts nothing.
// Usage: pack_load PACK.json[.gz] [N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/file.h"
#include "core/gzip.h"
#include "predict/pack.h"
#include "predict/pack_json.h"

using namespace latte;

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pack_load PACK.json[.gz] [N]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  std::vector<double> read_s, gunzip_s, parse_s, build_s, free_s, fast_parse_s, fast_build_s, fast_free_s, load_s;
  std::size_t text_bytes = 0, kinds = 0;
  for (int run = 0; run < runs; ++run) {
    auto t = std::chrono::steady_clock::now();
    Expected<std::vector<std::uint8_t>> bytes = ReadFileBytes(path, Pack::kMaxPackBytes);
    if (!bytes.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", path.c_str(), bytes.status().message().c_str());
      return 2;
    }
    read_s.push_back(Seconds(t));
    t = std::chrono::steady_clock::now();
    std::string text;
    if (LooksGzipped(*bytes)) {
      Expected<std::string> expanded = Gunzip(*bytes, Pack::kMaxPackBytes);
      if (!expanded.ok()) {
        std::fprintf(stderr, "error: %s: %s\n", path.c_str(), expanded.status().message().c_str());
        return 2;
      }
      text = std::move(*expanded);
    } else {
      text.assign(bytes->begin(), bytes->end());
    }
    gunzip_s.push_back(Seconds(t));
    text_bytes = text.size();
    t = std::chrono::steady_clock::now();
    auto* json = new nlohmann::json(nlohmann::json::parse(text, nullptr, false));
    parse_s.push_back(Seconds(t));
    t = std::chrono::steady_clock::now();
    Expected<Pack> pack = Pack::FromJson(*json);
    build_s.push_back(Seconds(t));
    if (!pack.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", path.c_str(), pack.status().message().c_str());
      return 2;
    }
    kinds = pack->kinds.size();
    t = std::chrono::steady_clock::now();
    delete json;
    free_s.push_back(Seconds(t));
    t = std::chrono::steady_clock::now();
    Expected<nlohmann::json> packed = ParsePackJson(text);
    fast_parse_s.push_back(Seconds(t));
    if (!packed.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", path.c_str(), packed.status().message().c_str());
      return 2;
    }
    t = std::chrono::steady_clock::now();
    Expected<Pack> fast = Pack::FromJson(*packed);
    fast_build_s.push_back(Seconds(t));
    if (!fast.ok()) return 2;
    t = std::chrono::steady_clock::now();
    packed = nlohmann::json();
    fast_free_s.push_back(Seconds(t));
    t = std::chrono::steady_clock::now();
    Expected<Pack> loaded = Pack::Load(path);
    load_s.push_back(Seconds(t));
    if (!loaded.ok()) return 2;
  }
  std::printf("%s: %zu bytes, %zu bytes of JSON, %zu kinds; medians of %d runs (s):\n", path.c_str(),
              static_cast<std::size_t>(ReadFileBytes(path, Pack::kMaxPackBytes)->size()), text_bytes, kinds, runs);
  std::printf("  read %.3f  gunzip %.3f\n", Median(read_s), Median(gunzip_s));
  std::printf("  nlohmann::json::parse %.3f  FromJson %.3f  free JSON %.3f  (sum with read and gunzip: %.3f)\n",
              Median(parse_s), Median(build_s), Median(free_s),
              Median(read_s) + Median(gunzip_s) + Median(parse_s) + Median(build_s) + Median(free_s));
  std::printf("  ParsePackJson %.3f  FromJson %.3f  free JSON %.3f  (sum with read and gunzip: %.3f)\n",
              Median(fast_parse_s), Median(fast_build_s), Median(fast_free_s),
              Median(read_s) + Median(gunzip_s) + Median(fast_parse_s) + Median(fast_build_s) + Median(fast_free_s));
  std::printf("  Pack::Load %.3f\n", Median(load_s));
  return 0;
}
