// The Hugging Face Hub: loadPretrained({ hub }) and the cache of what it downloaded (docs/hub.md).
import type { LoadGGUFOptions } from './pretrained.js';

/** onProgress's third argument for a Hub load: downloading (with the rate) or copying into the heap. */
export type HubProgress = { phase: 'download'; file: string; bytesPerSecond: number } | { phase: 'load' };

/**
 * {@link loadPretrained}'s options for a repository of the Hugging Face Hub: its files listed through
 * the Hub's API, a GGUF file (by name or quantization; a split one's parts joined) or the safetensors
 * folder (config, weights or shards, tokenizer, generation config, chat template) read with HTTP
 * range requests, the GGUF header checked before any weight is fetched. Errors: NEEDS_TOKEN (401),
 * NO_ACCESS (403), NOT_FOUND (a repository, revision, file or quantization; the ones present listed),
 * NETWORK (a download that failed: with the cache, loading again resumes from the last byte), ABORTED,
 * QUOTA (the browser's storage is full: nothing of the file is kept).
 */
export interface LoadHubOptions {
  /** The repository, "owner/name". */
  hub: string;
  /** A branch, tag or commit (default 'main'); the files are read at the commit it names. */
  revision?: string;
  /** A GGUF file's name, or a quantization such as 'Q4_K_M' (any case). Without it: the safetensors folder, else the only GGUF file. */
  file?: string;
  /** The Hub's origin (a mirror, a test server). Default: HF_ENDPOINT in Node, else https://huggingface.co. */
  hubUrl?: string;
  /** An access token for gated or private repositories (default in Node: HF_TOKEN, else the token file of `hf auth login` — HF_TOKEN_PATH, HF_HOME/token, ~/.cache/huggingface/token — as huggingface_hub). Sent to the Hub's origin only; never stored. */
  token?: string;
  /**
   * Whether to cache the files (default true): in Node, huggingface_hub's folder (shared with
   * Python); in a browser, the origin's private file system (see {@link hubCache}). A second load
   * works with the network gone.
   */
  cache?: boolean;
  /** Node: the cache folder. Default: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub. */
  cacheDir?: string;
  /** Stops the load (fetches and the copy into the heap): ABORTED. */
  signal?: AbortSignal;
  /** Bytes so far and the total: while downloading (with the rate), then as the weights are copied. */
  onProgress?: (bytesDone: number, bytesTotal: number, info: HubProgress) => void;
  /** As {@link LoadGGUFOptions.memoryLimit}. */
  memoryLimit?: number;
  /** As {@link LoadGGUFOptions.chatTemplate}: over the repository's template. */
  chatTemplate?: string | null;
  /** As {@link LoadGGUFOptions.activations} (a GGUF file only). */
  activations?: 'exact' | 'int8';
  /** As {@link LoadPretrainedOptions.offHeap}. */
  offHeap?: boolean;
}

/** One revision of a repository held by the cache. */
export interface HubCacheEntry {
  readonly repo: string;
  readonly commit: string;
  /** The branches and tags the cache knows point at this commit. */
  readonly revisions: string[];
  readonly files: Array<{ path: string; size: number }>;
  /** Bytes of its files. */
  readonly size: number;
}

/** The cache of Hub files: Node's folder (`cacheDir` as loadPretrained's) or the browser's OPFS. */
export const hubCache: {
  list(options?: { cacheDir?: string }): Promise<HubCacheEntry[]>;
  /** Deletes the entry's snapshot and the files no other snapshot of the repository uses. */
  delete(entry: Pick<HubCacheEntry, 'repo' | 'commit'>, options?: { cacheDir?: string }): Promise<void>;
};

/** What a Hub load would download: {@link hubFiles}'s answer. */
export interface HubFiles {
  readonly repo: string;
  readonly revision: string;
  /** The commit the revision names: a load at it reads these files. */
  readonly commit: string;
  readonly kind: 'gguf' | 'safetensors';
  /** A GGUF file's parts, or the folder's files (a sharded folder: every .safetensors file at its root). */
  readonly files: Array<{ path: string; size: number }>;
  /** Bytes of the files. */
  readonly size: number;
}

/**
 * The files {@link loadPretrained} with these hub options would download, from the Hub's listing
 * alone (no byte of a file fetched): a page can state the size and ask before loading. Errors as a
 * Hub load's: NEEDS_TOKEN, NO_ACCESS, NOT_FOUND, NETWORK, ABORTED, INVALID_ARGUMENT.
 */
export function hubFiles(
  options: Pick<LoadHubOptions, 'hub' | 'revision' | 'file' | 'hubUrl' | 'token' | 'signal'>,
): Promise<HubFiles>;
