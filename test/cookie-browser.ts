/** A browser's cookie jar over fetch for the web application's pages: it follows nothing, so each step is checked. */
import { uniqueName } from './harness.js';
export class Browser {
  cookies = new Map<string, string>();
  constructor(
    readonly base: string,
    readonly ip = '127.0.0.1',
  ) {}
  async get(path: string) {
    return this.store(await fetch(this.base + path, { headers: this.headers(), redirect: 'manual' }));
  }
  async post(path: string, form: Record<string, string | string[]>, extra: Record<string, string> = {}) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const x of [v].flat()) body.append(k, x);
    return this.store(
      await fetch(this.base + path, {
        method: 'POST',
        body,
        headers: { ...this.headers(), ...extra },
        redirect: 'manual',
      }),
    );
  }
  /** The CSRF token of the last page read (bound to the session: it changes at sign-in). */
  token = '';
  csrf() {
    return this.token;
  }
  private headers() {
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }
  private async store(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      if (/Expires=Thu, 01 Jan 1970/.test(line) || value === '') this.cookies.delete(name!);
      else this.cookies.set(name!, value!);
    }
    const text = await res.text();
    const token = /<meta name="csrf-token" content="([^"]+)">/.exec(text)?.[1];
    if (token) this.token = token;
    return { status: res.status, location: res.headers.get('location'), text, headers: res.headers };
  }
}

/** A new account, signed up through the web form: its browser (signed in) and its username. */
export async function signedUpBrowser(base: string): Promise<{ b: Browser; username: string; status: number }> {
  const b = new Browser(base);
  await b.get('/signup');
  const username = uniqueName();
  const res = await b.post('/signup', {
    _csrf: b.csrf(),
    username,
    email: `${username}@example.test`,
    password: 'a long enough password',
  });
  return { b, username, status: res.status };
}
