import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The key-encryption key (KEK) that seals the secrets the database keeps (token signing keys,
 * webhook secrets), so that a dump of the database alone yields none of them. It comes from
 * `SECRETS_KEY`, or else from `DATA_DIR/secrets.key` (0600), which the server generates on its
 * first start. Either holds one or two keys: the first seals and opens, a second one (the
 * previous key after `secrets rotate`) only opens. docs/secrets.md has the operator's side.
 *
 * A sealed value is `version (1) | key id (8) | IV (12) | GCM tag (16) | ciphertext`: the key id
 * names the KEK that sealed it, so a wrong key is told apart from a damaged value, and the header
 * and a context naming the value's row are the associated data, so a box cannot be moved.
 */
export const SECRETS_KEY_FILE = 'secrets.key';
const VERSION = 1;
const ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + ID_BYTES;
const KEY_BYTES = 32;

interface Kek {
  id: Buffer;
  key: Buffer;
}

/** A sealed value that this process cannot open: the wrong key, or an altered value. */
export class SealedValueError extends Error {}

/** 8 bytes of SHA-256 over a purpose-named prefix and the key: names a key, reveals nothing. */
const kekOf = (key: Buffer): Kek => ({
  id: createHash('sha256').update('breach-detection/secrets-key-id/v1\0').update(key).digest().subarray(0, ID_BYTES),
  key,
});

export const keyFilePath = (dataDir: string) => join(dataDir, SECRETS_KEY_FILE);

export class SecretsKey {
  private constructor(
    private keys: Kek[],
    /** Where the keys come from, for error messages: `SECRETS_KEY`, or which key file. */
    readonly source: string,
    private readonly file: string | undefined,
  ) {}

  /**
   * `SECRETS_KEY` when set; else the key file, generated when `create` (the server) and missing.
   * The admin CLI never generates one: a key of its own would seal what the server cannot open.
   */
  static load(config: { secretsKeys: Buffer[]; dataDir: string }, options: { create: boolean }): SecretsKey {
    if (config.secretsKeys.length > 0) return new SecretsKey(config.secretsKeys.map(kekOf), 'SECRETS_KEY', undefined);
    const file = keyFilePath(config.dataDir);
    if (options.create) {
      createKeyFile(file);
      // A copy restored from a backup may have come back readable by others.
      chmodSync(file, 0o600);
    }
    return new SecretsKey(readKeyFile(file), `SECRETS_KEY (unset, so ${file})`, file);
  }

  /** The id of the key that seals, in hex (as error messages and `secrets rotate` show it). */
  get currentId(): string {
    return this.keys[0]!.id.toString('hex');
  }

  /** True when a key file, not `SECRETS_KEY`, holds the keys (then `secrets rotate` writes it). */
  get fromFile(): boolean {
    return this.file !== undefined;
  }

  seal(context: string, plaintext: string): Buffer {
    // Another process (`secrets rotate`) may have put a new key in the file: seal under it.
    this.reload();
    const { id, key } = this.keys[0]!;
    const header = Buffer.concat([Buffer.from([VERSION]), id]);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.concat([header, Buffer.from(context)]));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Throws SealedValueError naming `context` when no key here opens the value. */
  open(context: string, sealed: Uint8Array): string {
    const box = Buffer.from(sealed);
    if (box.length < HEADER_BYTES + IV_BYTES + TAG_BYTES || box[0] !== VERSION) {
      throw new SealedValueError(`${context} is not a sealed value`);
    }
    const id = box.subarray(1, HEADER_BYTES);
    let kek = this.find(id);
    if (!kek) {
      this.reload();
      kek = this.find(id);
    }
    if (!kek) {
      throw new SealedValueError(
        `${context} is sealed under secrets key ${id.toString('hex')}, which ${this.source} does not hold (it holds ${this.ids().join(', ')})`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', kek.key, box.subarray(HEADER_BYTES, HEADER_BYTES + IV_BYTES));
      decipher.setAAD(Buffer.concat([box.subarray(0, HEADER_BYTES), Buffer.from(context)]));
      decipher.setAuthTag(box.subarray(HEADER_BYTES + IV_BYTES, HEADER_BYTES + IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(box.subarray(HEADER_BYTES + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedValueError(`${context} does not open under secrets key ${id.toString('hex')}: the stored value was altered`);
    }
  }

  /** The id of the key a sealed value names, in hex. */
  static sealedUnder(sealed: Uint8Array): string {
    return Buffer.from(sealed).subarray(1, HEADER_BYTES).toString('hex');
  }

  /**
   * `secrets rotate` with a key file: a new key goes first and the current one stays second so
   * that what is sealed meanwhile, by any process, still opens. Returns the new key's id.
   */
  addNewKey(): string {
    if (!this.file) throw new Error('SECRETS_KEY is set: the new key comes from it, not from a file');
    this.reload();
    const next = kekOf(randomBytes(KEY_BYTES));
    writeKeyFile(this.file, [next, ...this.keys]);
    this.keys = [next, ...this.keys];
    return next.id.toString('hex');
  }

  /** After every value is re-sealed under the current key: keep it and the one before, no more. */
  dropOldKeys(): void {
    if (!this.file) return;
    this.keys = this.keys.slice(0, 2);
    writeKeyFile(this.file, this.keys);
  }

  private find(id: Buffer): Kek | undefined {
    return this.keys.find((k) => k.id.equals(id));
  }

  private ids(): string[] {
    return this.keys.map((k) => k.id.toString('hex'));
  }

  private reload(): void {
    if (this.file) this.keys = readKeyFile(this.file);
  }
}

function createKeyFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    // `wx`: a server starting at the same moment may have just written it; theirs stands.
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function readKeyFile(file: string): Kek[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(`no secrets key: SECRETS_KEY is unset and ${file} does not exist (use the server's SECRETS_KEY or DATA_DIR)`);
  }
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const keys = lines.map((line) => Buffer.from(line, 'base64'));
  if (keys.length === 0 || keys.some((k) => k.length !== KEY_BYTES)) {
    throw new Error(`${file} must hold one or more 32-byte base64 keys, one a line`);
  }
  return keys.map(kekOf);
}

/** Written beside and renamed over, so a reader sees the old file or the new one, never half. */
function writeKeyFile(file: string, keys: Kek[]): void {
  const next = `${file}.${process.pid}.tmp`;
  writeFileSync(next, keys.map((k) => `${k.key.toString('base64')}\n`).join(''), { mode: 0o600 });
  chmodSync(next, 0o600);
  renameSync(next, file);
}
