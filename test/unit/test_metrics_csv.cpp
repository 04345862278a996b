// metrics.csv's one definition (reporting/metrics_schema.hpp): what the chief
// writes is what the plot command reads back.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "reporting/metrics_schema.hpp"
#include "runtime/files/plot.hpp"
#include "subprocess.hpp"

namespace test_metrics_csv {

using namespace downpour;
using downpour::testing::temp_dir;

TEST_CASE("the metrics header names every column once, in the order rows are written") {
  CHECK(metrics_header() ==
        "wall_s,global_step,loss,learning_rate,steps_per_s,val_accuracy,ema_val_accuracy");
  CHECK(metrics_line(metrics_row{12.5, 1000, 0.3125, 0.0099, 81.5, std::nullopt, std::nullopt}) ==
        "12.500,1000,0.3125,0.0099,81.50,,");
  CHECK(metrics_line(metrics_row{13.25, 1000, 0.3125, 0.0099, 80.25, 0.8125, 0.875}) ==
        "13.250,1000,0.3125,0.0099,80.25,0.8125,0.8750");
}

TEST_CASE("rows written with the metrics schema read back as the same rows") {
  temp_dir dir("metrics-csv");
  const metrics_row plain{12.5, 1000, 0.3125, 0.0099, 81.5, std::nullopt, std::nullopt};
  const metrics_row evaluated{13.25, 1000, 0.3125, 0.0099, 80.25, 0.8125, 0.875};
  std::ofstream(dir / "metrics.csv") << metrics_header() << '\n'
                                     << metrics_line(plain) << '\n'
                                     << metrics_line(evaluated) << '\n';
  std::ostringstream warnings;
  const metrics_table table = read_metrics(dir / "metrics.csv", warnings);
  CHECK(warnings.str().empty());
  CHECK(table.has_accuracy_columns);
  REQUIRE(table.rows.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const metrics_row& want = i == 0 ? plain : evaluated;
    const metrics_row& got = table.rows[i];
    CAPTURE(i);
    CHECK(got.wall_s == want.wall_s);
    CHECK(got.global_step == want.global_step);
    CHECK(got.loss == want.loss);
    CHECK(got.learning_rate == want.learning_rate);
    CHECK(got.steps_per_s == want.steps_per_s);
    CHECK(got.val_accuracy == want.val_accuracy);
    CHECK(got.ema_val_accuracy == want.ema_val_accuracy);
  }
}

}  // namespace test_metrics_csv
