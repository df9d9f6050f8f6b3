#pragma once
/// \file io/detail/json_reader.hpp
/// Checked access to a parsed JSON document: every failure becomes an `input_error` naming the
/// file, the JSON pointer and the reason.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "devplace/io/detail/read_text.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io::detail {

using json = nlohmann::json;

/// Parses `text`; a syntax error is reported with its line and column.
template <int = 0>
json parse_json(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    std::size_t line = 1, col = 1;
    const std::size_t upto = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < upto; ++i) {
      if (text[i] == '\n') { ++line; col = 1; } else ++col;
    }
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line L, column C: REASON"
    const auto colon = what.find(": ", what.find("parse error"));
    const std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    throw input_error(file, "line " + std::to_string(line) + ", column " + std::to_string(col),
                      "malformed JSON: " + reason);
  } catch (const json::out_of_range& e) {
    // e.g. "number overflow parsing '1e999'": locate the literal to report where it is.
    const std::string what = e.what();
    const auto q1 = what.find('\''), q2 = what.rfind('\'');
    std::string location = "/";
    if (q1 != std::string::npos && q2 > q1) {
      const auto at = text.find(what.substr(q1 + 1, q2 - q1 - 1));
      if (at != std::string::npos) {
        std::size_t line = 1, col = 1;
        for (std::size_t i = 0; i < at; ++i) {
          if (text[i] == '\n') { ++line; col = 1; } else ++col;
        }
        location = "line " + std::to_string(line) + ", column " + std::to_string(col);
      }
    }
    const auto sp = what.find("] ");
    throw input_error(file, location, "expected a finite number: " + (sp == std::string::npos ? what : what.substr(sp + 2)));
  }
}

template <int = 0>
std::string child(const std::string& ptr, std::string_view key) {
  std::string k(key);
  std::string escaped;
  for (char c : k) escaped += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return ptr + "/" + escaped;
}
template <int = 0>
std::string child(const std::string& ptr, std::size_t index) { return ptr + "/" + std::to_string(index); }

template <int = 0>
const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "a value";
  }
}

/// Reader bound to one file. A template (named through `reader`), so that its functions are
/// compiled where a reader calls them, not where this header is included.
template <int = 0>
class basic_reader {
 public:
  explicit basic_reader(std::string file) : file_(std::move(file)) {}
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  [[noreturn]] void fail(const std::string& ptr, const std::string& reason) const {
    throw input_error(file_, ptr.empty() ? "/" : ptr, reason);
  }
  const json& object(const json& v, const std::string& ptr) const {
    if (!v.is_object()) fail(ptr, std::string("expected an object, got ") + type_name(v));
    return v;
  }
  const json& array(const json& v, const std::string& ptr) const {
    if (!v.is_array()) fail(ptr, std::string("expected an array, got ") + type_name(v));
    return v;
  }
  /// The member `key` of object `v` (at `ptr`); missing is an error.
  const json& field(const json& v, std::string_view key, const std::string& ptr) const {
    object(v, ptr);
    const auto it = v.find(std::string(key));
    if (it == v.end()) fail(child(ptr, key), "missing required field");
    return *it;
  }
  [[nodiscard]] static const json* optional(const json& v, std::string_view key) {
    const auto it = v.find(std::string(key));
    return it == v.end() ? nullptr : &*it;
  }
  double number(const json& v, const std::string& ptr) const {
    if (!v.is_number()) fail(ptr, std::string("expected a number, got ") + type_name(v));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(ptr, "expected a finite number");
    return x;
  }
  double non_negative(const json& v, const std::string& ptr) const {
    const double x = number(v, ptr);
    if (x < 0) fail(ptr, "expected a number >= 0, got " + v.dump());
    return x;
  }
  double positive(const json& v, const std::string& ptr) const {
    const double x = number(v, ptr);
    if (!(x > 0)) fail(ptr, "expected a number > 0, got " + v.dump());
    return x;
  }
  std::int64_t integer(const json& v, const std::string& ptr) const {
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(ptr, "integer out of range");
      return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 9.0e15) return static_cast<std::int64_t>(x);
    }
    fail(ptr, std::string("expected an integer, got ") + (v.is_number() ? v.dump() : type_name(v)));
  }
  std::uint64_t count(const json& v, const std::string& ptr) const {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    const auto x = integer(v, ptr);
    if (x < 0) fail(ptr, "expected an integer >= 0, got " + v.dump());
    return static_cast<std::uint64_t>(x);
  }
  std::string string(const json& v, const std::string& ptr) const {
    if (!v.is_string()) fail(ptr, std::string("expected a string, got ") + type_name(v));
    return v.get<std::string>();
  }
  bool boolean(const json& v, const std::string& ptr) const {  // accepts true/false and 0/1
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer() || v.is_number_unsigned()) {
      const auto x = v.get<std::int64_t>();
      if (x == 0 || x == 1) return x == 1;
    }
    fail(ptr, std::string("expected a boolean or 0/1, got ") + (v.is_number() ? v.dump() : type_name(v)));
  }
  void format(const json& doc, std::string_view expected) const {
    const auto& f = field(doc, "format", "");
    const std::string s = string(f, "/format");
    if (s != expected) fail("/format", "unknown format '" + s + "' (expected '" + std::string(expected) + "')");
  }
  /// Checks an optional `units` object against the only values version 1 allows.
  void units(const json& doc, std::initializer_list<std::pair<std::string_view, std::string_view>> allowed) const {
    const json* u = optional(doc, "units");
    if (!u) return;
    object(*u, "/units");
    for (auto [key, value] : allowed)
      if (const json* x = optional(*u, key)) {
        const std::string p = child("/units", key);
        if (string(*x, p) != value) fail(p, "unit '" + x->get<std::string>() + "' is not supported (version 1 uses '" +
                                             std::string(value) + "')");
      }
  }

 private:
  std::string file_;
};
using reader = basic_reader<>;

/// Node ids in file order, mapped to their index: `add` reads the `id` of node object `n` at
/// `ptr` and fails on a duplicate; `edge` reads an edge object's `sourceId` / `destId` and maps
/// them, failing on an unknown id or a self-loop. The messages name the JSON pointer.
template <int = 0>
class basic_node_id_index {
 public:
  explicit basic_node_id_index(const basic_reader<>& r) : r_(&r) {}
  std::int64_t add(const json& n, const std::string& ptr) {
    const std::int64_t id = r_->integer(r_->field(n, "id", ptr), ptr + "/id");
    if (!index_.emplace(id, index_.size()).second) r_->fail(ptr + "/id", "duplicate node id " + std::to_string(id));
    return id;
  }
  struct edge_ends {
    std::int64_t source_id, dest_id;
    std::size_t from, to;
  };
  edge_ends edge(const json& e, const std::string& ptr) const {
    const auto src = r_->integer(r_->field(e, "sourceId", ptr), ptr + "/sourceId");
    const auto dst = r_->integer(r_->field(e, "destId", ptr), ptr + "/destId");
    const auto u = index_.find(src), v = index_.find(dst);
    if (u == index_.end()) r_->fail(ptr + "/sourceId", "unknown node id " + std::to_string(src));
    if (v == index_.end()) r_->fail(ptr + "/destId", "unknown node id " + std::to_string(dst));
    if (u->second == v->second) r_->fail(ptr, "self-loop on node " + std::to_string(src));
    return {src, dst, u->second, v->second};
  }

 private:
  const basic_reader<>* r_;
  std::unordered_map<std::int64_t, std::size_t> index_;
};
using node_id_index = basic_node_id_index<>;

}  // namespace devplace::io::detail
