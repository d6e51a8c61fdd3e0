// ONNX graphs of the benchmark's multi-head attention, encoded as protobuf directly from JS so the
// benchmark needs neither Python nor the `onnx` package.
//
// Only the handful of onnx.proto messages the graphs use are encoded (field numbers from
// onnx/onnx.proto, IR version 8 = opset 17):
//   ModelProto { ir_version 1, producer_name 2, graph 7, opset_import 8 }
//   OperatorSetIdProto { domain 1, version 2 }
//   GraphProto { node 1, name 2, initializer 5, input 11, output 12 }
//   NodeProto { input 1, output 2, name 3, op_type 4, attribute 5, domain 7 }
//   AttributeProto { name 1, f 2, i 3, ints 8, type 20 }        (type: FLOAT 1, INT 2, INTS 7)
//   TensorProto { dims 1, data_type 2, name 8, raw_data 9 }     (data_type: FLOAT 1, INT64 7)
//   ValueInfoProto { name 1, type 2 } → TypeProto { tensor_type 1 } → { elem_type 1, shape 2 }
//   TensorShapeProto { dim 1 } → Dimension { dim_value 1, dim_param 2 }
//
// Weights follow torch.nn.MultiheadAttention (nn.Linear stores W as (out, in), y = x·Wᵀ + b); the
// graphs store the transposes so every projection is a plain MatMul(x, Wᵀ).

// ---- protobuf wire format ---------------------------------------------------------------------

const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_BYTES = 2;

const utf8 = new TextEncoder();

/** Growable byte sink with the three wire types we need. */
class Writer {
  constructor() {
    this.chunks = [];
    this.length = 0;
  }

  push(bytes) {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }

  // Varint of a safe integer (int32/int64/enum fields). Negative values are encoded as 64-bit
  // two's complement (10 bytes), as protobuf does for int64 (Softmax axis = -1 needs it).
  varint(value) {
    if (!Number.isSafeInteger(value)) throw new Error(`protobuf varint needs a safe integer, got ${value}`);
    let v = BigInt.asUintN(64, BigInt(value));
    const out = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
  }

  tag(field, wire) {
    this.varint(field * 8 + wire);
  }

  int(field, value) {
    this.tag(field, WIRE_VARINT);
    this.varint(value);
  }

  float(field, value) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.tag(field, WIRE_FIXED32);
    this.push(b);
  }

  bytes(field, bytes) {
    this.tag(field, WIRE_BYTES);
    this.varint(bytes.length);
    this.push(bytes);
  }

  string(field, text) {
    this.bytes(field, utf8.encode(text));
  }

  // An embedded message built by `build(writer)`.
  message(field, build) {
    const sub = new Writer();
    build(sub);
    this.bytes(field, sub.finish());
  }

  finish() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

// ---- ONNX messages ------------------------------------------------------------------------------

const DT_FLOAT = 1;
const DT_INT64 = 7;
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

/** TensorProto: { name, dims, float32: Float32Array } or { name, dims, int64: number[] }. */
function writeTensor(w, t) {
  for (const d of t.dims) w.int(1, d);
  if (t.float32) {
    w.int(2, DT_FLOAT);
    w.string(8, t.name);
    const raw = new Uint8Array(t.float32.buffer, t.float32.byteOffset, t.float32.byteLength);
    w.bytes(9, raw.slice()); // raw_data is little-endian, as is every engine we run on
  } else {
    w.int(2, DT_INT64);
    w.string(8, t.name);
    const raw = new Uint8Array(8 * t.int64.length);
    const view = new DataView(raw.buffer);
    t.int64.forEach((v, i) => view.setBigInt64(8 * i, BigInt(v), true));
    w.bytes(9, raw);
  }
}

/** AttributeProto from a JS value: integer → INT, other number → FLOAT, number[] → INTS. */
function writeAttribute(w, name, value) {
  w.string(1, name);
  if (Array.isArray(value)) {
    for (const v of value) w.int(8, v); // repeated int64, unpacked (the proto2 default)
    w.int(20, ATTR_INTS);
  } else if (Number.isInteger(value)) {
    w.int(3, value);
    w.int(20, ATTR_INT);
  } else {
    w.float(2, value);
    w.int(20, ATTR_FLOAT);
  }
}

/** NodeProto: { op, inputs, outputs, name, domain?, attrs? }. */
function writeNode(w, n) {
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, n.name);
  w.string(4, n.op);
  for (const [k, v] of Object.entries(n.attrs ?? {})) {
    w.message(5, (a) => writeAttribute(a, k, v));
  }
  if (n.domain) w.string(7, n.domain);
}

/** ValueInfoProto of a float tensor; dims are numbers or symbolic names. */
function writeValueInfo(w, name, dims) {
  w.string(1, name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, DT_FLOAT);
      tensor.message(2, (shape) => {
        for (const d of dims) {
          shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
        }
      });
    }),
  );
}

/** ModelProto bytes for { nodes, initializers, inputs: [[name, dims]], outputs: [[name, dims]] }. */
export function encodeModel({ name, nodes, initializers, inputs, outputs, opsets }) {
  const w = new Writer();
  w.int(1, 8); // ir_version 8 (ONNX 1.10+, opset 17)
  w.string(2, 'attention-wasm bench');
  w.message(7, (g) => {
    for (const n of nodes) g.message(1, (m) => writeNode(m, n));
    g.string(2, name);
    for (const t of initializers) g.message(5, (m) => writeTensor(m, t));
    for (const [n, dims] of inputs) g.message(11, (m) => writeValueInfo(m, n, dims));
    for (const [n, dims] of outputs) g.message(12, (m) => writeValueInfo(m, n, dims));
  });
  for (const [domain, version] of opsets) {
    w.message(8, (o) => {
      if (domain) o.string(1, domain);
      o.int(2, version);
    });
  }
  return w.finish();
}

// ---- the two MHA graphs ---------------------------------------------------------------------------

/** (rows, cols) row-major → its transpose (cols, rows). */
export function transpose2d(a, rows, cols) {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = a[r * cols + c];
  return t;
}

/**
 * MHA weights in PyTorch layout → the tensors both graphs use.
 * weights: { inProjWeight (3E, E), inProjBias (3E), outProjWeight (E, E), outProjBias (E) }
 */
function graphWeights(E, weights) {
  const wqkvT = transpose2d(weights.inProjWeight, 3 * E, E); // (E, 3E): [Wqᵀ | Wkᵀ | Wvᵀ]
  const part = (i) => transpose2d(weights.inProjWeight.subarray(i * E * E, (i + 1) * E * E), E, E);
  return {
    wqkvT,
    wqT: part(0), // (E, E)
    wkT: part(1),
    wvT: part(2),
    bq: weights.inProjBias.slice(0, E), // (E)
    bk: weights.inProjBias.slice(E, 2 * E),
    bv: weights.inProjBias.slice(2 * E, 3 * E),
    bqkv: weights.inProjBias.slice(), // (3E)
    woT: transpose2d(weights.outProjWeight, E, E), // (E, E)
    bo: weights.outProjBias.slice(), // (E)
  };
}

const IO = (E) => ({ inputs: [['x', ['B', 'T', E]]], outputs: [['y', ['B', 'T', E]]] });

/**
 * (a) Standard opset-17 ops only:
 *   1. q/k/v = x·Wᵀ + b                       (B, T, E) each
 *   2. split heads: Reshape (B, T, H, dk), Transpose → q, v (B, H, T, dk); kᵀ (B, H, dk, T)
 *   3. scores = q·kᵀ (B, H, T, T); scaled = scores · 1/√dk; weights = Softmax(axis −1)
 *   4. context = weights·v (B, H, T, dk) → Transpose (B, T, H, dk) → Reshape (B, T, E)
 *   5. y = context·Woᵀ + bo                    (B, T, E)
 */
export function plainMhaModel(E, H, weights) {
  const dk = E / H;
  const w = graphWeights(E, weights);
  const f = (name, dims, float32) => ({ name, dims, float32 });
  const initializers = [
    f('WqT', [E, E], w.wqT),
    f('WkT', [E, E], w.wkT),
    f('WvT', [E, E], w.wvT),
    f('bq', [E], w.bq),
    f('bk', [E], w.bk),
    f('bv', [E], w.bv),
    f('WoT', [E, E], w.woT),
    f('bo', [E], w.bo),
    f('scale', [], Float32Array.of(1 / Math.sqrt(dk))),
    { name: 'heads_shape', dims: [4], int64: [0, 0, H, dk] }, // 0 = copy B, T from the input
    { name: 'merged_shape', dims: [3], int64: [0, 0, E] },
  ];
  const nodes = [];
  const node = (op, inputs, outputs, attrs) => nodes.push({ op, inputs, outputs, attrs, name: outputs[0] });
  for (const p of ['q', 'k', 'v']) {
    node('MatMul', ['x', `W${p}T`], [`${p}_mm`]); // step 1
    node('Add', [`${p}_mm`, `b${p}`], [`${p}_lin`]);
    node('Reshape', [`${p}_lin`, 'heads_shape'], [`${p}_heads`]); // step 2
    node('Transpose', [`${p}_heads`], [`${p}_t`], { perm: p === 'k' ? [0, 2, 3, 1] : [0, 2, 1, 3] });
  }
  node('MatMul', ['q_t', 'k_t'], ['scores']); // step 3
  node('Mul', ['scores', 'scale'], ['scaled']);
  node('Softmax', ['scaled'], ['attn'], { axis: -1 });
  node('MatMul', ['attn', 'v_t'], ['context']); // step 4
  node('Transpose', ['context'], ['context_t'], { perm: [0, 2, 1, 3] });
  node('Reshape', ['context_t', 'merged_shape'], ['concat']);
  node('MatMul', ['concat', 'WoT'], ['out_mm']); // step 5
  node('Add', ['out_mm', 'bo'], ['y']);
  return encodeModel({ name: 'mha_plain', nodes, initializers, ...IO(E), opsets: [['', 17]] });
}

/**
 * (b) ONNX Runtime's fused contrib op com.microsoft.Attention (packed QKV projection, scaled
 * softmax attention, head merge in one kernel), followed by the output projection:
 *   1. concat = Attention(x, [Wqᵀ|Wkᵀ|Wvᵀ] (E, 3E), [bq|bk|bv] (3E), num_heads = H)   (B, T, E)
 *   2. y = concat·Woᵀ + bo                                                              (B, T, E)
 */
export function fusedMhaModel(E, H, weights) {
  const w = graphWeights(E, weights);
  const initializers = [
    { name: 'Wqkv', dims: [E, 3 * E], float32: w.wqkvT },
    { name: 'bqkv', dims: [3 * E], float32: w.bqkv },
    { name: 'WoT', dims: [E, E], float32: w.woT },
    { name: 'bo', dims: [E], float32: w.bo },
  ];
  const nodes = [
    {
      op: 'Attention',
      domain: 'com.microsoft',
      inputs: ['x', 'Wqkv', 'bqkv'],
      outputs: ['concat'],
      name: 'attention',
      attrs: { num_heads: H },
    },
    { op: 'MatMul', inputs: ['concat', 'WoT'], outputs: ['out_mm'], name: 'out_mm' },
    { op: 'Add', inputs: ['out_mm', 'bo'], outputs: ['y'], name: 'y' },
  ];
  return encodeModel({
    name: 'mha_fused',
    nodes,
    initializers,
    ...IO(E),
    opsets: [
      ['', 17],
      ['com.microsoft', 1],
    ],
  });
}
