/**
 * `{base_url}` and `{console_url}` of the spec: PUBLIC_BASE_URL when configured, else the address
 * the server is listening on (known only once it listens).
 */
export class PublicLinks {
  private listening: string | undefined;

  constructor(private readonly configured: string | undefined) {}

  setListeningUrl(url: string): void {
    this.listening = url;
  }

  base(): string {
    const base = this.configured ?? this.listening;
    if (!base) throw new Error('public base URL is not known before the server listens');
    return base;
  }

  /** A page of the operator console served by this service, e.g. `console('/device?code=…')`. */
  console(path: string): string {
    return `${this.base()}/console${path}`;
  }
}
