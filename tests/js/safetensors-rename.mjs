// Shared by the multimodal wrapper tests (pretrained-wrappers, pretrained-gemma4 .test.mjs): a tiny
// fixture's safetensors file as a composition class saves it, every tensor renamed and a tower's added.

// A safetensors file's bytes with every tensor renamed by `rename` and one more F32 tensor (name, values).
export function renamed(bytes, rename, extra) {
  const u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  const length = Number(new DataView(u8.buffer, u8.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + length)));
  const data = u8.subarray(8 + length);
  const out = {};
  for (const [name, entry] of Object.entries(header))
    out[name === '__metadata__' ? name : rename(name)] = entry;
  const extraBytes = new Uint8Array(new Float32Array(extra.values).buffer);
  out[extra.name] = {
    dtype: 'F32',
    shape: [extra.values.length],
    data_offsets: [data.length, data.length + extraBytes.length],
  };
  let head = new TextEncoder().encode(JSON.stringify(out));
  head = new Uint8Array([...head, ...new Array((8 - (head.length % 8)) % 8).fill(0x20)]);
  const file = new Uint8Array(8 + head.length + data.length + extraBytes.length);
  new DataView(file.buffer).setBigUint64(0, BigInt(head.length), true);
  file.set(head, 8);
  file.set(data, 8 + head.length);
  file.set(extraBytes, 8 + head.length + data.length);
  return file;
}
