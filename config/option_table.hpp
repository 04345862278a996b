// Internal to config/: the option table shared by the parser, the validator and
// --help, so that an option cannot be accepted without being documented.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/options.hpp"

namespace downpour::config_detail {

struct option_spec {
  std::string name;          // long name without "--"
  std::string arg;           // value placeholder for --help; empty for a switch
  std::string default_text;  // empty: no default shown
  std::string help;
};

struct alias_spec {
  std::string name;       // TensorFlow flag name
  std::string canonical;  // the option it stands for
  std::string arg;
};

// One option's text as the user wrote it, before validation.
struct raw_value {
  std::string text;
  // Empty: command line; environment_source or tf_config_source; otherwise
  // the config file path.
  std::string source;
  std::string spelled;  // the name as written (an alias keeps its own name)
};

inline const std::string environment_source = "environment";  // spelled: DOWNPOUR_<OPTION>
inline const std::string tf_config_source = "TF_CONFIG";      // spelled: the JSON path

// Canonical option name -> value.
using raw_values = std::map<std::string, raw_value>;

std::vector<option_spec> option_specs();
std::vector<alias_spec> alias_specs();

// "--batch-size" on the command line, "cluster.ini: batch-size" from a file,
// "DOWNPOUR_BATCH_SIZE" from the environment: errors must tell the user where to look.
std::string label(const raw_value& v, const std::string& name);

// "batch-size" -> "DOWNPOUR_BATCH_SIZE".
std::string environment_name(const std::string& option);

// The DOWNPOUR_<OPTION> variables, then what TF_CONFIG says (role, task and
// host lists) for the options no variable set.
raw_values read_environment();

// TF_CONFIG's JSON -> role, task, ps-hosts and worker-hosts (config/tf_config.cpp).
// Empty for "{}" or no cluster (a one-replica job). Throws config_error.
raw_values read_tf_config(const std::string& json_text);

// The options of failure detection, security, watching and transfer.
options read_operations(options o, const raw_values& raw);

// The options of how the data files are read (config/convert_input.cpp),
// and their checks against the data format and the command.
options read_input_options(options o, const raw_values& raw);
// --data-format: a built-in format or one of formats.registered.
options read_data_format(options o, const raw_values& raw, const known_formats& formats);
void check_input(const options& o, const raw_values& raw);

// Converts and range-checks every value for the command; options absent
// from raw keep their defaults. Throws config_error.
// --data-format takes formats' registered names besides the built-in ones.
options build_options(const raw_values& raw, command_kind command = command_kind::train,
                      const known_formats& formats = {});

}  // namespace downpour::config_detail
