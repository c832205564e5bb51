/**
 * The person's session: `me`, `signIn`, `signOut`. Typed by hand against the shared sign-in
 * contract (issue #31, contract-30.md), not by graphql-codegen: these fields arrive in
 * schema/schema.graphql with the identity work, and codegen refuses documents the schema does not
 * have. Once they are in the schema these three move to a session.graphql beside this file.
 */
import type { Operation } from './api.js';

export interface Tenant {
  customerId: string;
  name: string | null;
}

export interface User {
  id: string;
  email: string;
  role: 'viewer' | 'analyst' | 'admin';
  customer: Tenant;
  /** Its own tenant and, for an MSP, its children. */
  tenants: Tenant[];
}

const typed = <TResult, TVariables>(text: string) => ({ toString: () => text }) as Operation<TResult, TVariables>;

const USER_FIELDS = 'id email role customer { customerId name } tenants { customerId name }';

export const MeQuery = typed<{ me: User | null }, Record<string, never>>(`query ConsoleMe { me { ${USER_FIELDS} } }`);

export interface SignInInput {
  email: string;
  password: string;
  totpCode?: string;
}

export const SignInMutation = typed<{ signIn: { user: User | null; secondFactorRequired: boolean } }, { input: SignInInput }>(
  `mutation ConsoleSignIn($input: SignInInput!) { signIn(input: $input) { secondFactorRequired user { ${USER_FIELDS} } } }`,
);

export const SignOutMutation = typed<{ signOut: boolean }, Record<string, never>>('mutation ConsoleSignOut { signOut }');
