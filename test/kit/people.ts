import type { App } from '../../src/app.js';
import type { Role } from '../../src/auth/actions.js';
import { randomToken } from '../../src/infra/ids.js';
import { call } from './http.js';

export interface Person {
  userId: string;
  customerId: string;
  email: string;
  password: string;
}

export const PASSWORD = 'correct horse battery staple';

/** The token of a set-password link (`…/console/set-password#token=…`). */
export const linkToken = (url: string) => new URL(url).hash.replace(/^#token=/, '');

/** A console user with a password, seeded as the admin CLI does (a unique email per call). */
export async function seedPerson(app: App, customerId: string, role: Role, password = PASSWORD): Promise<Person> {
  const email = `p-${randomToken(6)}@example.com`;
  const { user, link } = await app.services.users.createForOperator({ customerId, email, role });
  await app.services.users.setPassword(linkToken(link.url), password);
  return { userId: user.id, customerId, email, password };
}

interface GraphqlAnswer<T = any> {
  status: number;
  headers: Headers;
  data?: T;
  errors?: Array<{ message: string; extensions?: Record<string, any> }>;
}

/** A GraphQL request as the console makes it: the session cookie, and the CSRF header unless `csrf: false`. */
export async function asPerson<T = any>(
  baseUrl: string,
  cookie: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
  options: { csrf?: boolean } = {},
): Promise<GraphqlAnswer<T>> {
  const headers: Record<string, string> = {};
  if (cookie) headers.cookie = cookie;
  if (options.csrf !== false) headers['x-graphql-yoga-csrf'] = '1';
  const res = await call(baseUrl, 'POST', '/graphql', { body: { query, variables }, headers });
  return { status: res.status, headers: res.headers, ...res.body };
}

export const SIGN_IN = `mutation($input: SignInInput!) { signIn(input: $input) { secondFactorRequired user { id email role } } }`;

/** Signs in; `cookie` is the `bd_session=…` pair to send back, undefined when none was set. */
export async function signIn(baseUrl: string, input: { email: string; password: string; totpCode?: string; recoveryCode?: string }) {
  const res = await asPerson(baseUrl, undefined, SIGN_IN, { input });
  const setCookie = res.headers.get('set-cookie');
  return { ...res, setCookie, cookie: setCookie ? setCookie.split(';')[0] : undefined };
}

export async function signedIn(baseUrl: string, person: Person): Promise<string> {
  const res = await signIn(baseUrl, { email: person.email, password: person.password });
  if (!res.cookie) throw new Error(`sign-in failed: ${JSON.stringify(res.errors)}`);
  return res.cookie;
}
