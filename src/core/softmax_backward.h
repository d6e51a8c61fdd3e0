// TEMPORARY (replaced by the wt-ops branch at merge)
#pragma once
namespace attn {
void softmax_backward_row(int n, const float* y, const float* dy, float* dx);
}
