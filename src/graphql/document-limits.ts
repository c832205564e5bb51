/**
 * Limits on a document's shape, checked where documents from outside enter (yoga and
 * graphql-ws; rest-compat runs only our own operations). Without them a short query could ask
 * for a result exponential in its length (tenant → deployments → parent → deployments ...) and an
 * unauthenticated one could run hundreds of mutations under aliases.
 * - depth: the operations under schema/operations reach 6 levels; introspection is exempt;
 * - aliases: theirs rename fields to the wire's names, 23 at most in one operation.
 * The one cycle that fans out, deployments inside deployments, is refused where it resolves
 * (tenancy.schema.ts).
 */
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export const MAX_DOCUMENT_DEPTH = 10;
export const MAX_DOCUMENT_ALIASES = 30;

export const documentLimitRules: ValidationRule[] = [
  maxDepthRule({ n: MAX_DOCUMENT_DEPTH, ignoreIntrospection: true, flattenFragments: true }) as unknown as ValidationRule,
  maxAliasesRule({ n: MAX_DOCUMENT_ALIASES }) as unknown as ValidationRule,
];

/** yoga: the limits beside graphql-js's own validation. */
export function limitDocuments(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      for (const rule of documentLimitRules) addValidationRule(rule);
    },
  };
}
