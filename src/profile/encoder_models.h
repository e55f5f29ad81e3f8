#pragma once
// Transformer encoders built in code as ONNX models, node for node as PyTorch's exporter writes
// them (HuggingFace BERT, ViT and MobileViT modules under torch.onnx.export): weights as
// initializers, the attention heads split by Reshape with a shape computed from Shape → Gather →
// Unsqueeze → Concat, the padding mask turned into an additive one, GELU written out with Erf,
// SiLU as Sigmoid → Mul, BatchNorm folded into the convs before it (an eval model's export), and
// LayerNormalization whole at opset 17 or decomposed (ReduceMean → Sub → Pow → ReduceMean → Add →
// Sqrt → Div → Mul → Add) at opset 13. Weights are small pseudo-random values from a fixed seed:
// the models are for importing, running and timing, not for their outputs. Used by tests and by
// bench/make_encoders.

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
  // MobileViT (v1), which reads image, patch (2), heads, mlp_ratio (2) and classes above but not
  // layers or hidden: `channels` as HuggingFace's neck_hidden_sizes (the stem, the five stages, the
  // 1×1 expansion before pooling), the transformer width and layers of each MobileViT block
  // (stages 3 to 5), and the inverted residuals' expansion. Defaults: apple/mobilevit-xx-small's.
  std::vector<int> channels = {16, 16, 24, 48, 64, 80, 320};
  std::vector<int> block_hidden = {64, 80, 96};
  std::vector<int> block_layers = {2, 4, 3};
  int expand_ratio = 2;
};

/// The tokens an image encoder's layers see: (image / patch)² patches and the class token.
std::int64_t ImageTokens(const EncoderConfig& config);

/// BERT's encoder with its embeddings (word, position, token type) and pooler. Inputs input_ids,
/// attention_mask and token_type_ids [1, sequence] int64; outputs last_hidden_state
/// [1, sequence, hidden] and pooler_output [1, hidden].
std::string BertModelBytes(const EncoderConfig& config);

/// ViT's patch embedding (a strided conv), class token and position embeddings, pre-norm encoder
/// layers, final norm and classifier head. Input pixel_values [1, 3, image, image]; output logits
/// [1, classes].
std::string VitModelBytes(const EncoderConfig& config);

/// MobileViT's image classifier: a 3×3 stride-2 conv stem, MobileNetV2 inverted residuals, three
/// MobileViT blocks (local 3×3 and 1×1 convs, 2×2 patches unfolded by Reshape and Transpose,
/// pre-norm transformer layers with a SiLU MLP, a layer norm, folded back, 1×1 projection, concat
/// with the block's input, 3×3 fusion conv), a 1×1 expansion, the mean over height and width and
/// the classifier. Input pixel_values [1, 3, image, image] (image a multiple of 32 · patch: HF
/// interpolates other sizes, which this does not write); output logits [1, classes].
std::string MobileVitModelBytes(const EncoderConfig& config);

/// The shapes of the published small models at their usual sizes, each at both opsets:
/// BERT-mini (4 layers, 256 hidden, 4 heads) at sequence lengths 64, 128 and 384, ViT-tiny
/// (12 layers, 192 hidden, 3 heads) at 160 and 224 pixels, MobileViT-xx-small at 192 and 256
/// (its published size). With `vocab`, the text encoders' vocabulary (30522 for the real size).
std::vector<EncoderConfig> PublishedShapes(int vocab = 30522);

/// The serialized model of `config`: BERT when its name starts with "bert", MobileViT when it
/// starts with "mobilevit", else ViT.
std::string ModelBytes(const EncoderConfig& config);

}  // namespace latte::encoders
