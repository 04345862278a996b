// downpour_custom_format: Downpour as a library with a data format of its
// own (docs/library.md, "Your own data"). The made-up "colon" format holds
// one example a line, its label, a colon and its features:
//   2: 0.5 1.25 -3
// `--data-format=colon` reads it in every role and command; the models are
// the built-in ones. test_custom_format trains on it and feeds it bad files.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/builtin.hpp"
#include "runtime/cli/app.hpp"

namespace {

using downpour::data_error;

struct examples {
  std::size_t features = 0;
  std::vector<float> values;
  std::vector<std::int32_t> labels;
};

// "FILE:LINE: what": one line, naming the file and the line, as data_error wants.
[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
  throw data_error("data: " + path + ":" + std::to_string(line) + ": " + what);
}

void read_line(const std::string& text, const std::string& path, std::size_t line,
               examples& into) {
  std::istringstream in(text);
  long label = -1;
  char colon = 0;
  if (!(in >> label >> colon) || colon != ':' || label < 0)
    fail(path, line, "expected 'LABEL: FEATURES', a label >= 0 and a colon");
  std::size_t count = 0;
  for (float x; in >> x; ++count) into.values.push_back(x);
  if (!in.eof()) fail(path, line, "a feature that is not a number");
  if (into.features == 0) into.features = count;
  if (count == 0 || count != into.features)
    fail(path, line, std::to_string(count) + " features, expected " +
                         std::to_string(into.features) + " as on the first line");
  into.labels.push_back(static_cast<std::int32_t>(label));
}

std::shared_ptr<const downpour::dataset> read_colon_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw data_error("data: cannot open " + path);
  examples all;
  std::string text;
  for (std::size_t line = 1; std::getline(file, text); ++line) read_line(text, path, line, all);
  if (all.labels.empty()) throw data_error("data: " + path + ": no examples");
  return downpour::dense_dataset(all.features, std::move(all.values), std::move(all.labels));
}

// eval reads the test file alone: it stands in for the training set, whose
// examples only fix the classes.
downpour::data_splits read_colon(const downpour::data_request& r) {
  const auto test = read_colon_file(r.test_file);
  const auto train = r.train_file.empty() ? test : read_colon_file(r.train_file);
  const std::size_t validation = r.train_file.empty() ? 0 : r.validation_size;
  return downpour::split_data({r.train_file.empty() ? r.test_file : r.train_file, train},
                              {r.test_file, test}, downpour::data_shape{{train->features()}},
                              validation);
}

}  // namespace

int main(int argc, char** argv) {
  downpour::application app;
  app.make_model = [](const downpour::model_request& request) {
    return downpour::make_builtin_model(request.choice, request);
  };
  app.readers["colon"] = read_colon;
  return downpour::run_downpour(argc, argv, app);
}
