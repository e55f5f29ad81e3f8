#pragma once
// Fitting a pack on the store's measurements of one device + backend configuration: the step
// `latte fit` and `latte calibrate` share. Refuses to mix devices or configurations (a pack is
// for one), and says how to choose.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibrate/drift_correction.h"
#include "db/store.h"
#include "predict/context_model.h"
#include "predict/fit.h"

namespace latte {

struct BackendFactory;

struct StoreFitRequest {
  std::string db;              // store file (must exist; opened read-only)
  MeasurementFilter filter;    // backend required; device, threads, precision choose a configuration
  FitOptions options;
  /// The fusion rules written into the pack. Unset: the fused kinds present in the measurements.
  std::optional<std::vector<std::string>> fusion_rules;
  std::string command;         // provenance: the command that made the pack
  std::string latte_version = "0.1.0";
  /// Scale each measurement to the drift reference's median level (calibrate/drift_correction).
  bool correct_drift = true;
  /// Samples from elsewhere (`calibrate --from`: a pack's kernels as adapted to this machine)
  /// fitted with the store's measurements, each only where the store has no measurement of the
  /// same kernel: what was measured here wins. Of each kind the fitted predictors get at most as
  /// many as the store measured (at least 200), spread over sizes; none joins the tables (they
  /// are predictions, not measurements: `measured` false).
  /// `prior_source` names them in the report.
  std::vector<TrainingSample> prior;
  std::string prior_source;
  /// The drift reference's reading when the prior was made (adapt's reading here): the prior is
  /// scaled from it to the pack's reference level, as measurements are. 0: used as given.
  double prior_reference_us = 0;
  /// Written into the pack (PackInfo::backend_takes_nhwc): the backend's registration says it.
  std::optional<bool> backend_takes_nhwc;
  /// The backend's NCHWc block (BackendFactory::nchwc_block): with `fusion_rules` unset, a measured
  /// residual kind becomes a rule that holds where that pass fuses it ("conv2d+add@nchwc16").
  int nchwc_block = 0;
  /// BackendFactory::channels_in_vectors: the predictors count a conv's work in whole vectors of
  /// output channels, the vector being the measurements' device's (FloatLanes).
  bool channels_in_vectors = false;
};

struct StoreFit {
  FitResult fit;
  std::size_t measurements = 0;  // rows the fit was given: the matching ones but those left out
  /// Matching rows not fitted, by id: damaged figures (see DamagedMeasurement) or a p50 of 0.
  std::vector<DamagedMeasurement> left_out;
  std::string device_key;
  DriftCorrection drift;  // what scaling the measurements to one machine speed did
  DriftCorrection layers_drift;  // the same for the layers of networks measured in context
  std::size_t prior_used = 0;     // of StoreFitRequest::prior: of kernels this store did not measure
  std::size_t prior_fitted = 0;   // of which the fitted predictors were given (spread over sizes)
  std::size_t prior_replaced = 0; // not fitted: this store measured the same kernel
  std::string prior_source;
  double prior_scale = 1;         // the prior's times × this (StoreFitRequest::prior_reference_us)
  /// What became of the in-graph context: fitted (on how many networks, how well), or why the
  /// pack has none (no layers measured in context for this configuration, too few networks).
  std::string context_note;
  /// How the pack's 90% interval is made: calibrated on how many networks, with which ratios, or
  /// why it is not (too few networks).
  std::string interval_note;
};

/// Sets what the backend's registration says about how it runs kernels, and so how the pack plans
/// and counts them (the request's backend_takes_nhwc, nchwc_block and channels_in_vectors, its
/// options' clamps_run_apart and channels_not_in_vectors), replacing what they held. nullptr, a
/// backend this latte does not run (an imported table's, such as TensorRT's): the file's layout,
/// no NCHWc pass, channels counted as they are, clamps inside the kernels.
void SetBackendTraits(const BackendFactory* backend, StoreFitRequest& request);

/// Reads the matching measurements and fits a pack on them, with the in-graph context fitted on
/// the layers measured in context (profile/graph_context) on the same device and configuration
/// when there are enough. Errors name the store file.
Expected<StoreFit> FitFromStore(const StoreFitRequest& request);

/// The campaigns of `store` that measured transformer encoders in context (graph_context's third
/// family: a pack fits their context and interval apart from the CNN networks').
Expected<std::set<std::int64_t>> EncoderCampaigns(const Store& store);

/// `layers` (as QueryGraphLayers returns them: by campaign, graph, layer) grouped by network.
std::vector<MeasuredNetwork> GroupNetworks(const std::vector<StoredGraphLayer>& layers);

/// Sets each layer's LayerTraffic::layout_bytes: what ONNX Runtime's NCHWc pass (of `block`)
/// reorders around it in its network, rebuilt from the stored kernels (ir/nchwc_layout). Returns
/// how many networks could not be rebuilt (their layers keep 0).
std::size_t CountNchwcReorders(std::vector<MeasuredNetwork>& networks, int block);

/// The caches the campaigns of `layers` ran on, from their spaces; {0, 0} when a space does not
/// say. kInvalidInput when the campaigns ran with different cache sizes; the store's errors name
/// its file.
Expected<ContextCaches> ContextCachesOf(const Store& store, const std::vector<StoredGraphLayer>& layers);

/// "measurement 12: p50 is not a number ('abc'); measurement 14: ...; and 3 more": the first
/// `shown` rows left out of a fit, and how many others.
std::string DescribeLeftOut(const std::vector<DamagedMeasurement>& left_out, std::size_t shown = 5);

/// The current time as ISO 8601 UTC ("2026-11-23T09:34:00Z"), as packs record it.
std::string NowUtcIso8601();

}  // namespace latte
