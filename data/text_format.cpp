#include "data/text_format.hpp"

#include <optional>

#include "data/criteo.hpp"
#include "data/byte_reader.hpp"
#include "data/libsvm.hpp"

namespace downpour {
namespace {

std::uint64_t origin_of(std::uint32_t file, std::uint64_t offset) {
  return std::uint64_t{file} << 40 | offset;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

example_parser::example_parser(text_spec spec, std::size_t csv_fields, std::size_t csv_classes)
    : spec_(spec), csv_classes_(csv_classes) {
  if (spec_.format == text_format::csv)
    csv_ = csv_row_layout{csv_fields, spec_.label == csv_label_column::first ? 1 : csv_fields};
}

std::size_t example_parser::features() const {
  return spec_.format == text_format::csv ? csv_.fields - 1 : 0;
}

bool example_parser::parse(std::string_view line, std::uint32_t file, std::uint64_t offset,
                           batch& out) const {
  std::optional<std::uint8_t> label;
  switch (spec_.format) {
    case text_format::libsvm:
      label = parse_libsvm_line(line, out.keys, out.values);
      break;
    case text_format::criteo:
      label = parse_criteo_line(line, out.keys, out.values);
      break;
    case text_format::csv: {
      line = csv_line_text(line, offset);
      if (blank(line) || (offset == 0 && csv_is_header(line, csv_))) return false;
      const std::size_t base = out.x.size();
      out.x.resize(base + csv_.fields - 1);
      const std::int32_t label = parse_csv_row(line, csv_, out.x.data() + base);
      if (csv_classes_ > 0 && static_cast<std::size_t>(label) >= csv_classes_)
        throw line_fault{csv_.label_column,
                         "label " + std::to_string(label) + " is beyond the " +
                             std::to_string(csv_classes_) +
                             " classes of the model (1 + the largest label of the test files)"};
      out.y.push_back(label);
      out.origins.push_back(origin_of(file, offset));
      ++out.size;
      return true;
    }
  }
  if (!label) return false;
  out.offsets.push_back(out.keys.size());
  out.y.push_back(*label);
  out.origins.push_back(origin_of(file, offset));
  ++out.size;
  return true;
}

void clear_batch(batch& b, const example_parser& parser) {
  b.size = 0;
  b.input_size = parser.features();
  b.x.clear();
  b.y.clear();
  b.examples.clear();
  b.origins.clear();
  b.keys.clear();
  b.values.clear();
  b.offsets.clear();
  if (parser.sparse()) b.offsets.push_back(0);
}

std::size_t csv_fields_of(const std::string& path, const text_spec& spec) {
  byte_reader bytes(path, std::nullopt);
  line_reader lines(bytes, spec.max_line_bytes);
  while (const auto line = lines.next()) {
    const std::string_view text = csv_line_text(line->text, line->offset);
    if (blank(text)) continue;
    try {
      return csv_layout_of(text, spec.label).fields;
    } catch (const line_fault& f) {
      throw lines.fault(*line, f);
    }
  }
  throw data_error("data: " + path + ": empty file: expected lines of comma-separated features and a label");
}

}  // namespace downpour
