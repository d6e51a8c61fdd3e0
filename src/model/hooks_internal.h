// Internal to the hooks (hook_names.cpp, hooks.cpp): facts about a hook point of a model.
#pragma once
#include "model/hooks.h"

namespace attn {

bool hook_exists(const HookShapes& shapes, const HookId& id);
// The hook's axes at one position, after (B, T): the stream's (E), q's (H, d), the MLP's (I); the
// scores and the pattern: (H, kHookTimeAxis), their (B, H, T, T_k) being no position's suffix.
Shape hook_position_shape(const HookShapes& shapes, const HookId& id);
bool is_score_hook(HookKind kind);
// q, k, v, rot_q, rot_k, scores, pattern, z: the attention's hooks, which `heads` may restrict.
bool is_head_hook(HookKind kind);
// A DeltaNet layer's linear_attn.hook_* (delta_net.h).
bool is_delta_hook(HookKind kind);

}  // namespace attn
