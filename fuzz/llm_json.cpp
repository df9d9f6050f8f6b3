// libFuzzer target: the LLM readers (io/llm_json.hpp): `devplace.llm-model/1`, `devplace.llm-system/1`,
// `devplace.llm-execution/1` and Calculon's model, system and execution files. Every input is
// offered to the three readers. What a reader accepts must pass the library's own checks
// (llm::check_model, llm::check_system, llm::check_execution against a model it fits), and a model
// or an execution written back (io::to_json) must read back to the same document.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "devplace/io/llm_json.hpp"
#include "invariants.hpp"

namespace {

namespace io = devplace::io;
namespace llm = devplace::llm;
using devplace::fuzz::require;

template <class F>
bool accepted(F read) {
  try {
    read();
    return true;
  } catch (const io::input_error&) {
    return false;
  }
}

void model_invariants(const nlohmann::json& doc) {
  llm::model m;
  if (!accepted([&] { m = io::llm_model_from_json(doc, "fuzz.json"); })) return;
  try {
    llm::check_model(m);
  } catch (const std::invalid_argument&) {
    devplace::fuzz::violated("an accepted model passes check_model");
  }
  const auto written = io::to_json(m);
  llm::model back;
  require(accepted([&] { back = io::llm_model_from_json(written, "back.json"); }), "a written model reads back");
  require(io::to_json(back) == written, "a model reads back to the document written");
}

void system_invariants(const nlohmann::json& doc) {
  llm::hardware s;
  if (!accepted([&] { s = io::llm_system_from_json(doc, "fuzz.json"); })) return;
  try {
    llm::check_system(s);
  } catch (const std::invalid_argument&) {
    devplace::fuzz::violated("an accepted system passes check_system");
  }
}

void execution_invariants(const nlohmann::json& doc) {
  llm::execution e;
  if (!accepted([&] { e = io::llm_execution_from_json(doc, "fuzz.json"); })) return;
  const auto written = io::to_json(e);
  llm::execution back;
  require(accepted([&] { back = io::llm_execution_from_json(written, "back.json"); }), "a written execution reads back");
  require(io::to_json(back) == written, "an execution reads back to the document written");
  // A model every parallelism of this execution divides: check_execution judges the execution
  // alone (it may still refuse a batch the micro-batches and data parallelism do not divide).
  if (e.tp > 64 || e.pp > 64 || e.cp > 64 || e.vp > 64) return;
  llm::model m;
  m.heads = m.kv_heads = e.tp * 2;
  m.head_dim = 64;
  m.hidden = m.heads * m.head_dim;
  m.ffn = 4 * m.hidden;
  m.layers = e.pp * e.vp * 2;
  m.seq = e.cp * 128;
  m.vocab = 1024 * e.tp;
  try {
    llm::check_execution(e, m);
  } catch (const std::invalid_argument& x) {
    (void)x;  // a refused combination is an answer, not a defect; only a crash or a hang is
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json doc;
  try {
    doc = io::detail::parse_json(devplace::fuzz::as_text(data, size), "fuzz.json");
  } catch (const io::input_error&) {
    return 0;
  }
  model_invariants(doc);
  system_invariants(doc);
  execution_invariants(doc);
  return 0;
}
