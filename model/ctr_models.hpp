// The click-through models on Criteo data (--data-format=criteo), composed
// from model/layers, one table (row variable) per categorical field:
//
// --model dlrm (Naumov et al. 2019): a bottom MLP on the 13 numeric fields
// down to the embedding width, an embedding per categorical field
// (embeddings/C1..C26), DLRM's pairwise dot interaction of the 27 vectors
// after the bottom output, a top MLP to one logit. Every variable plain SGD
// at the job's learning rate (DLRM's Kaggle run).
//
// --model wide_deep (TF's DNNLinearCombinedClassifier): a linear part, the
// sum of width-1 rows of the hashed categorical features (linear/features)
// and of the crosses of consecutive fields C1xC2 .. C25xC26 (linear/crosses),
// FTRL; a deep part, the numeric fields and an embedding per field
// (embeddings/C1..C26) concatenated into an MLP to one logit, AdaGrad at
// 0.05; the two logits summed.
//
// Both predict a probability (sigmoid cross-entropy, log loss and AUC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/ctr_network.hpp"
#include "model/model.hpp"

namespace downpour {

struct dlrm_shape {
  std::uint64_t table_rows = std::uint64_t{1} << 20;  // each field's (--sparse-rows)
  std::size_t embedding_dim = 16;                     // --embedding-dim
  std::vector<std::size_t> bottom_units{512, 256, 64};  // then embedding_dim (--bottom-units)
  std::vector<std::size_t> top_units{512, 256};         // then 1 (--top-units)
};

struct wide_deep_shape {
  std::uint64_t table_rows = std::uint64_t{1} << 20;  // each table's (--sparse-rows)
  std::size_t embedding_dim = 16;                     // --embedding-dim
  std::vector<std::size_t> hidden_units{500};         // then 1 (--hidden-units)
};

// Throw std::invalid_argument naming the option for a 0 in a shape.
std::shared_ptr<const ctr_design> dlrm_design(const dlrm_shape& shape);
std::shared_ptr<const ctr_design> wide_deep_design(const wide_deep_shape& shape);

// The shapes the command line gives (model_choice), on a request for Criteo
// data; throw std::invalid_argument with one line otherwise.
std::shared_ptr<const model> make_dlrm(const model_choice& choice, const model_request& request);
std::shared_ptr<const model> make_wide_deep(const model_choice& choice,
                                            const model_request& request);

}  // namespace downpour
