#pragma once
// The table `latte fit` and `latte calibrate` print: per kernel kind and predictor, the
// cross-validated RMSPE and share within ±5% / ±10%, which one was selected and what failed.

#include <string>

#include "calibrate/fit_store.h"

namespace latte {

/// "K-fold cross-validation on N measurements (device, backend, threads, precision)" and the table.
std::string FitReportText(const StoreFit& fit, int folds);

}  // namespace latte
