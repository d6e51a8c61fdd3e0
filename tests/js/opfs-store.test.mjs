// The OPFS store of one downloading file (src/js/hub/opfs-cache.js) over an in-memory stand-in for
// the origin private file system (the handles' few methods it calls, with the browser's errors), so
// the paths a tiny fixture never reaches are checked here: bytes arriving in network-sized pieces
// across several chunk files, a download closed mid-chunk and resumed by a new store, reads across
// chunk boundaries (written and pending bytes), and the whole file read back byte for byte.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { kChunk, opfsStore } from '../../src/js/hub/opfs-cache.js';

const notFound = () => Object.assign(new Error('not found'), { name: 'NotFoundError' });

// A directory of the stand-in: files hold one Uint8Array, written whole by createWritable's close.
class Dir {
  entriesMap = new Map();
  async getDirectoryHandle(name, { create = false } = {}) {
    if (!this.entriesMap.has(name)) {
      if (!create) throw notFound();
      this.entriesMap.set(name, new Dir());
    }
    return this.entriesMap.get(name);
  }
  async getFileHandle(name, { create = false } = {}) {
    if (!this.entriesMap.has(name)) {
      if (!create) throw notFound();
      this.entriesMap.set(name, new FileEntry());
    }
    return this.entriesMap.get(name);
  }
  async removeEntry(name) {
    if (!this.entriesMap.delete(name)) throw notFound();
  }
}
class FileEntry {
  bytes = new Uint8Array(0);
  writes = 0;
  async getFile() {
    return new Blob([this.bytes]);
  }
  async createWritable() {
    const parts = [];
    return {
      write: async (data) => parts.push(new Uint8Array(data)), // copied, as the browser's stream
      close: async () => {
        this.bytes = new Uint8Array(await new Blob(parts).arrayBuffer());
        this.writes++;
      },
      abort: async () => {},
    };
  }
}

const kPiece = 64 * 1024; // a network read's size
const source = (n) => Uint8Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 24);

async function appendInPieces(store, bytes, from, to) {
  for (let at = from; at < to; at += kPiece)
    await store.append(bytes.subarray(at, Math.min(to, at + kPiece)));
}

it('a download in 64 KB pieces across chunk files, closed mid-chunk and resumed, reads back exactly', async () => {
  const size = 2 * kChunk + 3 * kPiece + 123; // two whole chunks and a short last one
  const bytes = source(size);
  const repoDir = new Dir();
  const info = { key: 'sha', size, path: 'model.gguf' };
  const cut = kChunk + 5 * kPiece + 7; // mid second chunk, not on a piece boundary

  const first = await opfsStore(repoDir, 'test/r', info);
  await appendInPieces(first, bytes, 0, cut);
  assert.equal(first.have, cut);
  // a read spanning the written first chunk and the pending bytes of the second
  const span = await first.read(kChunk - 1000, kChunk + 1000);
  assert.deepEqual(span, bytes.subarray(kChunk - 1000, kChunk + 1000));
  await first.close(); // what arrived is kept

  const blob = (await repoDir.getDirectoryHandle('blobs')).entriesMap.get('sha');
  assert.deepEqual([...blob.entriesMap.keys()].sort(), ['00000000', '00000001']);
  assert.equal(blob.entriesMap.get('00000000').bytes.length, kChunk);
  assert.equal(blob.entriesMap.get('00000001').bytes.length, cut - kChunk);

  const resumed = await opfsStore(repoDir, 'test/r', info);
  assert.equal(resumed.have, cut, 'the resumed store starts after the kept bytes');
  await appendInPieces(resumed, bytes, cut, size);
  await resumed.finish();
  assert.equal(blob.entriesMap.get('00000001').bytes.length, kChunk, 'the short chunk rewritten whole');
  assert.equal(blob.entriesMap.get('00000002').bytes.length, size - 2 * kChunk);
  assert.ok(blob.entriesMap.has('done'));

  const reopened = await opfsStore(repoDir, 'test/r', info);
  assert.deepEqual(await reopened.read(0, size), bytes);
  assert.deepEqual(
    await reopened.read(2 * kChunk - 5, 2 * kChunk + 5),
    bytes.subarray(2 * kChunk - 5, 2 * kChunk + 5),
  );
});

it('finish with bytes missing is a NETWORK error, nothing marked done', async () => {
  const repoDir = new Dir();
  const store = await opfsStore(repoDir, 'test/r', { key: 'k', size: 1000, path: 'f' });
  await store.append(source(999));
  await assert.rejects(store.finish(), (e) => e.code === 'NETWORK' && /999 of 1000 bytes/.test(e.message));
  const blob = (await repoDir.getDirectoryHandle('blobs')).entriesMap.get('k');
  assert.ok(!blob.entriesMap.has('done'));
});
