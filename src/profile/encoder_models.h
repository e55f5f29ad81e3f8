#pragma once
// Transformer encoders built in code as ONNX models, node for node as PyTorch's exporter writes
// them (HuggingFace BERT and ViT modules under torch.onnx.export): weights as initializers, the
// attention heads split by Reshape with a shape computed from Shape → Gather → Unsqueeze → Concat,
// the padding mask turned into an additive one, GELU written out with Erf, and LayerNormalization
// whole at opset 17 or decomposed (ReduceMean → Sub → Pow → ReduceMean → Add → Sqrt → Div → Mul →
// Add) at opset 13. Weights are small pseudo-random values from a fixed seed: the models are for
// importing, running and timing, not for their outputs. Used by tests and by bench/make_encoders.

#include <cstdint>
#include <string>
#include <vector>

namespace latte::encoders {

struct EncoderConfig {
  std::string name;
  int layers = 4;
  int hidden = 256;
  int heads = 4;
  int mlp_ratio = 4;
  int opset = 17;  // 17: LayerNormalization whole; 13 (or anything below 17): decomposed
  // Text encoders: tokens per input and the vocabulary (BERT's is 30522; tests use a small one).
  int sequence = 128;
  int vocab = 30522;
  int max_positions = 512;  // the position table's rows (BERT's 512; longer-context encoders have more)
  // Image encoders: square input of `image` pixels cut into `patch`-pixel patches, plus a class
  // token: (image / patch)² + 1 tokens.
  int image = 224;
  int patch = 16;
  int classes = 1000;
};

/// BERT's encoder with its embeddings (word, position, token type) and pooler. Inputs input_ids,
/// attention_mask and token_type_ids [1, sequence] int64; outputs last_hidden_state
/// [1, sequence, hidden] and pooler_output [1, hidden].
std::string BertModelBytes(const EncoderConfig& config);

/// ViT's patch embedding (a strided conv), class token and position embeddings, pre-norm encoder
/// layers, final norm and classifier head. Input pixel_values [1, 3, image, image]; output logits
/// [1, classes].
std::string VitModelBytes(const EncoderConfig& config);

/// The shapes of the published small models at their usual sizes, each at both opsets:
/// BERT-mini (4 layers, 256 hidden, 4 heads) at sequence lengths 64, 128 and 384, ViT-tiny
/// (12 layers, 192 hidden, 3 heads) at 160 and 224 pixels. With `vocab`, the text encoders'
/// vocabulary (30522 for the real size).
std::vector<EncoderConfig> PublishedShapes(int vocab = 30522);

/// The serialized model of `config`: BERT when its name starts with "bert", else ViT.
std::string ModelBytes(const EncoderConfig& config);

}  // namespace latte::encoders
