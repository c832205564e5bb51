import { inspect } from 'node:util';

const SHOWN = '[redacted]';

/**
 * A credential held in the configuration: JSON (so the log lines), util.inspect and string
 * conversion show `[redacted]`, so printing the configuration or an object holding it cannot leak
 * it. `reveal()` gives the value to the one place that sends it.
 */
export class Redacted {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return SHOWN;
  }

  toString(): string {
    return SHOWN;
  }

  [inspect.custom](): string {
    return SHOWN;
  }
}
