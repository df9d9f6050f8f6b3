#pragma once
/// \file io/detail/json_fwd.hpp
/// What a reader's or writer's declaration header needs of nlohmann/json: the forward declaration
/// of `nlohmann::json` (enough for parameters taken by reference), and `json_t<N>`, the same type
/// for the return type of a writer declared as `template <int N = 0>`: a return type that depends
/// on `N` is only required to be complete where the writer is called, where the caller has
/// included <nlohmann/json.hpp> (a non-dependent one would have to be complete in the header).
#include <nlohmann/json_fwd.hpp>

namespace devplace::io::detail {

template <int>
struct json_type {
  using type = nlohmann::json;
};

/// `nlohmann::json` for any `N`.
template <int N>
using json_t = typename json_type<N>::type;

}  // namespace devplace::io::detail
