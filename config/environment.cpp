// The environment's layer of the options: DOWNPOUR_<OPTION> variables and
// TensorFlow's TF_CONFIG. Both are read as raw text like the command line, so
// one validator (convert.cpp) words every bad value, naming the variable.
#include <cstdlib>

#include "config/option_table.hpp"

namespace downpour::config_detail {

std::string environment_name(const std::string& option) {
  std::string name = "DOWNPOUR_";
  for (char c : option) name += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return name;
}

// Variables of other programs that share the prefix (e.g. the tests'
// DOWNPOUR_TEST_TIME_SCALE) are left alone: only option names are read.
raw_values read_environment() {
  raw_values raw;
  for (const auto& spec : option_specs()) {
    if (spec.name == "help" || spec.name == "version") continue;
    const std::string name = environment_name(spec.name);
    if (const char* text = std::getenv(name.c_str()))
      raw.emplace(spec.name, raw_value{text, environment_source, name});
  }
  if (const char* text = std::getenv("TF_CONFIG")) {
    // DOWNPOUR_* wins over TF_CONFIG: emplace keeps what is there.
    raw_values cluster = read_tf_config(text);
    raw.insert(cluster.begin(), cluster.end());
  }
  return raw;
}

}  // namespace downpour::config_detail
