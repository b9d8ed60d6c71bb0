/**
 * Where image bytes live. Content-addressed: the only key is the SHA-256 of the bytes, so no
 * name or path from a client ever reaches the file system. Local disk now; the interface is
 * small so object storage can take its place.
 */
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

export interface MediaStorage {
  put(sha256: string, bytes: Buffer): Promise<void>;
  /** Removes the bytes (nothing when they are not there). */
  remove(sha256: string): Promise<void>;
  /** The bytes, or undefined when they are missing. */
  open(sha256: string): Promise<Readable | undefined>;
}

const SHA256 = /^[0-9a-f]{64}$/;

export class LocalDiskStorage implements MediaStorage {
  constructor(private readonly root: string) {}

  private path(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error('storage key must be a lowercase SHA-256');
    return join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  async put(sha256: string, bytes: Buffer): Promise<void> {
    const path = this.path(sha256);
    try {
      await stat(path);
      return; // same bytes already stored
    } catch {
      // not there yet
    }
    await mkdir(join(path, '..'), { recursive: true });
    // Write aside, then rename: a reader never sees half a file.
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, path);
  }

  async remove(sha256: string): Promise<void> {
    await rm(this.path(sha256), { force: true });
  }

  async open(sha256: string): Promise<Readable | undefined> {
    const path = this.path(sha256);
    try {
      await stat(path);
    } catch {
      return undefined;
    }
    return createReadStream(path);
  }
}
