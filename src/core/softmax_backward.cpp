// TEMPORARY (replaced by the wt-ops branch at merge)
#include "core/softmax_backward.h"
namespace attn {
void softmax_backward_row(int n, const float* y, const float* dy, float* dx) {
  float dot = 0.0f;
  for (int j = 0; j < n; ++j) dot += dy[j] * y[j];
  for (int j = 0; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
}
}
