#include "data/data_reader.hpp"

#include <utility>

#include "data/libsvm.hpp"

namespace downpour {
namespace {

// One set of the splits against the shape the reader gave; what: "the
// reader of --data-format=NAME", which: "training", "validation" or "test".
void check_set(const dataset* set, const data_splits& s, const std::string& what,
               const char* which) {
  if (!set) return;
  const bool shape_sparse = s.shape.features() == 0;
  if (set->sparse() == shape_sparse && (set->sparse() || set->features() == s.shape.features()))
    return;
  throw data_error(what + " gave a " + which + " set of " +
                   (set->sparse() ? std::string("sparse examples")
                                  : std::to_string(set->features()) + " features") +
                   " for a shape of " + std::to_string(s.shape.features()) +
                   " features (expected the same; 0 for sparse examples)");
}

}  // namespace

std::shared_ptr<const dataset> sparse_dataset(sparse_examples examples) {
  return std::make_shared<libsvm_set>(std::move(examples));
}

data_splits read_data(const data_reader& reader, const data_request& request) {
  data_splits s = reader(request);
  const std::string what = "data: the reader of --data-format=" + request.format;
  if (!s.test || (!request.train_file.empty() && !s.train))
    throw data_error(what + " returned no " + (s.test ? "training" : "test") +
                     " set (expected the splits of " +
                     (request.train_file.empty() ? request.test_file
                                                 : request.train_file + " and " + request.test_file) +
                     ")");
  if (s.classes < 2)
    throw data_error(what + " returned " + std::to_string(s.classes) +
                     " classes (expected at least 2)");
  check_set(s.train.get(), s, what, "training");
  check_set(s.validation.get(), s, what, "validation");
  check_set(s.test.get(), s, what, "test");
  // The runtime evaluates a validation set, which may hold no examples.
  if (!s.validation && s.train) s.validation = dataset_range(s.train, 0, 0);
  return s;
}

}  // namespace downpour
