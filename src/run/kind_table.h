#pragma once
// A backend's one list of the kinds it runs: each kind with what analyzes and creates its node,
// so that what it supports and how it runs each kind cannot disagree.

#include <initializer_list>
#include <map>

#include "ir/op_kind.h"

namespace latte {

template <typename Handler>
class KindTable {
 public:
  /// Runs each of `kinds` with `handler` (a later Add of a kind replaces the earlier one).
  KindTable& Add(std::initializer_list<OpKind> kinds, Handler handler) {
    for (OpKind kind : kinds) handlers_[kind] = handler;
    return *this;
  }
  KindTable& Add(OpKind kind, Handler handler) { return Add({kind}, handler); }
  /// The handler of `kind`, or null when the backend does not run it.
  const Handler* Find(OpKind kind) const {
    const auto it = handlers_.find(kind);
    return it == handlers_.end() ? nullptr : &it->second;
  }

 private:
  std::map<OpKind, Handler> handlers_;
};

}  // namespace latte
