/**
 * Webhook signing secrets: made here, shown once, and kept encrypted (AES-256-GCM under the
 * server's secret key), because signing needs the secret itself, so a hash will not do. A
 * database dump without the key reveals none of them.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const VERSION = 'v1';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string): string {
    const [version, data] = sealed.split('.');
    if (version !== VERSION || !data) throw new Error('not a sealed secret');
    const raw = Buffer.from(data, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12), { authTagLength: 16 });
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/**
 * The server's secret key: SECRET_KEY when set; otherwise the one kept in DATA_DIR/secret.key,
 * made on first start (readable by this user only). Instances sharing a PostgreSQL database must
 * share one key: set SECRET_KEY on each.
 */
export function loadSecretKey(configured: Buffer | undefined, dataDir: string): Buffer {
  if (configured) return configured;
  const file = join(dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process made it first: that one is the key.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const text = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} does not hold a secret key (64 hex characters)`);
  return Buffer.from(text, 'hex');
}
