// Reads the command line, the environment (DOWNPOUR_*, TF_CONFIG) and the
// --config file into raw text per option, then
// hands the merged text to build_options (convert.cpp) for validation.
// Every value is taken as a string so that conversion errors are ours to word:
// boost's messages quote oddly and do not say what was expected.
#include <boost/program_options.hpp>
#include <caf/config.hpp>
#include <filesystem>
#include <ostream>
#include <sstream>

#include "config/option_table.hpp"
#include "config/version.hpp"
#include "io/input_file.hpp"

namespace downpour {
namespace {

namespace po = boost::program_options;
using config_detail::raw_value;
using config_detail::raw_values;

po::options_description describe_options() {
  po::options_description desc;
  for (const auto& spec : config_detail::option_specs()) {
    if (spec.name == "help" || spec.name == "version")
      desc.add_options()(spec.name.c_str(), po::bool_switch(), "");
    else if (spec.arg.empty())  // a switch that a file can also set to false
      desc.add_options()(spec.name.c_str(), po::value<std::string>()->implicit_value("true"), "");
    else
      desc.add_options()(spec.name.c_str(), po::value<std::string>(), "");
  }
  for (const auto& alias : config_detail::alias_specs())
    desc.add_options()(alias.name.c_str(), po::value<std::string>(), "");
  return desc;
}

// Maps a name as written (alias or canonical) to the canonical name; empty if
// unknown. Options only meaningful on the command line are unknown in a file.
std::string canonical_name(const std::string& name, bool in_file) {
  if (in_file && (name == "help" || name == "version")) return "";
  for (const auto& spec : config_detail::option_specs())
    if (spec.name == name) return name;
  for (const auto& alias : config_detail::alias_specs())
    if (alias.name == name) return alias.canonical;
  return "";
}

std::string shown_name(const raw_value& v) {
  return v.source.empty() ? "--" + v.spelled : v.spelled;
}

// A repeated option or an alias next to its canonical name is fine only when
// both say the same thing; otherwise the user must pick one.
void add_value(raw_values& raw, const std::string& name, raw_value v) {
  if (v.spelled == "job_name" && v.text != "ps" && v.text != "worker")
    throw config_error("config: " + config_detail::label(v, v.spelled) + "=" + v.text +
                       " is not valid (expected ps|worker)");
  auto [it, inserted] = raw.emplace(name, v);
  if (inserted || it->second.text == v.text) return;
  std::string where = v.source.empty() ? "" : " in " + v.source;
  throw config_error("config: " + shown_name(v) + "=" + v.text + " conflicts with " +
                     shown_name(it->second) + "=" + it->second.text + where + " (give one value)");
}

std::string option_token(const po::option& o) {
  const std::string& token = o.original_tokens.empty() ? o.string_key : o.original_tokens[0];
  return token.substr(0, token.find('='));
}

raw_values collect_command_line(const po::parsed_options& parsed) {
  raw_values raw;
  for (const auto& o : parsed.options) {
    if (o.string_key.empty() || o.position_key >= 0)
      throw config_error("config: unexpected argument '" +
                         (o.value.empty() ? std::string() : o.value[0]) + "' (see --help)");
    std::string name = o.unregistered ? "" : canonical_name(o.string_key, false);
    if (name.empty())
      throw config_error("config: unknown option '" + option_token(o) + "' (see --help)");
    std::string text = o.value.empty() ? "true" : o.value[0];
    add_value(raw, name, {text, "", o.string_key});
  }
  return raw;
}

std::string syntax_message(const po::invalid_command_line_syntax& e) {
  const std::string name = e.get_option_name();
  switch (e.kind()) {
    case po::invalid_syntax::missing_parameter:
      return "config: " + name + " is missing its value (expected " + name + "=VALUE)";
    case po::invalid_syntax::empty_adjacent_parameter:
      return "config: " + name + "= has an empty value (expected " + name + "=VALUE)";
    case po::invalid_syntax::extra_parameter:
      return "config: " + name + " takes no value";
    default:
      return "config: cannot parse the command line near '" + name + "' (see --help)";
  }
}

raw_values read_command_line(int argc, const char* const* argv) {
  namespace style = po::command_line_style;
  try {
    // No guessing: --batch must not silently mean --batch-size.
    auto parsed = po::command_line_parser(argc, argv)
                      .options(describe_options())
                      .style(style::default_style & ~style::allow_guessing)
                      .allow_unregistered()
                      .run();
    return collect_command_line(parsed);
  } catch (const po::invalid_command_line_syntax& e) {
    throw config_error(syntax_message(e));
  } catch (const po::error&) {
    throw config_error("config: cannot parse the command line (see --help)");
  }
}

std::string strip_section(const std::string& key) {
  const std::string section = "downpour.";
  return key.compare(0, section.size(), section) == 0 ? key.substr(section.size()) : key;
}

raw_values collect_file(const po::parsed_options& parsed, const std::string& path) {
  raw_values raw;
  for (const auto& o : parsed.options) {
    const std::string key = strip_section(o.string_key);
    if (key == "config")
      throw config_error("config: " + path + ": config cannot be set inside a config file");
    const std::string name = canonical_name(key, true);
    if (name.empty())
      throw config_error("config: unknown option '" + o.string_key + "' in " + path +
                         " (see --help)");
    add_value(raw, name, {o.value.empty() ? "" : o.value[0], path, key});
  }
  return raw;
}

// named: where the path came from ("--config" or "DOWNPOUR_CONFIG"). Read
// whole and bounded (io/input_file.hpp): a FIFO or a device is refused
// without blocking, a file over max_config_file_bytes before it is read.
raw_values read_config_file(const std::string& path, const std::string& named) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw config_error("config: " + named + " file '" + path + "' does not exist");
  std::istringstream in;
  try {
    in.str(read_input(path, max_config_file_bytes));
  } catch (const input_error& e) {
    throw config_error("config: " + named + " file '" + path + "': " + e.reason());
  }
  try {
    return collect_file(po::parse_config_file(in, describe_options(), true), path);
  } catch (const po::invalid_config_file_syntax& e) {
    throw config_error("config: malformed line '" + e.tokens() + "' in " + path +
                       " (expected name = value)");
  } catch (const po::error&) {
    throw config_error("config: cannot parse config file '" + path + "'");
  }
}

std::string version_text() {
  return "downpour " + std::string(build_version()) + " (CAF " + std::to_string(CAF_MAJOR_VERSION) + "." +
         std::to_string(CAF_MINOR_VERSION) + "." + std::to_string(CAF_PATCH_VERSION) + ")";
}

}  // namespace

// A leading word names the command; everything after it is options.
command_kind leading_command(int& argc, const char* const*& argv) {
  if (argc < 2 || argv[1][0] == '-') return command_kind::train;
  const std::string word = argv[1];
  for (auto c : {command_kind::train, command_kind::eval, command_kind::inspect,
                 command_kind::export_npz, command_kind::status, command_kind::plot}) {
    if (word == to_string(c)) {
      --argc;
      ++argv;  // argv[0] is skipped by the parser, so shifting drops the word
      return c;
    }
  }
  throw config_error("config: unknown command '" + word +
                     "' (expected train|eval|inspect|export|status|plot, or options only)");
}

std::optional<options> parse_options(int argc, const char* const* argv, std::ostream& out) {
  return parse_options(argc, argv, out, known_formats{});
}

std::optional<options> parse_options(int argc, const char* const* argv, std::ostream& out,
                                     const known_formats& formats) {
  command_kind command = leading_command(argc, argv);
  raw_values raw = read_command_line(argc, argv);
  // Help and version answer even when the rest would not validate.
  if (raw.count("help")) {
    out << help_text();
    return std::nullopt;
  }
  if (raw.count("version")) {
    out << version_text() << '\n';
    return std::nullopt;
  }
  // insert keeps the existing key: command line > environment > config file.
  raw_values from_environment = config_detail::read_environment();
  raw.insert(from_environment.begin(), from_environment.end());
  if (auto it = raw.find("config"); it != raw.end()) {
    raw_values from_file =
        read_config_file(it->second.text, config_detail::label(it->second, "config"));
    raw.insert(from_file.begin(), from_file.end());
  }
  return config_detail::build_options(raw, command, formats);
}

}  // namespace downpour
