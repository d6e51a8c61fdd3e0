// A Hub file as a range source (../range-source.js), read with HTTP range requests. Without a cache,
// each read fetches just its bytes. With one (a store: the Node cache's blob, the browser's OPFS
// entry), the file is appended to the store in order and each read served from it: a read past what
// is stored fetches the bytes up to its end, so the GGUF header comes first and the weights only once
// the loader has checked it, and a cut download resumes from the last byte stored.
import { AttentionError } from '../errors.js';
import { rangeSource } from '../range-source.js';
import { aborted, hubFetch } from './api.js';

/** Attempts of one range before its failure is thrown (each resumes from the last byte received). */
export const kRangeAttempts = 3;

// The [begin, end) bytes the response holds: a 206 must start at `begin`; a 200 is the whole file.
function checkRange(response, begin, size, name) {
  if (response.status === 200 && begin === 0) return;
  const range = response.headers.get('content-range')?.match(/^bytes (\d+)-(\d+)\/(\d+|\*)$/);
  if (response.status !== 206 || !range || Number(range[1]) !== begin)
    throw new AttentionError(
      'NETWORK',
      `${name}: the server did not answer the range from byte ${begin} (HTTP ${response.status})`,
    );
  if (range[3] !== '*' && Number(range[3]) !== size)
    throw new AttentionError(
      'NETWORK',
      `${name}: the file is ${range[3]} bytes, the listing said ${size} (it changed: load again)`,
    );
}

/**
 * Streams bytes [begin, end) of the file into `sink(bytes)` (awaited), resuming after a cut from the
 * last byte received; `onBytes(n)` after each piece. NETWORK after kRangeAttempts failures in a row.
 */
export async function fetchRange(f, begin, end, sink, onBytes) {
  let at = begin;
  let failures = 0;
  while (at < end) {
    try {
      const response = await hubFetch(f.url, {
        token: f.token,
        signal: f.signal,
        headers: { Range: `bytes=${at}-${end - 1}` },
        what: `${f.repo}: ${f.name}`,
      });
      checkRange(response, at, f.size, f.name);
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const take = value.subarray(0, Math.min(value.length, end - at)); // a 200 may run past `end`
        if (take.length) {
          await sink(take);
          at += take.length;
          failures = 0;
          onBytes(take.length);
        }
        if (at >= end) break;
      }
      await reader.cancel().catch(() => {});
      if (at < end) throw new Error('the connection closed early');
    } catch (error) {
      if (f.signal?.aborted) throw aborted();
      if (error instanceof AttentionError && error.code !== 'NETWORK') throw error;
      if (++failures >= kRangeAttempts)
        throw new AttentionError(
          'NETWORK',
          `${f.repo}: ${f.name}: the download failed at byte ${at} of ${f.size} (${error.message})${f.resumable ? '; the bytes received are kept: loading again resumes from there' : ''}`,
        );
    }
  }
}

// Reads straight from the network: each read fetches its own range into one buffer.
function networkRead(f, progress) {
  return async (begin, end) => {
    const out = new Uint8Array(end - begin);
    let at = 0;
    await fetchRange(
      f,
      begin,
      end,
      (bytes) => {
        out.set(bytes, at);
        at += bytes.length;
      },
      (n) => progress.add(n, true),
    );
    return out;
  };
}

// Reads through the store: what is stored is read back; the rest is fetched in order up to the read's
// end and appended first (one download at a time, so the store grows in order).
function storeRead(f, store, progress) {
  let pending = Promise.resolve();
  const fill = (end) => {
    pending = pending.then(async () => {
      if (store.have < end)
        await fetchRange(
          f,
          store.have,
          end,
          (bytes) => store.append(bytes),
          (n) => progress.add(n, true),
        );
    });
    return pending;
  };
  return async (begin, end) => {
    if (store.have < end) await fill(end);
    return store.read(begin, end);
  };
}

/**
 * The file as a range source. `f`: { repo, name, size, url, token, signal }; `store`: null (no cache)
 * or a store { have, append(bytes), read(begin, end) }; `progress`: { add(bytes, fromNetwork) }.
 * Also returns complete(): fetches what the loader did not read (padding, the end) into the store.
 */
export function hubSource(f, store, progress) {
  const file = { ...f, resumable: store !== null };
  const fileProgress = { add: (n, fromNetwork) => progress.add(n, fromNetwork, f.name) };
  if (store?.have) fileProgress.add(store.have, false);
  const read = store ? storeRead(file, store, fileProgress) : networkRead(file, fileProgress);
  const source = rangeSource({ name: f.name, size: f.size, read });
  return { source, complete: () => read(f.size, f.size) };
}

/** Bytes and rate of a load's files: onProgress(done, total, { phase: 'download', file, bytesPerSecond }). */
export function downloadProgress(total, onProgress, now = () => globalThis.performance?.now() ?? Date.now()) {
  let done = 0;
  let fetched = 0;
  let started = null;
  return {
    total,
    add(n, fromNetwork, file) {
      done += n;
      if (fromNetwork) {
        started ??= now();
        fetched += n;
      }
      const seconds = started === null ? 0 : (now() - started) / 1000;
      const bytesPerSecond = seconds > 0 ? fetched / seconds : 0;
      // without a cache a byte may be read twice (a header prefix, then its tensor): done stays ≤ total
      onProgress?.(Math.min(done, this.total), this.total, { phase: 'download', file, bytesPerSecond });
    },
  };
}
