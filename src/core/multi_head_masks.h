// The masks of MultiHeadAttention::forward (mask, additiveMask: (Tq, Tk) or (B·H, Tq, Tk);
// keyPaddingMask: (B, Tk)) added to a MaskPlan over (B, H, Tq, Tk). Internal to the core.
#pragma once
#include "core/mask_plan.h"
#include "core/multi_head.h"

namespace attn {

Status mha_masks_to_plan(const MhaForwardOptions& options, MaskPlan& plan, int b, int h);

}  // namespace attn
