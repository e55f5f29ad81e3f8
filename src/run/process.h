#pragma once
// This process's memory, and a measurement run in a child process of its own: what a run's
// peak resident set means only when nothing measured before it shares the process.

#include <cstddef>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace latte {

/// Runs `work` in a forked child and returns the JSON object it returned, or why there is none
/// (the child died of a signal, threw, or wrote no report).
Expected<nlohmann::json> RunInChild(const std::function<nlohmann::json()>& work);

/// This process's peak resident set in KB (VmHWM; for a forked child its own peak, which starts
/// at its resident set when forked, or when last reset).
long PeakRssKb();

/// Starts measuring from a clean slate: returns the heap's free memory to the system (so memory
/// freed earlier and reused shows as growth again) and resets the peak resident set to the
/// current one. False when the peak cannot be reset (a kernel without /proc/self/clear_refs).
bool ResetMemoryHighWater();

/// This process's resident set now, in KB (/proc/self/statm); 0 if unreadable.
long CurrentRssKb();

/// Heap bytes this process has allocated and not freed (malloc's own count, or the sanitizer
/// allocator's in a sanitized build): the difference around a call is what it kept.
std::size_t HeapBytesInUse();

}  // namespace latte
