// libFuzzer target: both DFModel setup readers, `devplace.dfmodel.setup/1` JSON
// (dfmodel/setup.hpp) and the authors' setup.txt (dfmodel/setup_txt.hpp), on the same input. What
// either accepts is a valid workload and system (the checks the model runs before its passes do
// not throw) and has chips, and a choice of tensor-parallel schemes evaluates to a non-negative
// byte count.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/dfmodel/setup.hpp"
#include "devplace/dfmodel/setup_txt.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // the setup reader's and result_json's definitions (compiled mode: devplace::core)
#endif
#include "invariants.hpp"

namespace {

void setup_invariants(const devplace::dfmodel::setup& s) {
  namespace df = devplace::dfmodel;
  using devplace::fuzz::require;
  try {
    df::check_workload(s.work);
    df::check_system(s.sys);
  } catch (const std::invalid_argument&) {
    devplace::fuzz::violated("an accepted setup passes the model's own checks");
  }
  // setup.txt fixes every dimension's size (chips stays 0); JSON with free sizes gives chips.
  require(s.chips >= 1 || df::num_chips(s.sys.net) >= 1, "an accepted setup has chips");
  std::vector<df::loop_dim> first;  // each kernel's first allowed scheme
  try {
    for (const auto& k : s.work.kernels) first.push_back(df::allowed_schemes(k).front());
  } catch (const std::invalid_argument&) {
    return;  // a kernel with no scheme: the sharding search reports it (not a reader's matter)
  }
  const auto sh = df::evaluate_sharding(s.work, first);
  require(!std::isnan(sh.bytes) && sh.bytes >= 0, "a scheme's bytes are >= 0 and not NaN");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  namespace df = devplace::dfmodel;
  const std::string text = devplace::fuzz::as_text(data, size);
  try {
    setup_invariants(df::read_setup_json_text(text, "fuzz.json"));
  } catch (const io::input_error&) {
  }
  try {
    setup_invariants(df::read_setup_txt_text(text, "fuzz/user_input/setup.txt"));
  } catch (const io::input_error&) {
  }
  return 0;
}
